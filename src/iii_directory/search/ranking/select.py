"""Batching, selection and grouping of installed candidates (docs/rules/search.md §7).

Per batch: namespace floor (skipped for judged batches) → round-robin merge across the lanes
(budget 12) → worker cap `max(6, 2 × lanes)`. Batches concatenate in order without duplicates;
grouping emits `{namespace, functions}` in first-seen order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import chain, islice
from typing import TypeVar

from .corpus import namespace_of
from .lanes import Ranking

BATCH_SIZE = 6  # spec: docs/rules/search.md §7.1
SELECTION_BUDGET = 12  # spec: docs/rules/search.md §7.2
NAMESPACE_FLOOR = 0.4  # spec: docs/rules/search.md §7.2
MIN_WORKER_CAP = 6  # spec: docs/rules/search.md §7.2

T = TypeVar("T")


def batches(items: Sequence[T], size: int = BATCH_SIZE) -> list[list[T]]:
    """`items` split into consecutive batches of `size`."""
    return [list(items[i:i + size]) for i in range(0, len(items), size)]


def namespace_floor(lane: Ranking, floor: float = NAMESPACE_FLOOR) -> Ranking:
    """Keep the functions of namespaces whose best score ≥ `floor` × the lane's top score; drop
    ids without a namespace. Junk tails sat at ≤ 37 % of a clear leader; ambiguous queries score
    flat at ≥ 70 %."""
    if not lane:
        return []
    top = lane[0][1]
    best: dict[str, float] = {}
    for doc_id, score in lane:
        namespace = namespace_of(doc_id)
        if namespace is not None and namespace not in best:
            best[namespace] = score
    kept = {ns for ns, score in best.items() if score >= floor * top}
    return [(doc_id, score) for doc_id, score in lane if namespace_of(doc_id) in kept]


def interleave(lanes: Sequence[Sequence[T | None]], *, key=lambda item: item,
               exclude: Iterable[T] = ()) -> Iterator[T]:
    """The round-robin order, lazily: round r yields the r-th entry of every lane in lane order,
    skipping entries already yielded or in `exclude` (by `key`); a `None` entry is a turn the
    lane passes (`needs_first`)."""
    seen: set = {key(item) for item in exclude}
    depth = max((len(lane) for lane in lanes), default=0)
    for r in range(depth):
        for lane in lanes:
            if r >= len(lane):
                continue
            item = lane[r]
            if item is None:
                continue
            marker = key(item)
            if marker in seen:
                continue
            seen.add(marker)
            yield item


def needs_first(lanes: Sequence[Sequence[str]], needs: Sequence[bool]) -> list[list[str | None]]:
    """The lanes in round-robin order when some are needs' lanes (`needs[i]`: lane i is a need
    of the capability whose own lane precedes it, as `needs.expand_needs` orders them): a
    capability's own lane keeps its head first in round 0, and from round 1 on takes its turn
    after its needs' lanes — the lane moves behind its needs, its first slot a passed turn
    (`None`). Each lane keeps its number of turns; only the order within a round changes, so
    when the budget ends inside a round, the needs' entries are the ones taken."""
    flags = list(needs) + [False] * (len(lanes) - len(needs))
    out: list[list[str | None]] = []
    pending: list[str | None] | None = None
    for i, lane in enumerate(lanes):
        if not flags[i]:
            if pending is not None:
                out.append(pending)
                pending = None
            if i + 1 < len(flags) and flags[i + 1]:
                out.append(list(lane[:1]))
                pending = [None, *lane[1:]]
                continue
        out.append(list(lane))
    if pending is not None:
        out.append(pending)
    return out


def distinct(items: Iterable[T]) -> Iterator[T]:
    """`items` without repeats, first occurrence kept, lazily."""
    seen: set = set()
    for item in items:
        if item not in seen:
            seen.add(item)
            yield item


def round_robin(lanes: Sequence[Sequence[T]], budget: int, *, key=lambda item: item,
                exclude: Sequence[T] = ()) -> list[T]:
    """Round r takes the r-th entry of every lane in lane order, skipping entries already taken
    or in `exclude` (by `key`); stops at `budget` or when no lane has an r-th entry. Every lane
    gets a candidate before any gets a second."""
    return list(islice(interleave(lanes, key=key, exclude=exclude), budget))


def worker_cap(ids: Iterable[str], lanes: int, limit: int | None = None) -> list[str]:
    """Admit a function if its namespace is already admitted or fewer than `max(6, 2 × lanes)`
    namespaces are; ids without a namespace are dropped; stop once `limit` are admitted."""
    cap = max(MIN_WORKER_CAP, 2 * lanes)
    admitted: set[str] = set()
    kept: list[str] = []
    for doc_id in ids:
        if limit is not None and len(kept) >= limit:
            break
        namespace = namespace_of(doc_id)
        if namespace is None:
            continue
        if namespace in admitted or len(admitted) < cap:
            admitted.add(namespace)
            kept.append(doc_id)
    return kept


def select_batch(lanes: Sequence[Ranking], *, judged: bool = False,
                 tails: Sequence[Ranking] = (), learned: Sequence[bool] = (),
                 needs: Sequence[bool] = ()) -> list[str]:
    """The selection of one batch: floor (unless judged, or for a lane whose `learned` flag is
    set) → round robin (a capability's own lane after its `needs`' lanes from round 1 on,
    `needs_first`) → worker cap → the first 12. After the lanes' entries come their recall
    `tails` (`lanes.answered_tail`, `ranking_tail`, `bm25_tail`), round robin, so a tail only
    spends the budget the lanes leave.

    The worker cap walks the whole merged order and the budget is counted after it (a
    deliberate change versus docs/rules/search.md §7.2, which caps the first 12 and so returned fewer when
    a 7th worker reached them): a capped worker's slot goes to the next candidate of an
    admitted one. Recall@12 rises where a list was short; the refill joins its
    worker's entry (`group_by_namespace`), ahead of later workers, so recall at the head can fall
    a little (figures: docs/record/search-quality.md, "Figures from the search/ docstrings").

    A learned lane (`fusion.learned_lane`) already weighs how strongly each worker is supported;
    the floor, made for fused RRF scores, cut its recall (figures:
    docs/record/search-quality.md, "Figures from the search/ docstrings")."""
    unfloored = list(learned) + [False] * (len(lanes) - len(learned))
    floored = [lane if judged or skip else namespace_floor(lane)
               for lane, skip in zip(lanes, unfloored)]
    lane_ids = [[doc_id for doc_id, _ in lane] for lane in floored]
    tail_ids = [[doc_id for doc_id, _ in tail] for tail in tails]
    order = distinct(chain(interleave(needs_first(lane_ids, needs)), interleave(tail_ids)))
    return worker_cap(order, len(lanes), SELECTION_BUDGET)


def padding(selection: Sequence[str], lanes: Sequence[Ranking], tails: Sequence[Ranking] = (),
            budget: int = SELECTION_BUDGET) -> list[str]:
    """The ids that fill a batch's `selection` up to `budget` when the lanes and tails hold
    more candidates than it took: the lanes' entries that the namespace floor or the worker cap
    left out, round robin across the lanes (so across a capability's needs), then their tails',
    round robin; ids without a namespace never. Nothing pads an empty selection (a batch whose
    capabilities the decision refused stays empty). The caller grades every padding id `low`:
    a low candidate costs an agent a few tokens, an empty slot a function it never sees."""
    room = budget - len(selection)
    if not selection or room <= 0:
        return []
    lane_ids = [[doc_id for doc_id, _ in lane] for lane in lanes]
    tail_ids = [[doc_id for doc_id, _ in tail] for tail in tails]
    order = chain(interleave(lane_ids, exclude=selection), interleave(tail_ids, exclude=selection))
    fill = (doc_id for doc_id in distinct(order) if namespace_of(doc_id) is not None)
    return list(islice(fill, room))


def concatenate(selections: Sequence[Sequence[str]]) -> list[str]:
    """The batches' selections in batch order, duplicates removed (up to 36 ids)."""
    seen: dict[str, None] = {}
    for selection in selections:
        for doc_id in selection:
            seen.setdefault(doc_id, None)
    return list(seen)


def group_by_namespace(ids: Sequence[str], descriptions: Mapping[str, str],
                       confidence: Mapping[str, str] | None = None) -> list[dict]:
    """`[{namespace, functions: [{function_id, description}]}]`: ids unknown to `descriptions`
    or without a namespace are skipped; namespaces in first-seen order, rank order within. With
    `confidence`, each function also carries its `confidence` (`high` when not listed)."""
    groups: dict[str, list[dict[str, str]]] = {}
    for doc_id in ids:
        namespace = namespace_of(doc_id)
        if namespace is None or doc_id not in descriptions:
            continue
        entry = {"function_id": doc_id, "description": descriptions[doc_id]}
        if confidence is not None:
            entry["confidence"] = confidence.get(doc_id, "high")
        groups.setdefault(namespace, []).append(entry)
    return [{"namespace": ns, "functions": functions} for ns, functions in groups.items()]
