"""Kit references and Cargo-style semver (docs/rules/kits.md §1.1–§1.3).

A reference is `<handle>/<name>[@<version|tag|range>]`. Versions are strict semver
(`MAJOR.MINOR.PATCH[-pre][+build]`, parsed with the `semver` package); requirements are
comma-separated comparators with the operators `= > >= < <= ~ ^` and the wildcards `*`, `1.*`,
`1.x`; a bare version means caret. Matching follows Cargo's rules, including its prerelease
gate: a prerelease version matches a requirement only when some comparator names the same
`MAJOR.MINOR.PATCH` with a prerelease of its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import semver

HANDLE_PATTERN = "^[a-z0-9][a-z0-9-]{0,38}$"
NAME_PATTERN = "^[a-z0-9][a-z0-9-]{0,63}$"
_HANDLE = re.compile(HANDLE_PATTERN)
_NAME = re.compile(NAME_PATTERN)
_TAG = re.compile(r"^[A-Za-z0-9_.-]+\Z")
_RANGE_START = frozenset("0123456789^~><=*")

RefKind = Literal["exact", "range", "tag"]


class RefError(ValueError):
    """A malformed kit reference, kit id or version requirement (the message is the reason)."""


# ---------------------------------------------------------------------------------------------
# Versions


def parse_version(text: str) -> semver.Version | None:
    """A strict semver version, or None (no `v` prefix, no missing parts)."""
    try:
        return semver.Version.parse(text.strip())
    except (ValueError, TypeError):
        return None


def is_exact_version(text: str) -> bool:
    return parse_version(text) is not None


def _release(version: semver.Version) -> semver.Version:
    return semver.Version(version.major, version.minor, version.patch)


def _pre_cmp(a: str | None, b: str | None) -> int:
    """Semver precedence of two prerelease strings; an empty prerelease ranks highest."""
    left = semver.Version(0, 0, 0, prerelease=a or None)
    right = semver.Version(0, 0, 0, prerelease=b or None)
    return left.compare(right)


# ---------------------------------------------------------------------------------------------
# Requirements

Op = Literal["=", ">", ">=", "<", "<=", "~", "^", "*"]
_OPS: tuple[str, ...] = (">=", "<=", "=", ">", "<", "~", "^")
_NUMBER = re.compile(r"^(0|[1-9][0-9]*)\Z")
_PRE = re.compile(r"^[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*\Z")


@dataclass(frozen=True)
class Comparator:
    """One comparator; `minor` / `patch` are None when the requirement left them out (or
    wrote a wildcard)."""

    op: Op
    major: int
    minor: int | None
    patch: int | None
    pre: str = ""

    def matches(self, v: semver.Version) -> bool:
        """Cargo's per-operator rule (prerelease ordering included, no prerelease gate)."""
        if self.op in ("=", "*"):
            return self._exact(v)
        if self.op == ">":
            return self._greater(v)
        if self.op == ">=":
            return self._exact(v) or self._greater(v)
        if self.op == "<":
            return self._less(v)
        if self.op == "<=":
            return self._exact(v) or self._less(v)
        if self.op == "~":
            return self._tilde(v)
        return self._caret(v)

    def pre_compatible(self, v: semver.Version) -> bool:
        """True when this comparator names `v`'s `MAJOR.MINOR.PATCH` with a prerelease."""
        return (
            bool(self.pre)
            and self.major == v.major
            and self.minor == v.minor
            and self.patch == v.patch
        )

    def _exact(self, v: semver.Version) -> bool:
        if v.major != self.major:
            return False
        if self.minor is not None and v.minor != self.minor:
            return False
        if self.patch is not None and v.patch != self.patch:
            return False
        return _pre_cmp(v.prerelease, self.pre) == 0

    def _greater(self, v: semver.Version) -> bool:
        if v.major != self.major:
            return v.major > self.major
        if self.minor is None:
            return False
        if v.minor != self.minor:
            return v.minor > self.minor
        if self.patch is None:
            return False
        if v.patch != self.patch:
            return v.patch > self.patch
        return _pre_cmp(v.prerelease, self.pre) > 0

    def _less(self, v: semver.Version) -> bool:
        if v.major != self.major:
            return v.major < self.major
        if self.minor is None:
            return False
        if v.minor != self.minor:
            return v.minor < self.minor
        if self.patch is None:
            return False
        if v.patch != self.patch:
            return v.patch < self.patch
        return _pre_cmp(v.prerelease, self.pre) < 0

    def _tilde(self, v: semver.Version) -> bool:
        if v.major != self.major:
            return False
        if self.minor is not None and v.minor != self.minor:
            return False
        if self.patch is not None and v.patch != self.patch:
            return v.patch > self.patch
        return _pre_cmp(v.prerelease, self.pre) >= 0

    def _caret(self, v: semver.Version) -> bool:
        if v.major != self.major:
            return False
        if self.minor is None:
            return True
        if self.patch is None:
            return v.minor >= self.minor if self.major > 0 else v.minor == self.minor
        if self.major > 0:
            if v.minor != self.minor:
                return v.minor > self.minor
            if v.patch != self.patch:
                return v.patch > self.patch
        elif self.minor > 0:
            if v.minor != self.minor:
                return False
            if v.patch != self.patch:
                return v.patch > self.patch
        elif v.minor != self.minor or v.patch != self.patch:
            return False
        return _pre_cmp(v.prerelease, self.pre) >= 0


@dataclass(frozen=True)
class Requirement:
    """All comparators must match (an empty list, `*`, matches every release)."""

    comparators: tuple[Comparator, ...]

    def matches(self, v: semver.Version) -> bool:
        """Cargo semantics: every comparator matches, and a prerelease `v` additionally needs
        a comparator naming its `MAJOR.MINOR.PATCH` with a prerelease."""
        if not all(c.matches(v) for c in self.comparators):
            return False
        if not v.prerelease:
            return True
        return any(c.pre_compatible(v) for c in self.comparators)

    def matches_release(self, v: semver.Version) -> bool:
        """Match with prerelease and build stripped (a prerelease counts as its release)."""
        release = _release(v)
        return all(c.matches(release) for c in self.comparators)


def _parse_part(text: str, what: str, allow_wildcard: bool) -> int | None:
    if allow_wildcard and text in ("*", "x", "X"):
        return None
    if not _NUMBER.match(text):
        raise RefError(f"invalid {what} version number {text!r}")
    return int(text)


def _parse_comparator(text: str) -> Comparator:
    raw = text.strip()
    if not raw:
        raise RefError("empty comparator")
    op: str | None = None
    for candidate in _OPS:
        if raw.startswith(candidate):
            op = candidate
            raw = raw[len(candidate):].strip()
            break
    if not raw:
        raise RefError(f"missing version after {op!r}")
    if raw in ("*", "x", "X"):
        if op not in (None, "="):
            raise RefError(f"a wildcard cannot follow {op!r}")
        return Comparator("*", 0, None, None)
    body, plus, build = raw.partition("+")
    if plus and not _PRE.match(build):
        raise RefError(f"invalid build metadata {build!r}")
    core, dash, pre = body.partition("-")
    if dash and not _PRE.match(pre):
        raise RefError(f"invalid prerelease {pre!r}")
    parts = core.split(".")
    if len(parts) > 3:
        raise RefError(f"too many version components in {raw!r}")
    major = _parse_part(parts[0], "major", allow_wildcard=False)
    assert major is not None
    minor = _parse_part(parts[1], "minor", allow_wildcard=True) if len(parts) > 1 else None
    patch = None
    if len(parts) > 2:
        if minor is None and parts[2] not in ("*", "x", "X"):
            raise RefError(f"unexpected patch number after a wildcard in {raw!r}")
        patch = _parse_part(parts[2], "patch", allow_wildcard=True)
    wildcard = any(p in ("*", "x", "X") for p in parts[1:])
    if pre and (minor is None or patch is None):
        raise RefError(f"a prerelease needs a full MAJOR.MINOR.PATCH in {raw!r}")
    if wildcard:
        if op not in (None, "="):
            raise RefError(f"a wildcard cannot follow {op!r}")
        return Comparator("*", major, minor, patch)
    return Comparator((op or "^"), major, minor, patch, pre)  # type: ignore[arg-type]


def parse_requirement(text: str) -> Requirement:
    """Parse `>=1.2, <2`, `^1.3`, `1.*`, … ; raise RefError with the reason."""
    raw = text.strip()
    if not raw:
        raise RefError("empty requirement")
    if "||" in raw:
        raise RefError("'||' alternatives are not supported")
    if raw == "*" or raw in ("x", "X"):
        return Requirement(())
    return Requirement(tuple(_parse_comparator(part) for part in raw.split(",")))


def try_requirement(text: str) -> Requirement | None:
    try:
        return parse_requirement(text)
    except RefError:
        return None


def satisfies(range_text: str | None, version_text: str | None) -> bool | None:
    """Worker-range check: None when either side fails to parse; otherwise match with the
    version's prerelease and build stripped (`satisfies("^1.0", "1.1.0-rc.1")` is true)."""
    if range_text is None or version_text is None:
        return None
    requirement = try_requirement(range_text)
    version = parse_version(version_text)
    if requirement is None or version is None:
        return None
    return requirement.matches_release(version)


def max_satisfying(range_text: str, versions: Iterable[str]) -> str | None:
    """Kit range resolution: the highest parsable listed version matching the range, with
    prereleases excluded unless a comparator names them (Cargo's gate)."""
    requirement = parse_requirement(range_text)
    best: semver.Version | None = None
    best_text: str | None = None
    for text in versions:
        version = parse_version(text)
        if version is None or not requirement.matches(version):
            continue
        if best is None or version.compare(best) > 0:
            best, best_text = version, str(text).strip()
    return best_text


def is_major_jump(from_text: str | None, to_text: str | None) -> bool:
    """False unless both parse; with both majors 0 a minor change is major; otherwise the
    majors differ."""
    a = parse_version(from_text or "")
    b = parse_version(to_text or "")
    if a is None or b is None:
        return False
    if a.major == 0 and b.major == 0:
        return a.minor != b.minor
    return a.major != b.major


def bump_kind(from_text: str | None, to_text: str | None) -> str | None:
    """`major` (a major jump) › `minor` (major or minor differ) › `patch` › `prerelease`;
    None when either side does not parse. Downgrades classify the same way."""
    a = parse_version(from_text or "")
    b = parse_version(to_text or "")
    if a is None or b is None:
        return None
    if is_major_jump(from_text, to_text):
        return "major"
    if a.major != b.major or a.minor != b.minor:
        return "minor"
    if a.patch != b.patch:
        return "patch"
    return "prerelease"


# ---------------------------------------------------------------------------------------------
# Kit references


@dataclass(frozen=True)
class VersionRef:
    kind: RefKind
    value: str


@dataclass(frozen=True)
class KitRef:
    handle: str
    name: str
    version: VersionRef | None = None

    @property
    def kit(self) -> str:
        return f"{self.handle}/{self.name}"


def parse_version_ref(raw: str) -> VersionRef:
    """Classify the part after `@` (docs/rules/kits.md §1.1 step 5); raise RefError."""
    text = raw.strip()
    if not text:
        raise RefError("the version after '@' is empty")
    stripped = text.lstrip("v")
    if stripped and is_exact_version(stripped):
        return VersionRef("exact", stripped)
    if text[0] in _RANGE_START:
        try:
            parse_requirement(text)
        except RefError as exc:
            raise RefError(f'"{text}" is neither a version nor a valid range: {exc}') from None
        return VersionRef("range", text)
    if _TAG.match(text):
        return VersionRef("tag", text)
    raise RefError(f'"{text}" is not a version, a release tag or a range')


def parse_kit_ref(raw: str) -> KitRef:
    """Parse `<handle>/<name>[@<version|tag|range>]` (docs/rules/kits.md §1.1)."""
    text = raw.strip()
    ident, at, version_part = text.partition("@")
    if "/" not in ident:
        raise RefError(f'"{text}" is not <author>/<kit>')
    handle, _, name = ident.partition("/")
    if not _HANDLE.match(handle):
        raise RefError(f'invalid author "{handle}": it must match {HANDLE_PATTERN}')
    if not _NAME.match(name):
        raise RefError(f'invalid kit name "{name}": it must match {NAME_PATTERN}')
    version = parse_version_ref(version_part) if at else None
    return KitRef(handle, name, version)


def parse_kit_id(raw: str) -> KitRef:
    """A kit id (`<handle>/<name>`): parsed like a reference; a version is refused."""
    ref = parse_kit_ref(raw)
    if ref.version is not None:
        raise RefError(f'"{raw.strip()}" must not carry a version here')
    return ref


def requested_for(version: VersionRef | None, locked_requested: str | None) -> str:
    """What the lock records (docs/rules/kits.md §1.2): exact `X` → `^X`; tag or range verbatim; no
    version → the lock's existing `requested` when installed, else `latest`."""
    if version is not None:
        return f"^{version.value}" if version.kind == "exact" else version.value
    return locked_requested if locked_requested is not None else "latest"


def version_ref_from_requested(requested: str) -> VersionRef:
    """Re-parse a stored `requested` string (a range, tag or exact version)."""
    return parse_version_ref(requested)
