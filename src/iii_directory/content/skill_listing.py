"""`skills::list` rows served from memory while their files are provably unchanged (a
performance cache; docs/console-page.md, "first row").

At 5,000 skills a list call spent most of its time building and validating 5,000 response
models and serialising them again, not on disk. This module keeps, per file, the finished wire
row (a plain dict in the published `SkillEntry` shape) with its lowercased search fields, and
answers a call with copies of those rows:

* a row is valid for one (file signature, display id, origin): every call still `stat`s every
  visible file and derives the display id and origin from this call's visible set, so an edit,
  a new sibling that changes a display id, a kit install or a delete shows on the next call;
* a row is stored only when its file was settled (`stat_cache.settled`) and unchanged across
  the read, as the row-facts cache does; at most `capacity` rows (least recently used first);
* `search_body` looks bodies up in the `BodyIndex` (same validation), not on disk.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from .skills import SkillFile, SkillsView, row_in_state, row_origin
from .stat_cache import Signature, SignedLRU, settled, signature, unchanged

if TYPE_CHECKING:  # imported by a body search only (`functions/skills.py`)
    from .body_index import BodyIndex

DEFAULT_CAPACITY = 16384
"""Rows kept; a row of a typical skill takes about 1 KB (5.0 MB for 5,000 skills)."""

RowKey = tuple[Signature, str, str]


class ListedRow(NamedTuple):
    """One finished row: its wire dict (description and origin included), its type and its
    lowercased id, title and description (what `search` matches). A `NamedTuple`, not a
    frozen dataclass: as immutable, and far cheaper to define on `call`'s path
    (docs/record/performance.md, "One signature-checked LRU")."""

    wire: dict[str, Any]
    type: str | None
    haystack: tuple[str, str, str]


def _listed(view: SkillsView, file: SkillFile, st: os.stat_result | None) -> ListedRow:
    row = row_in_state(view, file, st)
    return ListedRow(
        wire=row.wire(include_origin=True),
        type=row.type,
        haystack=(row.id.lower(), row.title.lower(), row.description.lower()),
    )


class ListingRows:
    """File path → its `ListedRow`, valid for one `RowKey` (a `SignedLRU` of `capacity` rows).
    Thread-safe; one per `Directory` (`directory.service(ListingRows)`). `clock` (ns since the
    epoch) is injectable."""

    def __init__(self, directory: object | None = None, *, capacity: int = DEFAULT_CAPACITY,
                 clock: Callable[[], int] = time.time_ns) -> None:
        self.clock = clock
        self.built = 0
        """Rows built from the file so far (tests and benchmarks read it)."""
        self._lru: SignedLRU[RowKey, ListedRow] = SignedLRU(capacity)

    def __len__(self) -> int:
        return len(self._lru)

    @property
    def capacity(self) -> int | None:
        """The most rows held."""
        return self._lru.capacity

    def row(self, view: SkillsView, file: SkillFile, st: os.stat_result | None) -> ListedRow:
        """The row of `file` in the state `st` (a fresh `stat`, None when it failed)."""
        if st is None:
            self.built += 1
            return _listed(view, file, st)
        key = str(file.path)
        sig = signature(st)
        row_key = (sig, view.display_id(file.id), row_origin(view, file))
        hit = self._lru.get(key, row_key)
        if hit is not None:
            return hit
        self.built += 1
        listed = _listed(view, file, st)
        if settled(st, self.clock()) and unchanged(file.path, sig):
            self._lru.put(key, row_key, listed)
        return listed


def wire_rows(
    view: SkillsView,
    rows: ListingRows,
    bodies: BodyIndex | None,
    *,
    search: str | None = None,
    prefix: str | None = None,
    type: str | None = None,  # noqa: A002 - the published field name
    search_body: bool = False,
    include_description: bool = True,
    include_origin: bool = False,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """The `skills::list` rows of `view` in wire form (fresh dicts), filtered exactly as
    `skills.list_rows` filters: `prefix` on the on-disk id, `type` exact, `search` a
    case-insensitive substring of the display id, title or description — or, with
    `search_body`, of the body (looked up in `bodies` only for rows the cheaper fields missed;
    without `bodies` no body matches); with `limit`, the first `limit` rows that pass (the files
    after them are not even `stat`ed)."""
    needle = search.lower() if search else None
    out: list[dict[str, Any]] = []
    for file in view.files:
        if limit is not None and len(out) >= limit:
            break
        if prefix is not None and not file.id.startswith(prefix):
            continue
        try:
            st = os.stat(file.path)
        except OSError:
            st = None
        listed = rows.row(view, file, st)
        if type is not None and listed.type != type:
            continue
        if needle is not None and not any(needle in text for text in listed.haystack) and not (
            search_body and bodies is not None and bodies.contains(file.path, st, needle)
        ):
            continue
        wire = dict(listed.wire)
        if not include_description:
            wire["description"] = ""
        if not include_origin:
            del wire["origin"]
        out.append(wire)
    return out
