"""Kit references and Cargo-style semver (kits.md §1.1–§1.3)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from iii_directory.kits.ref import (
    RefError,
    VersionRef,
    bump_kind,
    is_major_jump,
    max_satisfying,
    parse_kit_id,
    parse_kit_ref,
    parse_requirement,
    parse_version,
    requested_for,
    satisfies,
)


@pytest.mark.parametrize(
    ("raw", "kind", "value"),
    [
        ("acme/kanban@1.3.0", "exact", "1.3.0"),
        ("acme/kanban@v1.3.0", "exact", "1.3.0"),
        ("acme/kanban@vv1.3.0-rc.1+b7", "exact", "1.3.0-rc.1+b7"),
        ("acme/kanban@next", "tag", "next"),
        ("acme/kanban@latest", "tag", "latest"),
        ("acme/kanban@^1.3", "range", "^1.3"),
        ("acme/kanban@1.3", "range", "1.3"),
        ("acme/kanban@>=1.2, <2", "range", ">=1.2, <2"),
        ("acme/kanban@*", "range", "*"),
        ("  acme/kanban@ ~1.2  ", "range", "~1.2"),
    ],
)
def test_reference_kinds(raw: str, kind: str, value: str) -> None:
    ref = parse_kit_ref(raw)
    assert ref.kit == "acme/kanban"
    assert ref.version == VersionRef(kind, value)  # type: ignore[arg-type]


def test_reference_without_version() -> None:
    ref = parse_kit_ref("acme/kanban-team")
    assert (ref.handle, ref.name, ref.version) == ("acme", "kanban-team", None)


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ("kanban-team", '"kanban-team" is not <author>/<kit>'),
        ("Acme/kanban", "^[a-z0-9][a-z0-9-]{0,38}$"),
        ("acme/kanban_team", "^[a-z0-9][a-z0-9-]{0,63}$"),
        ("acme/kanban@", "the version after '@' is empty"),
        ("acme/kanban@^x.y", '"^x.y" is neither a version nor a valid range'),
        ("a/b/c", "^[a-z0-9][a-z0-9-]{0,63}$"),
        ("acme/kanban@what?", '"what?" is not a version, a release tag or a range'),
        ("acme/kanban@>=1 || <3", "neither a version nor a valid range"),
        ("acme/kanban@1.0.0 - 2.0.0", "neither a version nor a valid range"),
    ],
)
def test_reference_rejections(raw: str, needle: str) -> None:
    with pytest.raises(RefError) as caught:
        parse_kit_ref(raw)
    assert needle in str(caught.value)


def test_kit_id_refuses_a_version() -> None:
    assert parse_kit_id("acme/team").kit == "acme/team"
    with pytest.raises(RefError, match='"acme/team@1.0.0" must not carry a version here'):
        parse_kit_id("acme/team@1.0.0")


@pytest.mark.parametrize(
    ("requirement", "inside", "outside"),
    [
        ("^1.2.3", ["1.2.3", "1.9.0"], ["1.2.2", "2.0.0"]),
        ("^0.2.3", ["0.2.3", "0.2.9"], ["0.3.0", "0.2.2"]),
        ("^0.0.3", ["0.0.3"], ["0.0.4", "0.0.2"]),
        ("^1.2", ["1.2.0", "1.99.0"], ["1.1.9", "2.0.0"]),
        ("^1", ["1.0.0", "1.9.9"], ["0.9.0", "2.0.0"]),
        ("^0", ["0.0.0", "0.9.9"], ["1.0.0"]),
        ("~1.2.3", ["1.2.3", "1.2.9"], ["1.3.0", "1.2.2"]),
        ("~1.2", ["1.2.0", "1.2.9"], ["1.3.0"]),
        ("~1", ["1.0.0", "1.9.0"], ["2.0.0"]),
        ("1.3", ["1.3.0", "1.9.0"], ["1.2.9", "2.0.0"]),
        ("1.3.0", ["1.3.0", "1.4.0"], ["2.0.0"]),
        ("=1.3.0", ["1.3.0"], ["1.3.1"]),
        (">=1.2, <2", ["1.2.0", "1.9.9"], ["1.1.9", "2.0.0"]),
        (">1.2", ["1.3.0"], ["1.2.9"]),
        ("<=1.2", ["1.2.9", "0.1.0"], ["1.3.0"]),
        ("*", ["0.0.1", "9.9.9"], []),
        ("1.*", ["1.0.0", "1.5.0"], ["2.0.0"]),
        ("1.x", ["1.0.0"], ["0.9.0"]),
        ("1.2.*", ["1.2.0", "1.2.7"], ["1.3.0"]),
    ],
)
def test_requirement_table(requirement: str, inside: list[str], outside: list[str]) -> None:
    parsed = parse_requirement(requirement)
    for version in inside:
        assert parsed.matches(parse_version(version)), (requirement, version)  # type: ignore[arg-type]
    for version in outside:
        assert not parsed.matches(parse_version(version)), (requirement, version)  # type: ignore[arg-type]


def test_range_resolution_excludes_prereleases_unless_named() -> None:
    listed = ["1.0.0", "1.1.0", "1.2.0-rc.1", "2.0.0-beta.1", "not-a-version"]
    assert max_satisfying("^1", listed) == "1.1.0"
    assert max_satisfying("*", listed) == "1.1.0"
    assert max_satisfying(">=1.2.0-rc.0", listed) == "1.2.0-rc.1"
    assert max_satisfying("^3", listed) is None


def test_satisfies_treats_prereleases_as_their_release() -> None:
    assert satisfies("^1.0", "1.1.0-rc.1") is True
    assert satisfies("^1.6", "1.5.2") is False
    assert satisfies("^1.4", "1.6.1") is True
    assert satisfies("next", "1.0.0") is None
    assert satisfies("^1", "one") is None


@pytest.mark.parametrize(
    ("a", "b", "major", "bump"),
    [
        ("0.1.0", "0.2.0", True, "major"),
        ("0.1.0", "0.1.5", False, "patch"),
        ("1.0.0", "2.0.0", True, "major"),
        ("1.0.0", "1.1.0", False, "minor"),
        ("1.1.0", "1.0.0", False, "minor"),
        ("1.0.0", "1.0.1", False, "patch"),
        ("1.0.0-rc.1", "1.0.0", False, "prerelease"),
        ("1.0.0", "latest", False, None),
    ],
)
def test_major_jump_and_bump(a: str, b: str, major: bool, bump: str | None) -> None:
    assert is_major_jump(a, b) is major
    assert bump_kind(a, b) == bump


def test_requested_rules() -> None:
    assert requested_for(VersionRef("exact", "1.0.0"), None) == "^1.0.0"
    assert requested_for(VersionRef("tag", "latest"), "^1") == "latest"
    assert requested_for(VersionRef("range", "^1"), None) == "^1"
    assert requested_for(None, None) == "latest"
    assert requested_for(None, "~1.2") == "~1.2"


_numbers = st.integers(min_value=0, max_value=30)


@given(_numbers, _numbers, _numbers, _numbers, _numbers, _numbers)
def test_caret_matches_its_expanded_bounds(ma: int, mi: int, pa: int, vma: int, vmi: int, vpa: int) -> None:
    """`^X.Y.Z` equals `>=X.Y.Z, <upper` with Cargo's upper bound, for every release."""
    if ma > 0:
        upper = f"{ma + 1}.0.0"
    elif mi > 0:
        upper = f"0.{mi + 1}.0"
    else:
        upper = f"0.0.{pa + 1}"
    version = parse_version(f"{vma}.{vmi}.{vpa}")
    assert version is not None
    caret = parse_requirement(f"^{ma}.{mi}.{pa}").matches(version)
    bounds = parse_requirement(f">={ma}.{mi}.{pa}, <{upper}").matches(version)
    assert caret == bounds
