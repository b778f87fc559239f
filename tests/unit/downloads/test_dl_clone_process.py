"""The git clone owns its processes (issue 36, item 3): a clone killed at its deadline takes
every process it started with it — `git` and the `git-remote-https` helper that talks to the
remote — even on a host with no `ps` or `pgrep` (BusyBox), because the clone runs in a process
group of its own that the deadline kills whole. The deadline is injected (`download_timeout_ms`)
and the remote is a loopback HTTPS server that accepts and never answers."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import anyio
import pytest

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.errors import DirectoryError
from iii_directory.testing.gitremote import GitRemote

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def processes_naming(fragment: str) -> list[tuple[int, str]]:
    """Live (non-zombie) processes whose command line contains `fragment`, from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if fragment in cmdline and state != "Z":
            found.append((int(entry.name), cmdline.strip()))
    return found


@pytest.fixture
def no_ps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PATH holds only `git`: no `ps`, no `pgrep`, as on a BusyBox host whose tools lack the
    options GitPython's own timeout kill relies on."""
    real_git = shutil.which("git")
    assert real_git
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(real_git)
    monkeypatch.setenv("PATH", str(bin_dir))


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads processes from /proc")
async def test_a_timed_out_clone_leaves_no_process_behind(
        dl_directory: Directory, dl_settings: Settings, remote: GitRemote, clone_tmp: Path, no_ps: None) -> None:
    name = f"slow-{os.getpid()}-{time.monotonic_ns()}"
    url = remote.create(name, {"skills/foo/index.md": "x\n"})
    remote.fail("hang")
    dl_directory.apply_settings(dl_settings.model_copy(update={"download_timeout_ms": 3000}))
    seen: list[list[tuple[int, str]]] = []
    outcome: list[BaseException] = []

    async def clone() -> None:
        try:
            await dl_directory.invoke("directory::skills::download_from_repo", {"repo": url, "skill": "foo"})
        except DirectoryError as exc:
            outcome.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(clone)
        with anyio.fail_after(20):
            while not outcome:
                running = processes_naming(name)
                if any("remote-https" in cmd for _pid, cmd in running):
                    seen.append(running)
                await anyio.sleep(0.02)
    assert seen, "the helper talking to the hanging remote was never seen running"
    assert isinstance(outcome[0], DirectoryError)
    assert outcome[0].message == "git clone timed out after 3000 ms"
    assert processes_naming(name) == [], "a killed clone left processes behind"
    assert list(clone_tmp.iterdir()) == []
