"""A host without a `git` program (issue 17, defect 1): the worker starts and serves everything
but repo downloads, which fail with the spec's bare `spawn git: …` error naming the missing
program and write nothing (surfaces.md §9.2 step 4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from iii_directory.directory import Directory
from iii_directory.errors import INVOCATION_FAILED, DirectoryError

pytestmark = [pytest.mark.timeout(120)]

REPO_REQUEST = {"repo": "https://example.invalid/skills.git", "skill": "frontend"}


def gitless_env(tmp_path: Path) -> dict[str, str]:
    """PATH is one folder holding only a `python` symlink; nothing tells GitPython where git is."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("III_", "GIT_")) and k not in ("PATH", "HOME")}
    env.update({"PATH": str(bin_dir), "HOME": str(home), "LOG_LEVEL": "error"})
    return env


def run_cli(tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "iii_directory", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=90)


def test_the_cli_runs_and_refuses_repo_downloads_without_git(tmp_path: Path) -> None:
    env = gitless_env(tmp_path)
    probe = subprocess.run([sys.executable, "-c", "import shutil; print(shutil.which('git'))"],
                           env=env, capture_output=True, text=True, timeout=30)
    assert probe.stdout.strip() == "None"

    listed = run_cli(tmp_path, env, "call", "directory::skills::list", "{}")
    assert listed.returncode == 0, listed.stderr
    assert "skills" in json.loads(listed.stdout)
    assert "Traceback" not in listed.stderr

    refused = run_cli(tmp_path, env, "call", "directory::skills::download_from_repo", json.dumps(REPO_REQUEST))
    assert refused.returncode == 1
    assert "Traceback" not in refused.stderr
    error = json.loads(refused.stderr.strip().splitlines()[-1])
    assert error["code"] == INVOCATION_FAILED
    assert error["message"].startswith("spawn git: ")
    assert "`git` program" in error["message"]
    assert not (tmp_path / "skills").exists(), "a refused download created the skills folder"


@pytest.mark.anyio
async def test_download_from_repo_names_the_missing_program(
        dl_directory: Directory, roots: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "git", None)  # `import git` raises ImportError, as without git
    with pytest.raises(DirectoryError) as caught:
        await dl_directory.invoke("directory::skills::download_from_repo", dict(REPO_REQUEST))
    assert caught.value.code == INVOCATION_FAILED
    assert caught.value.message.startswith("spawn git: ")
    assert "`git` program" in caught.value.message
    with pytest.raises(DirectoryError) as generic:
        await dl_directory.invoke("directory::skills::download", dict(REPO_REQUEST))
    assert generic.value.message == caught.value.message


def test_importing_the_package_does_not_import_gitpython() -> None:
    code = ("import sys, iii_directory.cli, iii_directory.worker, iii_directory.directory, "
            "iii_directory.functions, iii_directory.functions.downloads, iii_directory.sources.downloads, "
            "iii_directory.sources.git; print('git' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
