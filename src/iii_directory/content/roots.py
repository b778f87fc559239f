"""Content roots, path classification and the safe directory walk (docs/rules/surfaces.md §2.2, §3.1–§3.3).

One classification rule serves the scanners, the downloader and the watcher (§3.2): given the
components of a path relative to a root, compared by exact equality,

1. any component `system-prompts` → `Kind.SYSTEM_PROMPT`;
2. else any component `prompts`   → `Kind.IGNORED`;
3. else any component `agents`    → `Kind.AGENT` (inside skill roots: "not a skill");
4. else                           → `Kind.SKILL`.

Root helpers resolve the configured folders on every use (§2.2) and de-duplicate the root lists
(the earlier setting wins). The walk never follows a symlink whose target leaves its root, so a
read can never escape a root; `contained_target` applies the same rule before a write.
"""

from __future__ import annotations

import enum
import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from .listing_cache import LISTINGS, FolderSignature, Listing, ListingCache, folder_signature

if TYPE_CHECKING:
    from ..config import Settings

log = logging.getLogger(__name__)

SYSTEM_PROMPTS_SEGMENT = "system-prompts"
PROMPTS_SEGMENT = "prompts"
AGENTS_SEGMENT = "agents"
RESERVED_SEGMENTS: frozenset[str] = frozenset(
    {SYSTEM_PROMPTS_SEGMENT, PROMPTS_SEGMENT, AGENTS_SEGMENT}
)


class Kind(str, enum.Enum):
    """What a path under a skills root holds (§3.2)."""

    SKILL = "skill"
    SYSTEM_PROMPT = "system_prompt"
    AGENT = "agent"
    IGNORED = "ignored"


def classify(parts: Sequence[str]) -> Kind:
    """Classify a root-relative path given as its components (exact segment equality)."""
    if SYSTEM_PROMPTS_SEGMENT in parts:
        return Kind.SYSTEM_PROMPT
    if PROMPTS_SEGMENT in parts:
        return Kind.IGNORED
    if AGENTS_SEGMENT in parts:
        return Kind.AGENT
    return Kind.SKILL


def classify_path(relative: str | PurePosixPath) -> Kind:
    """`classify` for a `/`-separated relative path string."""
    return classify(PurePosixPath(relative).parts)


# --- roots -------------------------------------------------------------------------------


def dedupe_paths(paths: Iterable[Path]) -> list[Path]:
    """Drop later entries that name the same directory as an earlier one (§2.2)."""
    seen: set[str] = set()
    out: list[Path] = []
    for path in paths:
        key = os.path.normcase(os.path.abspath(path))
        if key not in seen:
            seen.add(key)
            out.append(path)
    return out


def skills_root(settings: Settings) -> Path:
    """`skills_folder`: the writable root every skill create and download writes to."""
    return settings.path("skills_folder")


def local_skills_root(settings: Settings) -> Path:
    """`local_skills_folder`: the project override root (whole-namespace local-wins)."""
    return settings.path("local_skills_folder")


def agent_skills_roots(settings: Settings) -> list[Path]:
    """Read-only agent-skills roots, project first then user-global, de-duplicated."""
    return dedupe_paths(
        [settings.path("agents_skills_folder"), settings.path("global_agents_skills_folder")]
    )


def agent_profile_roots(settings: Settings) -> list[Path]:
    """Agent-profile roots `[agents_folder, global_agents_folder]`, de-duplicated."""
    return dedupe_paths([settings.path("agents_folder"), settings.path("global_agents_folder")])


def system_prompt_roots(settings: Settings) -> list[Path]:
    """Roots scanned for system prompts, local first (§3.8), de-duplicated."""
    return dedupe_paths([local_skills_root(settings), skills_root(settings)])


@dataclass(frozen=True)
class WatchRoot:
    """A directory the watcher observes and how paths under it are judged (§12.2–§12.3)."""

    path: Path
    role: str
    """`skills` (classified by §3.2), `agents` (direct `<id>.md` children), or
    `agent_skills` (every markdown file is a skills event)."""
    create: bool
    """Create the directory when it is missing at boot (writable roots only)."""


def watch_roots(settings: Settings) -> list[WatchRoot]:
    """`skills_folder`, `local_skills_folder` (if different) and `agents_folder` (created when
    missing); `global_agents_folder` and the agent-skills roots only when they already exist."""
    skills = skills_root(settings)
    local = local_skills_root(settings)
    agents = settings.path("agents_folder")
    roots = [WatchRoot(skills, "skills", True)]
    if not same_path(local, skills):
        roots.append(WatchRoot(local, "skills", True))
    roots.append(WatchRoot(agents, "agents", True))
    global_agents = settings.path("global_agents_folder")
    if not same_path(global_agents, agents):
        roots.append(WatchRoot(global_agents, "agents", False))
    for root in agent_skills_roots(settings):
        roots.append(WatchRoot(root, "agent_skills", False))
    return roots


# --- containment -------------------------------------------------------------------------


def same_path(a: Path, b: Path) -> bool:
    return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))


def lexically_within(root: Path, candidate: Path) -> bool:
    """True when `candidate` lies inside (or is) `root`, comparing absolute paths only."""
    root_s = os.path.normcase(os.path.abspath(root))
    cand_s = os.path.normcase(os.path.abspath(candidate))
    return cand_s == root_s or cand_s.startswith(root_s.rstrip(os.sep) + os.sep)


def really_within(real_root: Path, candidate: Path) -> bool:
    """True when `candidate`, symlinks resolved, lies inside the already-resolved `real_root`."""
    try:
        real = candidate.resolve()
    except (OSError, RuntimeError):
        return False
    return real == real_root or real_root in real.parents


def relative_parts(root: Path, path: Path) -> tuple[str, ...] | None:
    """The components of `path` relative to `root` (lexically), or None when outside."""
    if not lexically_within(root, path):
        return None
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    if rel == ".":
        return ()
    return tuple(PurePosixPath(Path(rel).as_posix()).parts)


class EscapesRoot(ValueError):
    """A target path that would leave its root (`..`, absolute, or through a symlink)."""


def contained_target(root: Path, relative: str) -> Path:
    """`root / relative` for a write, refusing anything that would land outside `root`.

    `relative` must be a `/`-separated path of plain components (no empty, `.` or `..`
    component, no backslash or NUL, not absolute). Every existing component of the target,
    the target itself included when it is a symlink, must resolve inside the root.
    """
    if not relative or relative.startswith("/") or "\\" in relative or "\0" in relative:
        raise EscapesRoot(f"path may not leave its root: {relative!r}")
    parts = relative.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise EscapesRoot(f"path may not leave its root: {relative!r}")
    target = root.joinpath(*parts)
    try:
        real_root = root.resolve()
    except (OSError, RuntimeError) as exc:
        raise EscapesRoot(f"root {root} cannot be resolved: {exc}") from None
    probe = target
    while True:
        if os.path.lexists(probe):
            if not really_within(real_root, probe):
                raise EscapesRoot(f"path {target} resolves outside {root}")
            break
        if same_path(probe, root) or probe.parent == probe:
            break
        probe = probe.parent
    return target


# --- the walk ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Found:
    """A regular markdown file found under a root: its `/`-joined relative path, its parts
    and its path on disk (inside the root, symlinks not resolved)."""

    rel: str
    parts: tuple[str, ...]
    path: Path


def utf8_name(name: str) -> bool:
    """False for a file name that cannot be encoded as UTF-8 (a surrogate-escaped byte)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def walk_markdown(root: Path, *, suffix: str = ".md") -> list[Found]:
    """Every regular file under `root` whose name ends in `suffix`, in lexical byte order of
    the relative paths. A missing root is empty. Non-UTF-8 names are skipped.

    Symlinks: one whose target leaves the root is never followed. One that stays inside is
    followed like what it names (a linked file or folder is listed under the link's path too),
    except a folder link back to the root or to a folder on its own path, which would loop.
    The root is resolved only when a symlink has to be judged (a walk without links needs no
    real paths)."""
    key = (str(root), suffix)
    memo = _WALKS.get(key)
    if memo is not None and _unchanged(memo[0]):
        return memo[1]
    trace: list[tuple[Path, Listing]] = []
    found: list[Found] = []
    for rel_parts, path in _walk(root, (), _RealRoot(root), None, trace=trace):
        if rel_parts[-1].endswith(suffix):
            found.append(Found("/".join(rel_parts), rel_parts, path))
    found.sort(key=lambda f: f.rel.encode("utf-8"))
    signed = _signed(trace)
    if signed is not None:
        if len(_WALKS) >= MAX_WALKS:
            _WALKS.clear()
        _WALKS[key] = (signed, found)
    else:
        _WALKS.pop(key, None)
    return found


def _signed(trace: list[tuple[Path, Listing]]) -> tuple[tuple[str, FolderSignature], ...] | None:
    """Each folder of a walk with the signature its cached listing was stored under; None when
    a folder's listing is not the cached one (unsettled, holding a symlink or a non-UTF-8
    name, unreadable, or already replaced)."""
    signed = []
    for step in trace:
        if step is _UNTRACEABLE:
            return None
        folder, listing = step
        stored = LISTINGS.stored(folder)
        if stored is None or stored[1] is not listing:
            return None
        signed.append((str(folder), stored[0]))
    return tuple(signed) if signed else None


def _unchanged(signed: tuple[tuple[str, FolderSignature], ...]) -> bool:
    """True while a fresh `stat` of every folder returns the signature its listing was stored
    under: then every listing, and so the walk, is still what it was."""
    stat = os.stat
    for folder, sig in signed:
        try:
            st = stat(folder)
        except OSError:
            return False
        if folder_signature(st) != sig:
            return False
    return True


def remembered_walk(root: Path, walked: list[Found], *, suffix: str = ".md") -> bool:
    """True when `walked` is the walk of `root` that `walk_markdown` remembers: while it is, every
    call hands back this very list (its folders are provably unchanged), so a result derived
    from it alone may be reused by identity."""
    memo = _WALKS.get((str(root), suffix))
    return memo is not None and memo[1] is walked


MAX_WALKS = 64
_WALKS: dict[tuple[str, str], tuple[tuple[tuple[str, FolderSignature], ...], list[Found]]] = {}
"""Root → (every folder of its last walk with the signature its cached listing was stored
under, the result). A walk is a function of its folders' listings alone (names and entry kinds;
contents are read by the callers), and a stored listing holds while its folder's signature does
(`listing_cache`), so while a fresh `stat` of every one of those folders returns that signature
the result is reused without rebuilding it. A walk that met a folder whose listing is not cached
(unsettled, holding a symlink or a non-UTF-8 name, unreadable) is not remembered. Callers must
not mutate it."""

_UNTRACEABLE: tuple[Path, Listing] = (Path(), Listing((), ()))


class _RealRoot:
    """A walk's root and its resolved path, resolved the first time a symlink needs it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._real: Path | None = None

    def get(self) -> Path:
        """The resolved root (OSError when it cannot be resolved)."""
        if self._real is None:
            try:
                self._real = self.root.resolve()
            except RuntimeError as exc:
                raise OSError(str(exc)) from None
        return self._real

    def chain(self, prefix: tuple[str, ...]) -> tuple[Path, ...]:
        """The resolved paths of the root and of each folder on `prefix` below it, for a path
        reached without passing a symlink."""
        real = self.get()
        out = [real]
        for name in prefix:
            real = real / name
            out.append(real)
        return tuple(out)


def _walk(
    directory: Path, prefix: tuple[str, ...], real_root: _RealRoot,
    ancestors: tuple[Path, ...] | None, listings: ListingCache | None = None,
    trace: list[tuple[Path, Listing]] | None = None,
) -> Iterator[tuple[tuple[str, ...], Path]]:
    """`ancestors` holds the resolved paths of `directory` and every folder above it, or is None
    while no symlink lies on the way from the root (then they are `real_root.chain(prefix)`,
    computed only if needed). A folder without symlinks or non-UTF-8 names is listed through
    `listings` (reused while unchanged)."""
    listings = LISTINGS if listings is None else listings
    cached = listings.cached(directory)
    if cached is not None:
        if trace is not None:
            trace.append((directory, cached))
        for name, path in cached.files:
            yield prefix + (name,), path
        for name, path in cached.folders:
            below = None if ancestors is None else ancestors + (ancestors[-1] / name,)
            yield from _walk(path, prefix + (name,), real_root, below, listings, trace)
        return
    before = listings.before(directory)
    if before is None:  # cannot be stat-ed (missing, not a folder, not reachable): nor listed
        if trace is not None:
            trace.append(_UNTRACEABLE)
        return
    try:
        entries = listings.scan(directory)
    except OSError as exc:
        log.debug("cannot list %s: %s", directory, exc)
        if trace is not None:
            trace.append(_UNTRACEABLE)
        return
    plain = True
    files: list[tuple[str, Path]] = []
    folders: list[tuple[str, Path]] = []
    for entry in entries:
        if not utf8_name(entry.name):
            log.info("skipping non-UTF-8 name under %s", directory)
            plain = False
            continue
        path = Path(entry.path)
        try:
            is_link = entry.is_symlink()
            plain = plain and not is_link
            if is_link and not really_within(real_root.get(), path):
                log.info("skipping %s: symlink points outside its root", path)
                continue
            if entry.is_dir(follow_symlinks=True):
                folders.append((entry.name, path))
                if is_link:
                    chain = real_root.chain(prefix) if ancestors is None else ancestors
                    real = path.resolve()
                    if real in chain:
                        continue
                    below: tuple[Path, ...] | None = chain + (real,)
                else:
                    below = None if ancestors is None else ancestors + (ancestors[-1] / entry.name,)
                yield from _walk(path, prefix + (entry.name,), real_root, below, listings, trace)
            elif entry.is_file(follow_symlinks=True):
                files.append((entry.name, path))
                yield prefix + (entry.name,), path
        except (OSError, RuntimeError) as exc:
            plain = False
            log.debug("cannot inspect %s: %s", path, exc)
    listing = Listing(tuple(files), tuple(folders))
    stored = plain and listings.store(directory, before, listing)
    if trace is not None:  # a walk is remembered only when every folder's listing is cached
        trace.append((directory, listing) if stored else _UNTRACEABLE)


def top_level_dirs(root: Path) -> frozenset[str]:
    """Names of the directories directly under `root` (a symlink counts only when its target
    stays inside the root); empty when the root is missing."""
    cached = LISTINGS.cached(root)
    if cached is not None:
        return frozenset(name for name, _ in cached.folders)
    try:
        entries = list(os.scandir(root))
    except OSError:
        return frozenset()
    real = _RealRoot(root)  # resolved only when a symlink has to be judged
    names = set()
    for entry in entries:
        try:
            if not entry.is_dir(follow_symlinks=True):
                continue
            if entry.is_symlink() and not really_within(real.get(), Path(entry.path)):
                continue
        except OSError:
            continue
        if utf8_name(entry.name):
            names.add(entry.name)
    return frozenset(names)
