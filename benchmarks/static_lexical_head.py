"""Can lexical+static keep what lexical alone finds? Rules measured through the pipeline
(issue 19, seventh round).

    .venv/bin/python benchmarks/static_lexical_head.py                 # each variant, own process
    .venv/bin/python benchmarks/static_lexical_head.py --variant NAME  # one variant, here

Each variant patches the tree in this process (never the source) and runs `--mode lexical` and
`--mode static` through the bench's pipeline (`iii_directory.bench.run_mode`) on eval `dev`,
`extra`, `extra2`, the held-out catalog, 200 seeded chatter sentences per catalog and 200 near
misses (`static_variants.all_sets`; never `test`). Per case set it prints static R@12 / MRR@1 /
no-match FP, then `lost` — relevant functions (grade ≥ 2) lexical selects in its 12 and static
does not, counted per case — and `gained`, the reverse; per negative set, how many static answers
and how many of those lexical refuses, by cause (`static_vs_lexical.fp_cause`).

Every variant reads *the lexical verdict* of a capability whose lexical lane is not empty: the
lexical family's decision (`answerability.answerable` over `signals` of its action-agreed
lexical lane, as `--mode lexical` takes it) and its content evidence (`Signals.rare_matched`).
Variants (`VARIANTS`):

* `tree` — the tree as it is.
* `head-N-W` — when the lexical verdict is yes, lexical's first N hits the fused lane does not
  hold in its first W are moved (in lexical order) to the end of that window, scored as the hit
  before them (the leader is never displaced): `static_lane.keep_lexical_head`, which the tree
  has applied to every lane with N = 3, W = 4 since this round.
* `undrop` — when the lexical verdict is yes, a lexical lane the corroboration gate dropped is
  fused as if corroborated (RRF + leader guard, learned order, static tail).
* `undrop-S`, `head-N-W-S` — the same, only when the lexical content evidence is ≥ S (1: an
  id-named content term or two described ones; 2: `answerability.STRONG_CONTENT`).
* `always-N-W` — the head guard whatever the lexical verdict.
* `answer-S` — a capability the static decision (and the vouch) refuses is answered with its
  lane when the lexical verdict is yes with content evidence ≥ S.
* `share-K-D` — a lexical lane is also corroborated when the worker holding ≥ K of the first
  four static hits holds one of its first D hits (`static_lane.corroborated` has taken K = 2,
  D = 3 since this round, so on the tree as it is these only widen it).
* `no-vouch`, `no-expand`, `no-alone` — the vouch, the static expansion, the static head alone
  for an empty lexical lane taken away (what answers the negatives lexical refuses).

Combine with `--variant A --variant B`. Figures: docs/search-quality.md, "Static lane", seventh round.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from iii_directory import bench  # noqa: E402
from iii_directory.search import answerability, confidence, service, static_lane  # noqa: E402
from iii_directory.search.corpus import namespace_of  # noqa: E402
from iii_directory.search.fusion import Request  # noqa: E402
from iii_directory.search.lanes import action_agreement  # noqa: E402
from iii_directory.search.static_evidence import VOUCH_HEAD  # noqa: E402
from iii_directory.search.static_lane import StaticLane  # noqa: E402
from iii_directory.search.vocabulary import request_actions  # noqa: E402

from static_rules import variant_main, yes_no  # noqa: E402
from static_variants import all_sets  # noqa: E402
from static_vs_lexical import Seen, fp_cause, run  # noqa: E402

Ranking = list[tuple[str, float]]

VERDICTS: dict[str, tuple[bool, float]] = {}
"""Capability text → (lexical verdict, lexical content evidence) of the last static call."""


def lexical_verdict(call: Any, query: Any, lexical: Ranking) -> tuple[bool, float]:
    """The lexical family's decision over the action-agreed lexical lane, and its content
    evidence."""
    descriptions = call.corpus.descriptions
    describe: Callable[[str], str] = lambda function_id: descriptions.get(function_id, "")
    agreed = action_agreement(lexical, request_actions(query.terms), describe)
    found = answerability.signals(query.text, query.terms, call.corpus.documents, None, agreed,
                                  describe)
    return answerability.answerable(found), found.rare_matched


def undropped(lexical: Ranking, ranking: Ranking) -> Ranking:
    """`static_lane.fuse_static` with the corroboration gate lifted for this one call (the
    leader's worker may be beyond the static top `STATIC_K`)."""
    saved = static_lane.corroborated
    static_lane.corroborated = lambda lexical, ranking: True  # type: ignore[assignment]
    try:
        return static_lane.fuse_static(lexical, ranking)
    finally:
        static_lane.corroborated = saved  # type: ignore[assignment]


def guard(lane: Ranking, lexical: Ranking, head: int, window: int) -> Ranking:
    """`static_lane.keep_lexical_head` with `head` and `window` in place of its constants."""
    saved = static_lane.LEXICAL_HEAD, static_lane.LEXICAL_WINDOW
    static_lane.LEXICAL_HEAD, static_lane.LEXICAL_WINDOW = head, window
    try:
        return static_lane.keep_lexical_head(lane, lexical)
    finally:
        static_lane.LEXICAL_HEAD, static_lane.LEXICAL_WINDOW = saved


def assure(head: int = 0, window: int = 12, undrop: bool = False, strong: float = 0.0,
           always: bool = False) -> None:
    """Patch `StaticLane.fuse_lanes`: record every lexical verdict; where it is yes with content
    evidence ≥ `strong` (or `always`), apply the head guard and/or the un-drop."""
    original = StaticLane.fuse_lanes

    async def fuse_lanes(self: StaticLane, call: Any, queries: Any, pairs: Any) -> Any:
        fused, tails = await original(self, call, queries, pairs)
        if not tails:
            return fused, tails
        rankings = await self.rankings(call.corpus, [q.dense_text for q in queries],
                                       call.settings.function_search_mode)
        descriptions = call.corpus.descriptions
        describe: Callable[[str], str] = lambda function_id: descriptions.get(function_id, "")
        fused, tails = list(fused), list(tails)
        for position, (query, (lexical, _), ranking) in enumerate(zip(queries, pairs, rankings)):
            if not lexical:
                continue
            yes, content = lexical_verdict(call, query, lexical)
            VERDICTS[query.text] = (yes, content)
            if not always and (not yes or content < strong):
                continue
            lane = fused[position]
            if undrop and not lane:
                lane = undropped(lexical, ranking)
                lane = static_lane.learned_order(lane, lexical, ranking, Request.of(query.terms),
                                                 call.corpus.documents, describe)
                tails[position] = static_lane.static_tail(lane, ranking)
            if head:
                lane = guard(lane, lexical, head, window)
            fused[position] = lane
        return fused, tails

    StaticLane.fuse_lanes = fuse_lanes  # type: ignore[method-assign]


def answer(strong: float) -> None:
    """Patch the service's decision: a lane the static decision refuses is kept when the
    lexical verdict is yes with content evidence ≥ `strong`."""
    original = confidence.answerable_lanes

    def answerable_lanes(queries: Sequence[Any], documents: Any, lanes_: Sequence[Ranking],
                         *args: Any, **kwargs: Any) -> list[Ranking]:
        out = original(queries, documents, lanes_, *args, **kwargs)
        kept = []
        for query, before, after in zip(queries, lanes_, out):
            yes, content = VERDICTS.get(query.text, (False, 0.0))
            kept.append(before if before and not after and yes and content >= strong else after)
        return kept

    service.graded_lanes = yes_no(answerable_lanes)  # type: ignore[assignment]


def head_corroborates(share: int, depth: int) -> None:
    """Patch `static_lane.corroborated`: a lexical lane is also corroborated when the worker
    that holds ≥ `share` of the first `VOUCH_HEAD` (4) static hits holds one of the lexical
    lane's first `depth` hits."""
    original = static_lane.corroborated

    def corroborated(lexical: Ranking, ranking: Ranking) -> bool:
        if original(lexical, ranking):
            return True
        workers = Counter(namespace_of(d) for d, _ in ranking[:VOUCH_HEAD])
        worker, held = workers.most_common(1)[0] if workers else (None, 0)
        return held >= share and any(namespace_of(d) == worker for d, _ in lexical[:depth])

    static_lane.corroborated = corroborated  # type: ignore[assignment]


def no_vouch() -> None:
    answerability.vouches = lambda query, found: False  # type: ignore[assignment]


def no_expand() -> None:
    static_lane.expanded_lane = lambda *args: []  # type: ignore[assignment]


def no_alone() -> None:
    static_lane.ALONE_COSINE = 2.0


VARIANTS: dict[str, Callable[[], None]] = {
    "tree": lambda: None,
    **{f"head-{n}-{w}": (lambda n=n, w=w: assure(head=n, window=w))
       for n, w in ((3, 3), (3, 4), (3, 6), (3, 12), (5, 6), (5, 12), (8, 12))},
    **{f"head-{n}-{w}-{s}": (lambda n=n, w=w, s=s: assure(head=n, window=w, strong=s))
       for n, w in ((3, 4), (5, 6)) for s in (1, 2)},
    **{f"always-{n}-{w}": (lambda n=n, w=w: assure(head=n, window=w, always=True))
       for n, w in ((3, 4), (2, 3), (3, 6))},
    "undrop": lambda: assure(undrop=True),
    **{f"undrop-{s}": (lambda s=s: assure(undrop=True, strong=s)) for s in (1, 2)},
    **{f"answer-{s}": (lambda s=s: (assure(), answer(s))) for s in (1, 2)},
    **{f"share-{k}-{d}": (lambda k=k, d=d: head_corroborates(k, d))
       for k in (2, 3, 4) for d in (3, 6, 100)},
    "no-vouch": no_vouch,
    "no-expand": no_expand,
    "no-alone": no_alone,
}


def compare(name: str, cases: list[dict[str, Any]], lexical: dict[str, list[str]],
            static: dict[str, list[str]], lexical_seen: dict[str, Any],
            static_seen: dict[str, Any]) -> str:
    """One set's figures: R@12 / MRR@1 / FP and lost / gained (ranked sets), or answered and
    added-by-cause (negatives)."""
    if all(case["kind"] == "no_match" for case in cases):
        answered = [case for case in cases if static.get(case["id"])]
        causes: Counter[str] = Counter()
        for case in answered:
            if not lexical.get(case["id"]):
                text = case["capabilities"][0]
                causes[fp_cause(static_seen.get(text, {}), lexical_seen.get(text, {}))] += 1
        added = ",".join(f"{cause}:{count}" for cause, count in sorted(causes.items()))
        return f"{name} {len(answered)}/{len(cases)} (+{added or 0})"
    metrics = bench.score_cases(cases, {k: v for k, v in static.items()}, set())
    lost = gained = 0
    for case in cases:
        lex, sta = lexical.get(case["id"], []), static.get(case["id"], [])
        for qrel in case["qrels"]:
            if qrel["grade"] >= 2:
                lost += qrel["function_id"] in lex and qrel["function_id"] not in sta
                gained += qrel["function_id"] in sta and qrel["function_id"] not in lex
    return (f"{name} {metrics['recall_at_12']:.3f}/{metrics['mrr_at_1']:.3f}/"
            f"{metrics['false_positive_rate'] or 0:.3f} -{lost}+{gained}")


def measure(eval_dir: Path, names: Sequence[str] | None = None,
            variants: Sequence[str] = ()) -> str:
    """Every set's `compare` row, lexical and static run in this process."""
    seen = Seen()
    seen.install()
    row = []
    for name, catalog, cases in all_sets(eval_dir):
        if names and name not in names:
            continue
        lexical = run("lexical", catalog, cases, seen)
        lexical_seen = dict(seen.entries)
        static = run("static", catalog, cases, seen)
        row.append(compare(name, cases, lexical, static, lexical_seen, dict(seen.entries)))
    return "  ".join(row)


def main() -> None:
    variant_main(__doc__, VARIANTS, __file__, measure)


if __name__ == "__main__":
    sys.exit(main())
