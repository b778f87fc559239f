"""The static lane's rule: one lane's ranking from its lexical lane and the static ranking of
the catalog (`static_lane.StaticLane` computes the rankings and applies this rule per lane).

A lane's rule (`fuse_static`), given its lexical lane (BM25 two-term minimum, coverage pruning,
single-term fallback) and the static ranking of the catalog (cosine to `Tool.dense_text`):
* lexical lane non-empty: the 1:1 reciprocal-rank fusion (k = 60) of the lexical lane and the
  static cut (the first `STATIC_DEPTH` (24) static hits within `STATIC_GAP` (0.20) of the best
  cosine), keeping BM25's leader first when the static lane puts it in its own first
  `LEADER_HEAD` (4) — a confident BM25 leader is one the other signal agrees with;
* but a lexical lane whose leader's worker holds none of the first `CORROBORATION_DEPTH` (32)
  static hits is dropped (the static lane's vote on answerability: two shared words are weak
  evidence when the vectors place the worker nowhere near the request) — unless a worker that
  holds two of the first `ALONE_HEAD` (4) static hits (the head that may answer alone) holds
  one of the lexical lane's first `CORROBORATING_HITS` (3): the vectors then agree with a
  lexical hit below a stray leader (`browser::click` before `sms::verify::check`);
* lexical lane empty: first its static expansion (`static_expansion`: BM25 again with the
  catalog words nearest the request's unknown words, `expanded_lane`) stands in for it; still
  empty: the static cut alone only when its best cosine reaches `ALONE_COSINE`
  (0.58) and one worker holds two of its first four hits; otherwise the lane stays empty.
  Static cosines are compressed (no-match requests reach 0.55 on our sets), so the cosine alone
  never makes a lane answer.

Below its first place, a lane with a lexical lane is ordered by the learned linear fusion with the
static cosine in place of MiniLM's (`learned_order`, `STATIC_WEIGHTS`, fitted by
`benchmarks/fit_static_fusion.py`); the first place stays the rule's (after action agreement),
since the learned score alone chose a worse first place through the pipeline.

Last, a lane whose own lexical lane is not empty keeps that lane's first `LEXICAL_HEAD` (3)
hits inside its first `LEXICAL_WINDOW` (4) (`keep_lexical_head`): a capability sharing the
budget of 12 with others selects about its first 12 / n hits, and BM25's head should be among
them.

An answered lane (not an exact id) also leaves a recall tail of its first `TAIL_DEPTH` (6)
static hits it does not hold, spent only from the budget the lanes leave, as the hybrid's dense
tail.

A capability the answerability decision refuses is answered anyway when the static lane
vouches for it (`answerability.vouches`: one worker holds the whole static head, the request
names an action, the static family's calibrated score ≥ 0).

The measurements behind each of these rules, and what was tried and not kept:
docs/record/search-quality.md, "Static lane" and "Figures from the search/ docstrings".
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Any

from . import fitted, fusion
from .corpus import namespace_of
from .lanes import ACTION_BONUS, Ranking, action_agreement, lexical_lane, weighted_rrf
from .static_evidence import VOUCH_HEAD
from .static_expansion import CatalogWords, expanded_terms


STATIC_DEPTH = 24  # spec: docs/rules/search.md §5.5 (as the dense cut)
STATIC_GAP = 0.20  # spec: docs/rules/search.md §5.5 (as the dense cut)
LEADER_HEAD = 4  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)
ALONE_COSINE = 0.58  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)
ALONE_HEAD = 4  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)
CORROBORATION_DEPTH = 32  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)
CORROBORATING_HITS = 3  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)
TAIL_DEPTH = 6  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)
LEXICAL_HEAD = 3  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)
LEXICAL_WINDOW = 4  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)
LEARNED_TEMPERATURE = 7.0  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)
STATIC_WEIGHTS: tuple[float, ...] = fitted.weights("static_lane.STATIC_WEIGHTS", fusion.FEATURES)
"""Fitted (data/fitted.json, `benchmarks/fit_static_fusion.py`): `fusion.FEATURES` weights with
the static cosine in place of MiniLM's."""


def static_cut(ranking: Ranking) -> Ranking:
    """The first `STATIC_DEPTH` hits within `STATIC_GAP` of the best cosine."""
    if not ranking:
        return []
    floor = ranking[0][1] - STATIC_GAP
    return [(doc_id, cos) for doc_id, cos in ranking if cos >= floor][:STATIC_DEPTH]


def answers_alone(ranking: Ranking) -> bool:
    """A static ranking may stand for an empty lexical lane: best cosine ≥ `ALONE_COSINE` and a
    worker holding two of the first `ALONE_HEAD` hits."""
    if not ranking or ranking[0][1] < ALONE_COSINE:
        return False
    workers = Counter(ns for ns in (namespace_of(d) for d, _ in ranking[:ALONE_HEAD]) if ns)
    return bool(workers) and workers.most_common(1)[0][1] >= 2


def corroborated(lexical: Ranking, ranking: Ranking) -> bool:
    """The static lane supports a lexical lane: the lexical leader's worker holds one of the
    first `CORROBORATION_DEPTH` (32) static hits, or a worker holding two of the first
    `ALONE_HEAD` (4) static hits holds one of the first `CORROBORATING_HITS` (3) lexical hits."""
    leader = namespace_of(lexical[0][0])
    if any(namespace_of(d) == leader for d, _ in ranking[:CORROBORATION_DEPTH]):
        return True
    head = Counter(ns for ns in (namespace_of(d) for d, _ in ranking[:ALONE_HEAD]) if ns)
    return any(head[namespace_of(d)] >= 2 for d, _ in lexical[:CORROBORATING_HITS])


def fuse_static(lexical: Ranking, ranking: Ranking) -> Ranking:
    """One lane's ranking from its lexical lane and its static ranking (module docstring)."""
    if not lexical:
        return static_cut(ranking) if answers_alone(ranking) else []
    if not corroborated(lexical, ranking):
        return []
    fused = weighted_rrf(lexical, static_cut(ranking), 1.0)
    leader = lexical[0][0]
    if fused and fused[0][0] != leader and any(d == leader for d, _ in ranking[:LEADER_HEAD]):
        top = fused[0][1]
        return [(leader, top)] + [(d, s) for d, s in fused if d != leader]
    return fused


def learned_order(lane: Ranking, lexical: Ranking, ranking: Ranking, request: Any,
                  documents: Any, describe: Callable[[str], str]) -> Ranking:
    """An answered lane with a lexical lane, re-ordered below its leader by the learned fusion
    (`fusion.features` scored with `STATIC_WEIGHTS`): the first place stays what the rule and
    action agreement put there (`lanes.action_agreement`, as the service applies it next), the
    rest follow the learned score, scored `exp((score − best) / LEARNED_TEMPERATURE)` — flat
    enough that the namespace floor (`select.namespace_floor`, 0.4 of the top) keeps the
    candidates a learned lane would keep. The leader carries the top score × (1 +
    `ACTION_BONUS`), so the service's agreement pass cannot move it. `request` is a
    `fusion.Request`."""
    if not lane:
        return lane
    candidates, rows = fusion.features(request, documents, lexical, ranking, describe)
    if not candidates:
        return lane
    scored = sorted(((fusion.score(row, STATIC_WEIGHTS), position, doc_id)
                     for position, (doc_id, row) in enumerate(zip(candidates, rows))),
                    key=lambda item: (-item[0], item[1]))
    best = scored[0][0]
    leader = action_agreement(lane, request.actions, describe)[0][0]
    rest = [(doc_id, math.exp((value - best) / LEARNED_TEMPERATURE))
            for value, _, doc_id in scored if doc_id != leader]
    return [(leader, 1.0 + ACTION_BONUS)] + rest


def keep_lexical_head(lane: Ranking, lexical: Ranking) -> Ranking:
    """`lane` with the first `LEXICAL_HEAD` (3) lexical hits inside its first `LEXICAL_WINDOW`
    (4): those it ranks lower move, in lexical order, to the end of that window (never before
    its first place), scored as the hit before them, so a lane sharing the budget of 12 with
    other capabilities still selects what BM25 alone would have."""
    top = {doc_id for doc_id, _ in lane[:LEXICAL_WINDOW]}
    missing = [doc_id for doc_id, _ in lexical[:LEXICAL_HEAD] if doc_id not in top]
    if not lane or not missing:
        return lane
    rest = [(doc_id, score) for doc_id, score in lane if doc_id not in missing]
    at = min(max(LEXICAL_WINDOW - len(missing), 1), len(rest))
    score = rest[at - 1][1]
    return rest[:at] + [(doc_id, score) for doc_id in missing] + rest[at:]


def expanded_lane(encoder: Any, words: CatalogWords, documents: Any, query: Any) -> Ranking:
    """The lexical lane of `query` with its static expansion (`static_expansion`): BM25 over
    its terms and the catalog words nearest its unknown words — for a lane whose own lexical
    lane came out empty; empty when nothing expands."""
    neighbours = words.neighbours(encoder, query.text)
    if not neighbours:
        return []
    return lexical_lane(documents, expanded_terms(query.terms, neighbours))[0]


def head_share(ranking: Ranking, head: int = VOUCH_HEAD) -> int:
    """How many of the first `head` static hits the most frequent worker holds."""
    workers = Counter(ns for ns in (namespace_of(d) for d, _ in ranking[:head]) if ns)
    return workers.most_common(1)[0][1] if workers else 0


def static_tail(lane: Ranking, ranking: Ranking) -> Ranking:
    """The recall tail of an answered lane: its first `TAIL_DEPTH` static hits that the lane
    does not hold (selection spends only the budget the lanes leave, `select.select_batch`)."""
    if not lane or not TAIL_DEPTH:
        return []
    held = {doc_id for doc_id, _ in lane}
    return [(d, cos) for d, cos in ranking if d not in held][:TAIL_DEPTH]
