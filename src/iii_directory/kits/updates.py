"""Update checks and their cache (docs/rules/kits.md §9.1, §9.7).

The registry decides what is available (`POST /k/updates`: the newest version satisfying
`requested`, the latest, whether it is a major jump); the worker only applies the kit's
`ignored_versions`. The result is cached in `<root>/.iii/directory/kit-updates.json` as pretty
JSON `{checked_at, kits: {kit: KitUpdate}, error?}`.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from ..atomic import SelfWrites, atomic_write
from .lock import Lock, LockedKit
from .records import KitUpdate, UpdateCache
from .shapes import UpdateAnswer


def cache_path(root: Path) -> Path:
    return root / ".iii" / "directory" / "kit-updates.json"


def read_cache(root: Path) -> UpdateCache:
    """The cached check (an unreadable or missing cache reads as empty)."""
    try:
        return UpdateCache.model_validate(json.loads(cache_path(root).read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError):
        return UpdateCache()


def write_cache(root: Path, cache: UpdateCache, marks: SelfWrites | None = None) -> None:
    text = json.dumps(cache.model_dump(mode="json", by_alias=True), indent=2, ensure_ascii=False)
    atomic_write(cache_path(root), text + "\n", marks)


def queries(lock: Lock, only: str | None = None) -> list[dict[str, str]]:
    """One `{kit, version, requested}` per installed kit (or only `only`), sorted by kit."""
    return [
        {"kit": kit, "version": entry.version, "requested": entry.requested}
        for kit, entry in sorted(lock.kits.items())
        if only is None or kit == only
    ]


def filtered(answer: UpdateAnswer, entry: LockedKit) -> KitUpdate:
    """An answer with the kit's ignored versions applied."""
    ignored = answer.available is not None and answer.available in entry.ignored_versions
    return KitUpdate(
        current=entry.version,
        available=None if ignored else answer.available,
        latest=answer.latest,
        major=answer.major and not ignored,
        ignored=answer.available if ignored else None,
        deprecation=answer.deprecation,
        not_found=True if answer.not_found else None,
    )


def available_map(cache: UpdateCache) -> dict[str, str]:
    """kit → available version, for kits that have one (what `changed` compares)."""
    return {kit: u.available for kit, u in cache.kits.items() if u.available}


def refilter(update: KitUpdate, version: str, ignore: bool) -> KitUpdate:
    """Apply an ignore / un-ignore of `version` to a cached entry (docs/rules/kits.md §9.7)."""
    if ignore and update.available == version:
        return update.model_copy(update={"ignored": version, "available": None, "major": False})
    if not ignore and update.ignored == version:
        return update.model_copy(update={"available": version, "ignored": None})
    return update
