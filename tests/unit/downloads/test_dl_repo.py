"""Repo downloads through the function table against real repositories served over HTTPS on
loopback (surfaces.md §9.2; §15.2 repo download scenarios)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import git
import pytest

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.errors import DirectoryError
from iii_directory.port import StandaloneEngine
from iii_directory.testing.gitremote import GitRemote

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

Tree = Callable[[Path], dict[str, str]]
_counter = iter(range(10_000))


def repo_name() -> str:
    return f"repo{next(_counter)}-{time.monotonic_ns()}"


async def test_downloads_all_files_of_the_skill_folder(
        dl_directory: Directory, dl_engine: StandaloneEngine, remote: GitRemote,
        roots: dict[str, Path], clone_tmp: Path, tree: Tree) -> None:
    url = remote.create(repo_name(), {
        "skills/frontend-design/index.md": "# Frontend\n",
        "skills/frontend-design/components.md": "components\n",
        "skills/frontend-design/layouts/grid.md": "grid\n",
        "skills/other/index.md": "not this one\n",
        "README.md": "top level\n",
    })
    out = await dl_directory.invoke("directory::skills::download",
                                    {"repo": url, "skill": "frontend-design"})
    assert out["namespace"] == "frontend-design"
    assert sorted(out["skills_written"]) == ["components.md", "index.md", "layouts/grid.md"]
    assert out["system_prompts_written"] == [] and out["agents_written"] == []
    assert out["agents_skipped"] == []
    assert out["source"] == {"kind": "repo", "repo": url, "skill": "frontend-design",
                             "branch": "main"}
    assert tree(roots["skills"]) == {
        "frontend-design/index.md": "# Frontend\n",
        "frontend-design/components.md": "components\n",
        "frontend-design/layouts/grid.md": "grid\n",
    }
    assert dl_engine.emitted == [("directory::skills::on-change", {
        "op": "download", "namespace": "frontend-design", "source": "repo"})]
    assert list(clone_tmp.iterdir()) == []  # the temporary clone is gone


async def test_prompts_and_agents_are_ignored_system_prompts_counted(
        dl_directory: Directory, dl_engine: StandaloneEngine, remote: GitRemote,
        roots: dict[str, Path], tree: Tree) -> None:
    url = remote.create(repo_name(), {
        "skills/foo/index.md": "index\n",
        "skills/foo/prompts/p.md": "ignored\n",
        "skills/foo/agents/bot.md": "---\nname: Bot\n---\n",
        "skills/foo/system-prompts/voice.md": "---\ndescription: v\n---\nBody\n",
        "skills/foo/.github/workflow.yml": "hidden\n",
    })
    out = await dl_directory.invoke("directory::skills::download_from_repo",
                                    {"repo": url, "skill": "foo"})
    assert out["skills_written"] == ["index.md"]
    assert out["system_prompts_written"] == ["voice"]
    assert out["agents_written"] == []
    assert sorted(tree(roots["skills"])) == ["foo/index.md", "foo/system-prompts/voice.md"]
    assert not roots["agents"].exists()
    assert [event for event, _ in dl_engine.emitted] == [
        "directory::skills::on-change", "directory::system-prompts::on-change"]


async def test_repull_overwrites_and_keeps_siblings(dl_directory: Directory, remote: GitRemote,
                                                    roots: dict[str, Path]) -> None:
    name = repo_name()
    url = remote.create(name, {"skills/foo/index.md": "v1\n", "skills/foo/a.md": "a\n"})
    await dl_directory.invoke("directory::skills::download_from_repo", {"repo": url, "skill": "foo"})
    (roots["skills"] / "foo" / "local.md").write_text("mine\n")
    remote.commit(name, {"skills/foo/index.md": "v2\n"}, remove=["skills/foo/a.md"])
    out = await dl_directory.invoke("directory::skills::download_from_repo",
                                    {"repo": url, "skill": "foo"})
    assert out["skills_written"] == ["index.md"]
    assert (roots["skills"] / "foo" / "index.md").read_text() == "v2\n"
    assert (roots["skills"] / "foo" / "a.md").read_text() == "a\n"  # not deleted
    assert (roots["skills"] / "foo" / "local.md").read_text() == "mine\n"


async def test_branch_is_honoured(dl_directory: Directory, remote: GitRemote,
                                  roots: dict[str, Path]) -> None:
    name = repo_name()
    url = remote.create(name, {"skills/foo/index.md": "main\n"})
    remote.commit(name, {"skills/foo/index.md": "dev\n"}, branch="dev")
    out = await dl_directory.invoke("directory::skills::download",
                                    {"repo": url, "skill": "foo", "branch": "dev"})
    assert out["source"]["branch"] == "dev"
    assert (roots["skills"] / "foo" / "index.md").read_text() == "dev\n"


async def test_skill_md_folder(dl_directory: Directory, remote: GitRemote,
                               roots: dict[str, Path]) -> None:
    url = remote.create(repo_name(), {"skills/tool/SKILL.md": "# Tool\n\nDoes things.\n"})
    out = await dl_directory.invoke("directory::skills::download_from_repo",
                                    {"repo": url, "skill": "tool"})
    assert out["skills_written"] == ["SKILL.md"]
    assert (roots["skills"] / "tool" / "SKILL.md").is_file()


async def test_missing_folder_and_bad_branch(dl_directory: Directory, remote: GitRemote,
                                             roots: dict[str, Path], clone_tmp: Path) -> None:
    url = remote.create(repo_name(), {"skills/foo/index.md": "x\n", "skills/file.md": "f\n"})
    with pytest.raises(DirectoryError) as info:
        await dl_directory.invoke("directory::skills::download",
                                  {"repo": url, "skill": "missing-skill"})
    assert info.value.code == "invocation_failed"
    assert info.value.message.startswith(
        f'repo "{url}" has no folder skills/missing-skill/ (cloned to ')
    with pytest.raises(DirectoryError) as info:
        await dl_directory.invoke("directory::skills::download",
                                  {"repo": url, "skill": "file.md"})
    assert info.value.message == f'skills/file.md in "{url}" is not a directory'
    with pytest.raises(DirectoryError) as info:
        await dl_directory.invoke("directory::skills::download",
                                  {"repo": url, "skill": "foo", "branch": "nope"})
    assert info.value.message.startswith("git clone --branch nope exited with 128: ")
    assert list(clone_tmp.iterdir()) == []
    assert not any(roots["skills"].iterdir())


async def test_symlink_out_of_the_clone_writes_nothing(dl_directory: Directory, remote: GitRemote,
                                                       roots: dict[str, Path],
                                                       clone_tmp: Path) -> None:
    url = remote.create(repo_name(), {"skills/foo/index.md": "x\n"},
                        symlinks={"skills/foo/evil.md": "/etc/passwd",
                                  "skills/foo/inside.md": "index.md"})
    with pytest.raises(DirectoryError) as info:
        await dl_directory.invoke("directory::skills::download_from_repo",
                                  {"repo": url, "skill": "foo"})
    assert "evil.md is a symbolic link pointing outside the skill folder" in info.value.message
    assert not (roots["skills"] / "foo").exists()
    assert list(clone_tmp.iterdir()) == []


async def test_symlink_inside_is_skipped(dl_directory: Directory, remote: GitRemote,
                                         roots: dict[str, Path]) -> None:
    url = remote.create(repo_name(), {"skills/foo/index.md": "x\n"},
                        symlinks={"skills/foo/alias.md": "index.md"})
    out = await dl_directory.invoke("directory::skills::download_from_repo",
                                    {"repo": url, "skill": "foo"})
    assert out["skills_written"] == ["index.md"]
    assert not (roots["skills"] / "foo" / "alias.md").exists()


async def test_oversized_file_writes_nothing(dl_directory: Directory, remote: GitRemote,
                                             roots: dict[str, Path]) -> None:
    url = remote.create(repo_name(), {"skills/foo/index.md": "x\n",
                                      "skills/foo/huge.md": "y" * 300_000})
    with pytest.raises(DirectoryError, match="huge.md is too large"):
        await dl_directory.invoke("directory::skills::download_from_repo",
                                  {"repo": url, "skill": "foo"})
    assert not (roots["skills"] / "foo").exists()


async def test_too_many_files_writes_nothing(dl_directory: Directory, remote: GitRemote,
                                             roots: dict[str, Path],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from iii_directory.sources import bundle

    monkeypatch.setattr(bundle, "MAX_FILES", 5)
    url = remote.create(repo_name(), {f"skills/foo/f{i}.md": "x\n" for i in range(6)})
    with pytest.raises(DirectoryError, match="too many files"):
        await dl_directory.invoke("directory::skills::download_from_repo",
                                  {"repo": url, "skill": "foo"})
    assert not (roots["skills"] / "foo").exists()


async def test_hanging_remote_times_out_and_cleans_up(dl_directory: Directory,
                                                      dl_settings: Settings, remote: GitRemote,
                                                      roots: dict[str, Path],
                                                      clone_tmp: Path) -> None:
    url = remote.create(repo_name(), {"skills/foo/index.md": "x\n"})
    remote.fail("hang")
    dl_directory.apply_settings(dl_settings.model_copy(update={"download_timeout_ms": 800}))
    started = time.monotonic()
    with pytest.raises(DirectoryError) as info:
        await dl_directory.invoke("directory::skills::download_from_repo",
                                  {"repo": url, "skill": "foo"})
    assert info.value.message == "git clone timed out after 800 ms"
    assert time.monotonic() - started < 8.0
    assert list(clone_tmp.iterdir()) == []
    assert not (roots["skills"] / "foo").exists()


async def test_failing_remote(dl_directory: Directory, remote: GitRemote) -> None:
    url = remote.create(repo_name(), {"skills/foo/index.md": "x\n"})
    remote.fail(500)
    with pytest.raises(DirectoryError) as info:
        await dl_directory.invoke("directory::skills::download_from_repo",
                                  {"repo": url, "skill": "foo"})
    assert info.value.message.startswith("git clone --branch main exited with 128: ")


@pytest.mark.parametrize(("repo", "fragment"), [
    ("file:///etc", "file: URL"),
    ("ext::sh -c touch% /tmp/pwned", "'::'"),
    ("--upload-pack=touch /tmp/pwned", "may not start with '-'"),
    ("http://127.0.0.1/r.git", "must be an https://, ssh:// or git@ URL"),
])
async def test_dangerous_urls_never_reach_git(dl_directory: Directory, repo: str, fragment: str,
                                              clone_tmp: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    def no_git(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("git must not run")

    monkeypatch.setattr(git.Git, "execute", no_git)
    with pytest.raises(DirectoryError) as info:
        await dl_directory.invoke("directory::skills::download", {"repo": repo, "skill": "foo"})
    assert fragment in info.value.message
    assert list(clone_tmp.iterdir()) == []


@pytest.mark.parametrize("skill", ["../etc", "a/b", ".git", "x y"])
async def test_traversal_skill_names(dl_directory: Directory, skill: str) -> None:
    with pytest.raises(DirectoryError) as info:
        await dl_directory.invoke("directory::skills::download_from_repo",
                                  {"repo": "https://example.invalid/r.git", "skill": skill})
    assert info.value.message.startswith("skill name ")


async def test_missing_git_binary(dl_directory: Directory, remote: GitRemote,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    url = remote.create(repo_name(), {"skills/foo/index.md": "x\n"})
    monkeypatch.setattr(git.Git, "GIT_PYTHON_GIT_EXECUTABLE", "/nonexistent/git")
    with pytest.raises(DirectoryError) as info:
        await dl_directory.invoke("directory::skills::download_from_repo",
                                  {"repo": url, "skill": "foo"})
    assert info.value.message.startswith("spawn git: ")


async def test_without_the_test_ca_git_refuses_the_loopback_certificate(
        dl_directory: Directory, remote: GitRemote, monkeypatch: pytest.MonkeyPatch) -> None:
    url = remote.create(repo_name(), {"skills/foo/index.md": "x\n"})
    monkeypatch.delenv("GIT_SSL_CAINFO")
    with pytest.raises(DirectoryError) as info:
        await dl_directory.invoke("directory::skills::download_from_repo",
                                  {"repo": url, "skill": "foo"})
    assert info.value.message.startswith("git clone --branch main exited with 128")
