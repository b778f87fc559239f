"""Argument and path rules of downloads (surfaces.md §9.1, §9.2 steps 1–3, §9.3 step 6)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from iii_directory.errors import DirectoryError
from iii_directory.sources.bundle import PathProblem, safe_relative
from iii_directory.sources.downloads import (
    RegistrySource,
    RepoSource,
    validate_download_request,
)
from iii_directory.sources.git import branch_problem, repo_url_problem, skill_name_problem


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"repo": "https://x/y", "worker": "w"},
     "specify either {repo, skill, branch?} OR {worker, version?|tag?}, not both"),
    ({"branch": "dev", "tag": "latest"}, "not both"),
    ({}, "specify either {repo, skill, branch?} OR {worker, version?|tag?}"),
    ({"repo": "  ", "worker": " "}, "specify either {repo, skill, branch?} OR {worker, version?|tag?}"),
    ({"skill": "x"}, "repo is required when skill is set"),
    ({"branch": "dev"}, "repo is required when skill is set"),
    ({"repo": "https://x/y"}, "skill is required when repo is set"),
    ({"version": "1.0.0"}, "worker is required when version or tag is set"),
    ({"worker": "w", "version": "1.0.0", "tag": "latest"}, "specify either version OR tag, not both"),
])
def test_download_argument_errors(kwargs: dict[str, str], message: str) -> None:
    with pytest.raises(DirectoryError) as info:
        validate_download_request(**kwargs)
    assert info.value.code == "invocation_failed"
    assert message in info.value.message


def test_download_argument_defaults() -> None:
    assert validate_download_request(repo=" https://h/r ", skill=" s ") == RepoSource(
        "https://h/r", "s", "main")
    assert validate_download_request(repo="https://h/r", skill="s", branch=" ") == RepoSource(
        "https://h/r", "s", "main")
    assert validate_download_request(worker=" w ", tag=" ") == RegistrySource("w", None, None)
    assert validate_download_request(worker="w", version="1.2.3") == RegistrySource(
        "w", "1.2.3", None)


@pytest.mark.parametrize(("skill", "fragment"), [
    ("", "skill name must be non-empty"),
    ("a/b", "skill name may not contain '/'"),
    ("a\\b", "skill name may not contain '/'"),
    ("..", "skill name may not contain '..'"),
    ("a..b", "skill name may not contain '..'"),
    ("a b", "skill name may only contain"),
    ("ünï", "skill name may only contain"),
    (".hidden", "skill name may not start with '.'"),
])
def test_skill_name_rules(skill: str, fragment: str) -> None:
    problem = skill_name_problem(skill)
    assert problem is not None and problem.startswith("skill name ") and fragment in problem


@pytest.mark.parametrize("skill", ["frontend-design", "A_b.c", "x1"])
def test_good_skill_names(skill: str) -> None:
    assert skill_name_problem(skill) is None


@pytest.mark.parametrize(("repo", "fragment"), [
    ("", "repo must be non-empty"),
    ("--upload-pack=touch /tmp/pwned", "may not start with '-'"),
    ("ext::sh -c touch% /tmp/pwned", "'::'"),
    ("https://host/a::b", "'::'"),
    ("file:///etc", "file: URL"),
    ("FILE:///etc", "file: URL"),
    ("http://example.com/r.git", "must be an https://, ssh:// or git@ URL"),
    ("git://example.com/r.git", "must be an https://, ssh:// or git@ URL"),
    ("/srv/repo.git", "must be an https://, ssh:// or git@ URL"),
    ("https://example.com/r.git\n--x", "whitespace or control characters"),
])
def test_repo_url_policy(repo: str, fragment: str) -> None:
    problem = repo_url_problem(repo)
    assert problem is not None and fragment in problem


@pytest.mark.parametrize("repo", ["https://github.com/o/r", "ssh://git@github.com/o/r.git",
                                  "git@github.com:o/r.git"])
def test_repo_url_policy_accepts(repo: str) -> None:
    assert repo_url_problem(repo) is None


def test_branch_rules() -> None:
    assert branch_problem("") == "branch must be non-empty"
    assert branch_problem("--upload-pack=x") is not None
    assert branch_problem("a b") is not None
    assert branch_problem("feature/x") is None


@pytest.mark.parametrize(("path", "reason"), [
    ("", "path must be non-empty"),
    ("/etc/passwd", 'path may not be absolute: "/etc/passwd"'),
    ("\\windows\\x", "path may not be absolute"),
    ("../x.md", "path may not contain '..': \"../x.md\""),
    ("a/../../x.md", "path may not contain '..'"),
    ("a\\..\\x.md", "path may not contain '..'"),
    ("C:/x.md", 'path may not contain a prefix or root: "C:/x.md"'),
    ("c:x.md", "path may not contain a prefix or root"),
    ("./.", 'path resolved to empty: "./."'),
    ("a/\0b", "NUL"),
    ("a/b\nc.md", "control characters"),
])
def test_safe_relative_refuses(path: str, reason: str) -> None:
    with pytest.raises(PathProblem) as info:
        safe_relative(path)
    assert reason in str(info.value)


@pytest.mark.parametrize(("path", "expected"), [
    ("index.md", "index.md"),
    ("./a/./b.md", "a/b.md"),
    ("a//b.md", "a/b.md"),
    ("a\\b.md", "a/b.md"),
    ("dots..in..name.md", "dots..in..name.md"),
])
def test_safe_relative_normalises(path: str, expected: str) -> None:
    assert safe_relative(path) == expected


@given(st.lists(st.sampled_from(["a", "b", ".", "..", "", "x.md", "\\", "/"]), max_size=8))
def test_safe_relative_never_escapes(parts: list[str]) -> None:
    path = "/".join(parts)
    try:
        result = safe_relative(path)
    except PathProblem:
        return
    segments = result.split("/")
    assert ".." not in segments and "" not in segments and "." not in segments
    assert not result.startswith("/")
