"""Simpler static-lane rules, measured through the pipeline (issue 19, sixth round).

    .venv/bin/python benchmarks/static_rules.py                 # every variant, one process each
    .venv/bin/python benchmarks/static_rules.py --variant NAME  # one variant, this process

Each variant patches the tree in this process (never the source), then runs
`static_variants.pipeline_row` — `--mode static` R@12 / MRR@1 / no-match FP on eval `dev`,
`extra`, `extra2` and the held-out catalog, and how many of 200 seeded chatter sentences per
catalog and 200 near misses get an answer. Never `test`. Variants (`VARIANTS`):

* `tree` — the tree as it is; `lexical` — `--mode lexical`, for reference.
* `lexical-decision` — the static mode decides with the lexical family (concept coverage of
  the fused lane's first three) instead of the static family; the vouch stays.
* `either-decision` — yes when either family says yes.
* `both-decision` — yes only when both families say yes (the vouch stays).
* `no-drop` — a lexical lane the static top 32 does not corroborate is fused, not dropped.
* `no-alone` — an empty lexical lane (after the expansion) stays empty.
* `plain` — `no-drop` and `no-alone`: RRF with the leader guard and the expansion, no gates.
* `bm25-tail` — an answered lane's tail is its static tail, then lexical's BM25 tail.
* `prf-K-B` — Rocchio in the static space: the query vector plus B × the mean of its first K
  static hits' vectors, normalised, searched again (K 3 / 5, B 0.5 / 1).
* `lprf-K-B` — the same with the lexical lane's first K hits as the feedback (lanes with a
  lexical lane only; the others keep their static ranking).
* `prf-order-K-B`, `lprf-order-K-B` — the same, but the moved ranking only orders the lane
  (cut, fusion, learned order, tail); the gates and the decision read the first ranking.
* `rerank-K` — a lane with a lexical lane is its first K BM25 hits re-ranked by RRF of their
  lexical and static ranks, leader kept, then the rule's fused lane (K 12 / 24).
* `alone-C` — an empty lexical lane takes the static head alone from best cosine C (0.58 in
  the tree; the decision still reads the lane).
* `cal-NAME` — the static family's calibration `CALIBRATIONS[NAME]`: refits of one recording
  (`fit_answerability.py record --mode static`, `fit --mode static`), fitted on the eval
  catalog's sets (`eval`) or on the held-out catalog (`held`), without (6) or with (7) the
  concept coverage; combine with `--variant` twice.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import subprocess
import sys
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from iii_directory.search import (answerability, confidence, lanes, service,  # noqa: E402
                                  static_evidence, static_lane)
from iii_directory.search.static_lane import StaticLane  # noqa: E402

from static_failures import ROOT  # noqa: E402
from static_variants import all_sets, pipeline_row  # noqa: E402

Ranking = list[tuple[str, float]]


def yes_no(decide: Callable[..., list[Ranking]]) -> Callable[..., list[tuple[Ranking, Any]]]:
    """A yes/no lane decision as the service's graded one (`confidence.graded_lanes`): a kept
    lane is `high`, an emptied one has no confidence (these variants predate `low`)."""
    return lambda *args, **kwargs: [(lane, confidence.HIGH if lane else None)
                                    for lane in decide(*args, **kwargs)]


def decision(rule: Callable[[bool, bool], bool]) -> None:
    """Patch the service's decision: `rule(static family yes, lexical family yes)`, or the
    static vouch."""

    def answerable_lanes(queries: Sequence[Any], documents: Any, lanes_: Sequence[Ranking],
                         dense: Any, describe: Any, lexical: Any = None, screened: Any = None,
                         admitted: Any = None) -> list[Ranking]:
        if dense is not None:
            return confidence.answerable_lanes(queries, documents, lanes_, dense, describe,
                                               lexical, screened, admitted)
        out = []
        for position, (query, lane) in enumerate(zip(queries, lanes_)):
            if lane:
                cosine = static_evidence.static_cosine(query)
                lexical_found = answerability.signals(
                    query.text, query.terms, documents, None, lane, describe, None,
                    None, screened[position] if screened is not None else None)
                if cosine is None:
                    yes = answerability.answerable(lexical_found)
                else:
                    static_found = dataclasses.replace(lexical_found, extra=cosine)
                    yes = (rule(answerability.answerable(static_found),
                                answerability.answerable(lexical_found))
                           or answerability.vouches(query, static_found))
                if not yes:
                    lane = []
            out.append(lane)
        return out

    service.graded_lanes = yes_no(answerable_lanes)  # type: ignore[assignment]


def undropped(fuse_static: Callable[[Ranking, Ranking], Ranking], lexical: Ranking,
              ranking: Ranking) -> Ranking:
    """`fuse_static` with the corroboration gate lifted for this one call."""
    saved = static_lane.CORROBORATION_DEPTH
    static_lane.CORROBORATION_DEPTH = 10 ** 6
    try:
        return fuse_static(lexical, ranking)
    finally:
        static_lane.CORROBORATION_DEPTH = saved


def fuse(no_drop: bool = False, no_alone: bool = False) -> None:
    original = static_lane.fuse_static

    def fuse_static(lexical: Ranking, ranking: Ranking) -> Ranking:
        if not lexical:
            return [] if no_alone else original(lexical, ranking)
        if no_drop and not static_lane.corroborated(lexical, ranking):
            return undropped(original, lexical, ranking)
        return original(lexical, ranking)

    static_lane.fuse_static = fuse_static  # type: ignore[assignment]


def bm25_tail() -> None:
    original = StaticLane.fuse_lanes

    async def fuse_lanes(self: StaticLane, call: Any, queries: Any, pairs: Any) -> Any:
        fused, tails = await original(self, call, queries, pairs)
        if not tails:
            return fused, tails
        documents = call.corpus.documents
        out = []
        for query, lane, tail in zip(queries, fused, tails):
            extra = lanes.bm25_tail(lane, documents,
                                    answerability.informative_terms(query.text, query.terms))
            held = {d for d, _ in tail}
            out.append(tail + [(d, s) for d, s in extra if d not in held])
        return fused, out

    StaticLane.fuse_lanes = fuse_lanes  # type: ignore[method-assign]


def _unit(vector: Sequence[float]) -> array:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return array("f", (x / norm for x in vector))


def prf(depth: int, beta: float, lexical_feedback: bool, order_only: bool = False) -> None:
    """Rocchio in the static space (see the module docstring). `order_only`: the moved
    ranking orders the lane (cut, fusion, learned order, tail) while the gates and the
    decision's evidence read the first ranking."""
    vectors: dict[str, list[array]] = {}
    original_build = StaticLane._build

    def build(self: StaticLane, corpus: Any) -> Any:
        built = original_build(self, corpus)
        _, texts = corpus.index_inputs()
        vectors[corpus.fingerprint] = self.encoder.encode(texts)
        return built

    StaticLane._build = build  # type: ignore[method-assign]
    feedback: dict[str, list[str]] = {}
    moved_of: dict[int, Ranking] = {}
    original_rankings = StaticLane.rankings

    async def rankings(self: StaticLane, corpus: Any, texts: Sequence[str],
                       mode: str = "hybrid") -> Any:
        first = await original_rankings(self, corpus, texts, mode)
        if first is None:
            return first
        _, ids, index, _ = self._index
        rows = {doc_id: row for row, doc_id in enumerate(ids)}
        table = vectors[corpus.fingerprint]
        out = []
        for text, ranking in zip(texts, first):
            chosen = feedback.get(text) if lexical_feedback else [d for d, _ in ranking[:depth]]
            if not chosen:
                out.append(ranking)
                continue
            query = self.encoder.encode_one(text)
            mean = [0.0] * len(query)
            for doc_id in chosen[:depth]:
                for i, x in enumerate(table[rows[doc_id]]):
                    mean[i] += x / len(chosen[:depth])
            moved = _unit([q + beta * m for q, m in zip(query, mean)])
            again = [(ids[row], cos) for row, cos in index.search(moved, static_lane.STATIC_K)]
            if order_only:
                moved_of[id(ranking)] = again
                out.append(ranking)
            else:
                out.append(again)
        return out

    StaticLane.rankings = rankings  # type: ignore[method-assign]
    if lexical_feedback:
        original_fuse = StaticLane.fuse_lanes

        async def fuse_lanes(self: StaticLane, call: Any, queries: Any, pairs: Any) -> Any:
            feedback.clear()
            feedback.update({q.dense_text: [d for d, _ in lane[:depth]]
                             for q, (lane, _) in zip(queries, pairs)})
            return await original_fuse(self, call, queries, pairs)

        StaticLane.fuse_lanes = fuse_lanes  # type: ignore[method-assign]
    if order_only:
        fuse_static, learned_order = static_lane.fuse_static, static_lane.learned_order
        tail, cut = static_lane.static_tail, static_lane.static_cut

        def moved_fuse(lexical: Ranking, ranking: Ranking) -> Ranking:
            moved = moved_of.get(id(ranking), ranking)
            if not lexical:
                return cut(moved) if static_lane.answers_alone(ranking) else []
            if not static_lane.corroborated(lexical, ranking):
                return []
            return undropped(fuse_static, lexical, moved)

        static_lane.fuse_static = moved_fuse  # type: ignore[assignment]
        static_lane.learned_order = (  # type: ignore[assignment]
            lambda lane, lexical, ranking, *rest: learned_order(
                lane, lexical, moved_of.get(id(ranking), ranking), *rest))
        static_lane.static_tail = (  # type: ignore[assignment]
            lambda lane, ranking: tail(lane, moved_of.get(id(ranking), ranking)))


def rerank(depth: int) -> None:
    original = static_lane.fuse_static

    def fuse_static(lexical: Ranking, ranking: Ranking) -> Ranking:
        fused = original(lexical, ranking)
        if not lexical or not fused:
            return fused
        head = lexical[:depth]
        positions = {d: i for i, (d, _) in enumerate(ranking)}
        by_static = sorted(head, key=lambda item: positions.get(item[0], len(ranking)))
        reranked = lanes.weighted_rrf(head, by_static, 1.0)
        leader = lexical[0][0]
        top = fused[0][1]
        ordered = [leader] + [d for d, _ in reranked if d != leader]
        held = set(ordered)
        return ([(d, top) for d in ordered]
                + [(d, s) for d, s in fused if d not in held])

    static_lane.fuse_static = fuse_static  # type: ignore[assignment]


CALIBRATIONS: dict[str, tuple[tuple[float, ...], float, float]] = {
    # `fit_answerability.py fit --mode static` on one recording (sixth round), the static family
    # without (6 weights) and with (7) the concept coverage, fitted on either side
    "eval6": ((0.7776, 2.8404, 1.7606, 1.3134, 0.8688, 6.2002), -6.5649, -0.6928),
    "eval7": ((0.7408, 2.3723, 1.4356, 1.2647, 0.8469, 5.5063, 2.0053), -6.5885, -0.7193),
    "held6": ((0.5645, 2.4279, -6.9049, -0.0878, 0.4193, 6.6484), 2.7352, 1.0704),
    "held7": ((0.4913, 1.5938, -6.7429, -0.1541, 0.3808, 5.4850, 3.3827), 1.8417, 0.9258),
}
"""A 6-weight calibration ignores the concept input (`features` is zipped with the weights)."""


def calibration(name: str) -> None:
    answerability.CALIBRATION["static"] = CALIBRATIONS[name]


VARIANTS: dict[str, Callable[[], None]] = {
    "tree": lambda: None,
    "lexical": lambda: None,
    "lexical-decision": lambda: decision(lambda static, lexical: lexical),
    "either-decision": lambda: decision(lambda static, lexical: static or lexical),
    "both-decision": lambda: decision(lambda static, lexical: static and lexical),
    "no-drop": lambda: fuse(no_drop=True),
    "no-alone": lambda: fuse(no_alone=True),
    "plain": lambda: fuse(no_drop=True, no_alone=True),
    "bm25-tail": bm25_tail,
    **{f"prf-{k}-{b}": (lambda k=k, b=b: prf(k, b, False)) for k in (3, 5) for b in (0.5, 1.0)},
    **{f"lprf-{k}-{b}": (lambda k=k, b=b: prf(k, b, True)) for k in (3, 5) for b in (0.5, 1.0)},
    **{f"prf-order-{k}-{b}": (lambda k=k, b=b: prf(k, b, False, True))
       for k in (3, 5) for b in (0.5, 1.0)},
    **{f"lprf-order-{k}-{b}": (lambda k=k, b=b: prf(k, b, True, True))
       for k in (3, 5) for b in (0.5, 1.0)},
    **{f"cal-{name}": (lambda name=name: calibration(name)) for name in CALIBRATIONS},
    **{f"alone-{c}": (lambda c=c: setattr(static_lane, "ALONE_COSINE", c))
       for c in (0.40, 0.45, 0.50, 0.54)},
    **{f"rerank-{k}": (lambda k=k: rerank(k)) for k in (12, 24)},
}


def variant_main(doc: str, variants: dict[str, Callable[[], None]], script: str,
                 measure: Callable[[Path, list[str] | None, list[str]], str]) -> None:
    """The command line of a variant script: `--variant NAME` (repeatable) patches the tree
    with those variants and prints `measure(eval dir, --set names, variant names)`; without
    it, `script` runs once per variant, each in a process of its own."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--eval-dir", type=Path, default=ROOT.parent / "shared" / "eval")
    parser.add_argument("--variant", action="append", help="patch these (combined), run here")
    parser.add_argument("--set", action="append")
    args = parser.parse_args()
    if args.variant:
        for name in args.variant:
            variants[name]()
        print(f"{'+'.join(args.variant):18} {measure(args.eval_dir, args.set, args.variant)}",
              flush=True)
        return
    for name in variants:
        subprocess.run([sys.executable, script, "--variant", name,
                        "--eval-dir", str(args.eval_dir)], check=True)


def measure(eval_dir: Path, names: list[str] | None, variants: list[str]) -> str:
    sets = [s for s in all_sets(eval_dir) if not names or s[0] in names]
    return pipeline_row(sets, "lexical" if variants == ["lexical"] else "static")


def main() -> None:
    variant_main(__doc__, VARIANTS, __file__, measure)


if __name__ == "__main__":
    sys.exit(main())
