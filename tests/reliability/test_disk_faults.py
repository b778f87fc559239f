"""The disk is full or read-only (issue 11). An `OSError(ENOSPC / EROFS / EDQUOT / EIO)` injected
at the write seam (`atomic.py`) — and, where this machine allows mounting, a real full
tmpfs and a real read-only bind mount — gives every write a coded error, leaves the old file
intact and no staging file behind; a kit apply interrupted this way leaves `kits.lock` untouched
and converges when retried."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from iii_directory.config import Settings
from iii_directory import atomic
from iii_directory.directory import Directory
from iii_directory.errors import DirectoryError

pytestmark = [pytest.mark.timeout(120)]

SKILL = "# Doc\n\nOld body.\n"
PROMPT = "---\ndescription: Old prompt.\n---\nOld prompt body.\n"
AGENT = "---\nname: Helper\n---\nYou help.\n"


class FaultyOs:
    """`os` for the atomic-write module, failing chosen calls with an errno: every call of a
    name in `faults` from the `after`-th one (0-based, counted across the faulted names) on."""

    def __init__(self, faults: dict[str, int], after: int = 0) -> None:
        self.faults, self.after, self.calls = faults, after, 0

    def __getattr__(self, name: str) -> Any:
        real = getattr(os, name)
        if name not in self.faults:
            return real

        def faulty(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if self.calls > self.after:
                code = self.faults[name]
                raise OSError(code, os.strerror(code))
            return real(*args, **kwargs)
        return faulty


def seed(roots: dict[str, Path]) -> dict[Path, str]:
    files = {
        roots["skills"] / "ns" / "doc.md": SKILL,
        roots["skills"] / "system-prompts" / "writer.md": PROMPT,
        roots["agents"] / "helper.md": AGENT,
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return files


EDITS: list[tuple[str, dict[str, Any]]] = [
    ("directory::skills::update", {"id": "ns/doc", "content": "# Doc\n\nNew body.\n"}),
    ("directory::skills::create", {"id": "ns/fresh", "content": "# Fresh\n\nBody.\n"}),
    ("directory::system-prompts::update", {"name": "writer", "content": "---\ndescription: New.\n---\nNew.\n"}),
    ("directory::system-prompts::create", {"name": "fresh", "content": "---\ndescription: F.\n---\nFresh.\n"}),
    ("directory::agents::update", {"id": "helper", "content": "---\nname: Helper 2\n---\nYou help more.\n"}),
    ("directory::agents::create", {"id": "fresh", "content": "---\nname: Fresh\n---\nNew.\n"}),
    ("directory::agents::functions::add", {"id": "helper", "functions": ["mailer::send"]}),
    ("directory::agents::update", {"id": "default", "content": "---\nname: Mine\n---\nCopy-on-write.\n"}),
]
FAULTS = [
    ({"write": errno.ENOSPC}, "No space left on device"),
    ({"fsync": errno.ENOSPC}, "No space left on device"),
    ({"write": errno.EDQUOT}, "Disk quota exceeded"),
    ({"open": errno.EROFS}, "Read-only file system"),
    ({"replace": errno.EROFS}, "Read-only file system"),
    ({"fsync": errno.EIO}, "Input/output error"),
]


def staged(roots: dict[str, Path]) -> list[Path]:
    return [p for key in ("skills", "agents") for p in roots[key].rglob("*.tmp")]


@pytest.mark.parametrize(("faults", "text"), FAULTS, ids=[next(iter(f)) + "-" + t.split()[0] for f, t in FAULTS])
@pytest.mark.parametrize(("function_id", "data"), EDITS, ids=[f"{f.split('::', 1)[1]}:{d.get('id') or d.get('name')}"
                                                             for f, d in EDITS])
async def test_injected_disk_fault_gives_a_coded_error_and_keeps_the_old_file(
        directory: Directory, roots: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
        function_id: str, data: dict[str, Any], faults: dict[str, int], text: str) -> None:
    files = seed(roots)
    before = {p: p.read_bytes() for p in [*roots["skills"].rglob("*"), *roots["agents"].rglob("*")] if p.is_file()}
    monkeypatch.setattr(atomic, "os", FaultyOs(faults))
    with pytest.raises(DirectoryError) as caught:
        await directory.invoke(function_id, data)
    monkeypatch.setattr(atomic, "os", os)  # the disk recovered
    assert caught.value.code == "invocation_failed"
    assert caught.value.message.startswith(("write ", "rename ")) and text in caught.value.message
    after = {p: p.read_bytes() for p in [*roots["skills"].rglob("*"), *roots["agents"].rglob("*")] if p.is_file()}
    assert after == before, "a failed write changed the tree"
    assert all(p.read_text() == t for p, t in files.items())
    assert staged(roots) == []
    # the disk recovered: the same request now lands
    assert isinstance(await directory.invoke(function_id, data), dict)


async def test_kit_apply_interrupted_by_a_full_disk_keeps_the_lock_and_converges(
        settings: Settings, roots: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from kitfake import FakeComposeEngine, KitCatalog, team_v1

    from iii_directory.kits.lock import load_lock
    from iii_directory.testing.registry import MockRegistry

    monkeypatch.delenv("CI", raising=False)
    with MockRegistry() as registry:
        KitCatalog(registry).publish("acme/team", team_v1())
        project = roots["project"]
        (project / "worker-compose.yaml").write_text('containers:\n  kanban:\n    version: "^1.4"\n')
        (project / "worker-compose.lock").write_text("containers:\n  kanban:\n    resolved:\n      version: 1.6.1\n")
        directory = Directory(settings=settings.model_copy(update={"registry_url": registry.url}),
                              engine=FakeComposeEngine())
        planned = await directory.invoke("directory::download-kit", {"kit": "acme/team@^1"})
        plan_id = planned["plan"]["plan_id"]
        faulty = FaultyOs({"write": errno.ENOSPC}, after=2)  # the third file write fails
        monkeypatch.setattr(atomic, "os", faulty)
        with pytest.raises(DirectoryError) as caught:
            await directory.invoke("directory::kits::apply", {"plan_id": plan_id})
        monkeypatch.setattr(atomic, "os", os)
        assert caught.value.code == "invocation_failed" and "No space left on device" in caught.value.message
        assert not (project / "kits.lock").exists(), "the lock was written before its files"
        assert staged(roots) == []
        for path in [*roots["skills"].rglob("*.md"), *roots["agents"].rglob("*.md")]:
            assert path.read_text().strip(), f"{path} is empty"
        retried = await directory.invoke("directory::kits::apply", {"plan_id": plan_id})
        if retried["status"] == "replanned":  # journal lost the entries: a fresh plan, applied
            retried = await directory.invoke("directory::kits::apply", {"plan_id": retried["plan"]["plan_id"]})
        assert retried["status"] == "applied"
        assert load_lock(project).get("acme/team") is not None


# ----------------------------------------------------------------- real filesystems


def _mount(*args: str) -> bool:
    if sys.platform != "linux" or os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


def _umount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], capture_output=True)


@pytest.fixture
def small_tmpfs(roots: dict[str, Path]) -> Iterator[Path]:
    target = roots["skills"]
    target.mkdir(parents=True, exist_ok=True)
    if not _mount("-t", "tmpfs", "-o", "size=64k", "tmpfs", str(target)):
        pytest.skip("cannot mount a tmpfs here (needs root and mount rights)")
    try:
        yield target
    finally:
        _umount(target)


async def test_a_really_full_disk_keeps_the_old_file(directory: Directory, small_tmpfs: Path) -> None:
    doc = small_tmpfs / "ns" / "doc.md"
    doc.parent.mkdir()
    doc.write_text(SKILL)
    big = "# Doc\n\n" + "word " * 40_000 + "\n"  # ~200 KB: under the 256 KiB cap, over the 64 KiB disk
    with pytest.raises(DirectoryError) as caught:
        await directory.invoke("directory::skills::update", {"id": "ns/doc", "content": big})
    assert caught.value.code == "invocation_failed" and "No space left on device" in caught.value.message
    assert doc.read_text() == SKILL
    assert not list(small_tmpfs.rglob("*.tmp"))
    assert (await directory.invoke("directory::skills::update", {"id": "ns/doc", "content": "# Doc\n\nSmall.\n"}))


async def test_a_read_only_mount_refuses_writes_clearly(directory: Directory, roots: dict[str, Path]) -> None:
    seed(roots)
    target = roots["skills"]
    if not _mount("--bind", str(target), str(target)):
        pytest.skip("cannot bind-mount here (needs root and mount rights)")
    try:
        if not _mount("-o", "remount,bind,ro", str(target)):
            pytest.skip("cannot remount read-only here")
        with pytest.raises(DirectoryError) as caught:
            await directory.invoke("directory::skills::update", {"id": "ns/doc", "content": "# Doc\n\nNew.\n"})
        assert caught.value.code == "invocation_failed" and "Read-only file system" in caught.value.message
        with pytest.raises(DirectoryError) as created:
            await directory.invoke("directory::skills::create", {"id": "other/new", "content": "# New\n\nBody.\n"})
        assert "Read-only file system" in created.value.message
        assert (target / "ns" / "doc.md").read_text() == SKILL
        got = await directory.invoke("directory::skills::get", {"id": "ns/doc"})
        assert got["body"].strip().endswith("Old body.")
    finally:
        _umount(target)
