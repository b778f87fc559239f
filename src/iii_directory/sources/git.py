"""Shallow git clones for repo downloads (docs/rules/surfaces.md §9.2 steps 1–4).

Policy (bare error strings, no directory code):
* the skill name is one path segment of ASCII letters, digits, `-`, `_`, `.`, not starting with
  `.` and never `..` — it names both `skills/<skill>/` in the repo and the destination namespace;
* the repo URL must start with `https://`, `ssh://` or `git@`; it may not start with `-`
  (argument injection), contain `::` (transport tricks such as `ext::`) or use `file:`; so
  `http://`, `git://` and local paths are refused. Nothing — no setting, no environment
  variable — relaxes this. (Tests reach a loopback remote over real HTTPS with a test CA that git
  trusts through its own `GIT_SSL_CAINFO`; see `iii_directory.testing.gitremote`.)
* the branch is non-empty and cannot be mistaken for an option.

`shallow_clone(repo, branch, timeout_ms)` runs
`git -c protocol.ext.allow=never clone --depth 1 --branch <b> --quiet -- <repo> <tmp>` through
GitPython's process interface in a worker thread with `GIT_TERMINAL_PROMPT=0` and
`GIT_PROTOCOL_FROM_USER=0`, in a process group of its own that is killed whole after
`download_timeout_ms`, and always removes the temporary directory.

GitPython is imported on first use only (`load_gitpython`): it refuses to import on a host
without a `git` program, and such a host must still run everything but repo downloads. There a
download fails with `spawn git: the git program was not found …` before anything is written.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import stat
import subprocess
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio

from ..errors import DirectoryError

log = logging.getLogger(__name__)

ALLOWED_SCHEMES = ("https://", "ssh://", "git@")
_SKILL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
_KILL_GRACE_S = 10.0
"""How long past the deadline the handler waits for the killed git before giving up on it."""


def skill_name_problem(skill: str) -> str | None:
    """The bare reason a repo skill name is refused, or None (§9.2 step 1)."""
    if not skill:
        return "skill name must be non-empty"
    if "/" in skill or "\\" in skill:
        return f"skill name may not contain '/' or '\\': \"{skill}\""
    if ".." in skill:
        return f"skill name may not contain '..': \"{skill}\""
    if any(ch not in _SKILL_CHARS for ch in skill):
        return (
            "skill name may only contain ASCII letters, digits, '-', '_' and '.': "
            f'"{skill}"'
        )
    if skill.startswith("."):
        return f"skill name may not start with '.': \"{skill}\""
    return None


def repo_url_problem(repo: str) -> str | None:
    """The bare reason a repo URL is refused, or None (§9.2 step 2)."""
    if not repo:
        return "repo must be non-empty"
    if repo.startswith("-"):
        return f"repo may not start with '-' (argument injection): \"{repo}\""
    if "::" in repo:
        return (
            "repo may not contain '::' (transport helpers such as ext:: are refused): "
            f'"{repo}"'
        )
    if repo.lower().startswith("file:"):
        return f"repo may not be a file: URL: \"{repo}\""
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in repo):
        return f"repo may not contain whitespace or control characters: {repo!r}"
    if not repo.startswith(ALLOWED_SCHEMES):
        return f"repo must be an https://, ssh:// or git@ URL: \"{repo}\""
    return None


def branch_problem(branch: str) -> str | None:
    """The bare reason a branch is refused, or None (§9.2 step 3)."""
    if not branch:
        return "branch must be non-empty"
    if branch.startswith("-"):
        return f"branch may not start with '-': \"{branch}\""
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in branch):
        return f"branch may not contain whitespace or control characters: {branch!r}"
    return None


def clone_environment() -> dict[str, str]:
    """Extra environment for git: never prompt, no user-enabled protocols, ssh in batch mode."""
    env = {"GIT_TERMINAL_PROMPT": "0", "GIT_PROTOCOL_FROM_USER": "0"}
    if not os.environ.get("GIT_SSH_COMMAND") and not os.environ.get("GIT_SSH"):
        env["GIT_SSH_COMMAND"] = "ssh -o BatchMode=yes"
    return env


GIT_MISSING = (
    "spawn git: the `git` program was not found ({detail}); install git, or set "
    "GIT_PYTHON_GIT_EXECUTABLE to its full path, to download skills from a repository"
)


def load_gitpython() -> ModuleType:
    """GitPython, imported now; `DirectoryError` (`spawn git: …`) when it cannot start because
    no usable `git` program is found."""
    try:
        import git
    except ImportError as exc:
        first_line = (str(exc).strip().splitlines() or ["no usable git executable"])[0]
        raise DirectoryError.plain(GIT_MISSING.format(detail=first_line.rstrip(". "))) from None
    return git


def _git_executable(git: ModuleType) -> str:
    return str(getattr(git.Git, "GIT_PYTHON_GIT_EXECUTABLE", None) or "git")


def _run_clone(repo: str, branch: str, target: Path, timeout_ms: int) -> None:
    """Blocking clone (runs in a worker thread); raises DirectoryError with the bare texts.

    GitPython's process interface (`Git.execute(as_process=True)`) starts git: it resolves the
    program (`GIT_PYTHON_GIT_EXECUTABLE`), runs it in the C locale so its messages are stable,
    and reports a missing program as `GitCommandNotFound`. Its own timeout kill is not used: it
    finds git's children with `pgrep`/`ps`, which BusyBox hosts lack, so a killed clone could
    leave `git-remote-https` running. Instead git starts in a session of its own and the
    deadline kills that whole process group (`_kill_group`), helpers included, with no `ps`."""
    git = load_gitpython()
    command = [
        _git_executable(git), "-c", "protocol.ext.allow=never", "clone", "--depth", "1",
        "--branch", branch, "--quiet", "--", repo, str(target),
    ]
    try:
        handle = git.Git().execute(command, as_process=True, env=clone_environment(), start_new_session=True)
    except git.GitCommandNotFound as exc:
        raise DirectoryError.plain(GIT_MISSING.format(detail=exc.stderr.strip() or exc)) from None
    except OSError as exc:
        raise DirectoryError.plain(f"spawn git: {exc}") from None
    proc: subprocess.Popen[bytes] = handle.proc
    try:
        _out, err = proc.communicate(timeout=timeout_ms / 1000.0)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise DirectoryError.plain(f"git clone timed out after {timeout_ms} ms") from None
    finally:
        if proc.poll() is None:  # an interrupt or error above: never leave the group running
            _kill_group(proc)
    stderr = (err or b"").decode("utf-8", "replace")
    if proc.returncode != 0:
        raise DirectoryError.plain(
            f"git clone --branch {branch} exited with {proc.returncode}: {stderr.strip()}"
        )


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL git's process group (its pid: it leads its own session) and reap git. A helper
    that left the group and still holds the pipes is waited for `_KILL_GRACE_S` at most.
    Windows has no process groups to signal: there git alone is killed."""
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except ProcessLookupError:
        pass
    try:
        proc.communicate(timeout=_KILL_GRACE_S)
    except subprocess.TimeoutExpired:
        proc.wait()


def _remove_tree(path: Path) -> None:
    """Remove a clone, read-only pack files included; never raises."""

    def make_writable(func: Callable[..., Any], target: str, *_: Any) -> None:
        try:
            os.chmod(target, stat.S_IWRITE | stat.S_IREAD | stat.S_IEXEC)
            func(target)
        except OSError:
            pass

    try:
        shutil.rmtree(path, onerror=make_writable)
    except OSError:
        log.warning("could not remove temporary clone %s", path)


@asynccontextmanager
async def shallow_clone(repo: str, branch: str, timeout_ms: int) -> AsyncIterator[Path]:
    """Clone `repo` at `branch` (depth 1) into a fresh temporary directory and yield the
    checkout; the directory is removed on exit, also after a failure or a timeout.

    `repo` and `branch` must already satisfy `repo_url_problem` / `branch_problem`."""
    for problem in (repo_url_problem(repo), branch_problem(branch)):
        if problem:
            raise DirectoryError.plain(problem)
    load_gitpython()
    temp_root = Path(tempfile.mkdtemp(prefix="iii-directory-clone-"))
    target = temp_root / "repo"
    timeout_s = timeout_ms / 1000.0
    try:
        try:
            with anyio.fail_after(timeout_s + _KILL_GRACE_S):
                await anyio.to_thread.run_sync(
                    _run_clone, repo, branch, target, timeout_ms, abandon_on_cancel=True
                )
        except TimeoutError:
            raise DirectoryError.plain(f"git clone timed out after {timeout_ms} ms") from None
        yield target
    finally:
        await anyio.to_thread.run_sync(_remove_tree, temp_root)
