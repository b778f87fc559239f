"""Learned fusion of an admitted catalog lane (chosen for this project).

A lane that admits its dense ranking ranks the union of its first `DENSE_CANDIDATES` (20) dense
hits and first `LEXICAL_CANDIDATES` (20) BM25 hits (one matched term is enough here: admission
already decided that the request is served) by a linear score over twenty features of each
candidate:

| feature | meaning |
|---|---|
| `cos` | its cosine to the request (outside the dense top 64: the 64th cosine) |
| `dense_rr` | `1 / (1 + dense rank)`, 0 outside the dense top 64 |
| `bm25` | its BM25 score over the lane's best BM25 score, 0 when it matched no term |
| `bm25_rr` | `1 / (1 + BM25 rank)`, 0 when it matched no term |
| `matched` | distinct request terms it matched over the request's distinct terms |
| `action` | 1 when its action agrees with the request's (`vocabulary.function_actions`) |
| `worker_named` | 1 when the request names its worker (`crm`, `calendar`, `sheets` …) |
| `id_words` | share of its id's words (`send`, `message`, `presign`, `url`) the request holds |
| `lexical_worker` | 1 when its worker is the worker of the BM25 leader |
| `dense_worker` | share of the dense top four that belongs to its worker |
| `rrf` | its score in the weighted RRF of the coverage-pruned lexical lane and the dense cut, over the best |
| `pruned` | 1 when it survives coverage pruning of the lexical lane |
| `two_terms` | 1 when it matched at least two distinct request terms |
| `cos_desc` | the request's cosine to its description alone (`views.py`) |
| `cos_act` | the request's cosine to its id read as a phrase (`hr::time-off::request` → "request time off hr") |
| `view_max` | the largest of `cos`, `cos_desc`, `cos_act` |
| `view_mean` | their mean |
| `cos_second` | the cosine of the request cut to its action and object (`second_query.py`) to it |
| `second_max` | the larger of `cos` and `cos_second` |
| `second_mean` | their mean |

The weights are fitted by `benchmarks/fit_fusion.py`: pairwise logistic regression (every
relevant candidate of a capability against every other candidate of it; L2 0.01, 300 gradient
steps of 0.5 from zero) over the graded capabilities of the eval set's dev split and our own
case sets (`benchmarks/data/extra_cases.json`, `extra2_cases.json`), never the test split;
`fit_fusion.py --write` writes them to `data/fitted.json`, which this module reads.

Why learned: a hand-tuned fusion fits the wordings it was tuned on; the fitted one held up on
case sets written after it (docs/record/search-quality.md, "Figures from the search/ docstrings").

Multi-view features: four features read two more embeddings of each function (`views.py`).
Until a catalog's views are embedded (or above `views.VIEW_LIMIT` functions) a lane is scored by
`WEIGHTS_WITHOUT_VIEWS`, the thirteen-feature fit.

Second-query features: the last three read a second embedding of the request, its leading verb
and concept words (`send an email to a customer` → "send email customer"), embedded with the
capability when a call embeds at most `second_query.SECOND_QUERY_CAPABILITIES` (6)
capabilities; a lane without it is scored by `WEIGHTS_WITHOUT_SECOND`, the seventeen-feature fit.

The head re-sorted: in a lane with the second query, the first `HEAD` (3) candidates of the
learned order are re-sorted by a second linear score, `HEAD_WEIGHTS` over the twenty features
plus the z-scores of `cos`, `view_max` and `cos_second` over the lane's candidates
(`head_rows`: how far a candidate stands out of this request's candidates, whatever the
catalog's cosine scale), fitted by `fit_fusion.py` on the same pairs as `WEIGHTS`. Only the
head: over the whole list those z-scores reorder the tail and cost recall@12, while on the head
the first twelve stay the same set. Positions keep their scores, so a re-sorted lane's scores
still descend.

The lane's scores are `exp(score − best score)` (the leader scores 1); selection does not apply
the namespace floor to a learned lane (`select.select_batch`).
"""

from __future__ import annotations

import math
from operator import mul
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from . import fitted
from .corpus import DocumentSet, namespace_of
from .lanes import CATALOG, Ranking, fuse
from .views import SecondCosines, ViewCosines
from .vocabulary import ID_WORD, function_actions, normal_term, normal_terms, request_actions

DENSE_CANDIDATES = 20  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)
LEXICAL_CANDIDATES = 20  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)
LEXICAL_DEPTH = 50  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)
DENSE_WORKER_HEAD = 4  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)

FEATURES: tuple[str, ...] = ("cos", "dense_rr", "bm25", "bm25_rr", "matched", "action",
                             "worker_named", "id_words", "lexical_worker", "dense_worker",
                             "rrf", "pruned", "two_terms")
"""The thirteen features every lane has (the static lane's fusion reads these too)."""
VIEW_FEATURES: tuple[str, ...] = ("cos_desc", "cos_act", "view_max", "view_mean")
VIEWED_FEATURES: tuple[str, ...] = FEATURES + VIEW_FEATURES
"""The features of a lane whose catalog views are known (`views.py`)."""
SECOND_FEATURES: tuple[str, ...] = ("cos_second", "second_max", "second_mean")
SECOND_VIEWED_FEATURES: tuple[str, ...] = VIEWED_FEATURES + SECOND_FEATURES
"""The features of a lane whose views are known and whose request has its second embedding
(`second_query.py`)."""
HEAD_FEATURES: tuple[str, ...] = ("cos_z", "view_max_z", "second_z")
HEAD_SCORED_FEATURES: tuple[str, ...] = SECOND_VIEWED_FEATURES + HEAD_FEATURES
"""The features the head of such a lane is re-sorted by (`head_rows`)."""
HEAD = 3  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)
"""How many of the lane's first candidates the head score re-sorts."""

WEIGHTS: tuple[float, ...] = fitted.weights("fusion.WEIGHTS", SECOND_VIEWED_FEATURES)
"""Fitted (data/fitted.json, `benchmarks/fit_fusion.py`): one weight per feature of
`SECOND_VIEWED_FEATURES`."""

HEAD_WEIGHTS: tuple[float, ...] = fitted.weights("fusion.HEAD_WEIGHTS", HEAD_SCORED_FEATURES)
"""Fitted (data/fitted.json, `benchmarks/fit_fusion.py`) over every candidate, like `WEIGHTS`;
one weight per feature of `HEAD_SCORED_FEATURES`. They re-sort only the first `HEAD` candidates."""

WEIGHTS_WITHOUT_SECOND: tuple[float, ...] = fitted.weights("fusion.WEIGHTS_WITHOUT_SECOND",
                                                           VIEWED_FEATURES)
"""Fitted (data/fitted.json): the `VIEWED_FEATURES` weights of a lane whose request has no second
embedding, `fit_fusion.py` with the three second-query columns zeroed."""

WEIGHTS_WITHOUT_VIEWS: tuple[float, ...] = fitted.weights("fusion.WEIGHTS_WITHOUT_VIEWS", FEATURES)
"""Fitted (data/fitted.json): the `FEATURES` weights of a lane whose views are not known yet,
`fit_fusion.py` with the view and second-query columns zeroed."""

@lru_cache(maxsize=65536)
def id_words(function_id: str) -> frozenset[str]:
    """The normal terms of an id's words: `storage::presignUrl` → storage, presign, url."""
    return frozenset(normal_terms(word.lower() for segment in function_id.split("::")
                                  for word in ID_WORD.findall(segment)))


@lru_cache(maxsize=4096)
def worker_term(namespace: str) -> frozenset[str]:
    """The terms that name a worker in a request: its namespace's normal term, and that of its
    singular when the namespace is a plural (`sheets` → sheet)."""
    names = {normal_term(namespace.lower())}
    if namespace.endswith("s") and len(namespace) > 3:
        names.add(normal_term(namespace[:-1].lower()))
    return frozenset(names)


@lru_cache(maxsize=65536)
def candidate_facts(function_id: str, description: str
                    ) -> tuple[str | None, frozenset[str], frozenset[str], int, frozenset[str]]:
    """What the features read of one function whatever the request: its worker
    (`namespace_of`), the terms that name that worker (`worker_term`), its id's words
    (`id_words`) and their count (at least 1), and its action classes
    (`vocabulary.function_actions`) — looked up once per candidate, not five times."""
    worker = namespace_of(function_id)
    words = id_words(function_id)
    return (worker, worker_term(worker) if worker else frozenset(), words, max(1, len(words)),
            function_actions(function_id, description))


@dataclass(frozen=True)
class Request:
    """What the features need of one request: its distinct normal terms, its BM25 terms and its
    action classes."""

    terms: frozenset[str]
    bm25_terms: tuple[str, ...]
    actions: frozenset[str]

    @classmethod
    def of(cls, terms: Sequence[str]) -> Request:
        """The request of a query's §4 terms."""
        return cls(frozenset(normal_terms(terms)), tuple(terms), request_actions(terms))


def features(request: Request, documents: DocumentSet, pruned: Ranking, dense: Ranking,
             describe: Callable[[str], str], views: ViewCosines | None = None,
             second: SecondCosines | None = None
             ) -> tuple[list[str], list[tuple[float, ...]]]:
    """The candidates of one lane and their feature rows, in `FEATURES` order — in
    `VIEWED_FEATURES` order when `views` gives the request's cosines to the candidates'
    description and action views (`views.py`), and in `SECOND_VIEWED_FEATURES` order when
    `second` also gives the cosines of the request's action-and-object embedding to them
    (`second_query.py`; read only with `views`); `pruned` is the lane's lexical ranking
    (`lanes.lexical_ranking`)."""
    hits = documents.bm25(list(request.bm25_terms), 1, LEXICAL_DEPTH)
    best = hits[0][1] if hits else 1.0
    # each id's last position in each list, as a dict built over the list keeps it
    lexical_at = {doc_id: rank for rank, (doc_id, _, _) in enumerate(hits)}
    dense_at = {doc_id: rank for rank, (doc_id, _) in enumerate(dense)}
    floor = dense[-1][1] if dense else 0.0
    head_count: dict[str | None, int] = {}
    for doc_id, _ in dense[:DENSE_WORKER_HEAD]:
        worker = namespace_of(doc_id)
        head_count[worker] = head_count.get(worker, 0) + 1
    leader_worker = namespace_of(hits[0][0]) if hits else None
    terms = request.terms
    actions_asked = request.actions
    distinct = max(1, len(terms))
    in_pruned = {doc_id for doc_id, _ in pruned}
    fused = fuse(pruned, dense, CATALOG)
    rrf_best = fused[0][1] if fused else 1.0
    rrf = dict(fused)
    candidates = list(dict.fromkeys(
        [doc_id for doc_id, _ in dense[:DENSE_CANDIDATES]]
        + [doc_id for doc_id, _, _ in hits[:LEXICAL_CANDIDATES]]))
    rows = []
    for doc_id in candidates:
        dense_rank = dense_at.get(doc_id)
        cos = floor if dense_rank is None else dense[dense_rank][1]
        bm25_rank = lexical_at.get(doc_id)
        if bm25_rank is None:
            bm25, matched = 0.0, 0
        else:
            _, score_of, matched = hits[bm25_rank]
            bm25 = score_of / best
        worker, named_by, words, word_count, actions = candidate_facts(doc_id, describe(doc_id))
        fused_score = rrf.get(doc_id)
        rows.append((
            cos,
            1.0 / (1 + dense_rank) if dense_rank is not None else 0.0,
            bm25,
            1.0 / (1 + bm25_rank) if bm25_rank is not None else 0.0,
            matched / distinct,
            1.0 if actions_asked and not actions.isdisjoint(actions_asked) else 0.0,
            1.0 if worker and not named_by.isdisjoint(terms) else 0.0,
            len(words & terms) / word_count,
            1.0 if worker is not None and worker == leader_worker else 0.0,
            head_count.get(worker, 0) / DENSE_WORKER_HEAD if worker else 0.0,
            fused_score / rrf_best if fused_score is not None else 0.0,
            1.0 if doc_id in in_pruned else 0.0,
            1.0 if matched >= 2 else 0.0,
        ))
    if views is not None and candidates:
        descs, acts = views(candidates)
        if second is None:
            rows = [row + (desc, act, max(row[0], desc, act), (row[0] + desc + act) / 3.0)
                    for row, desc, act in zip(rows, descs, acts)]
        else:
            rows = [row + (desc, act, max(row[0], desc, act), (row[0] + desc + act) / 3.0,
                           other, max(row[0], other), (row[0] + other) / 2.0)
                    for row, desc, act, other in zip(rows, descs, acts, second(candidates))]
    return candidates, rows


def score(row: Sequence[float], weights: Sequence[float] = WEIGHTS) -> float:
    """The learned score of one feature row: the weighted sum."""
    return sum(map(mul, weights, row))


def _spread(values: Sequence[float]) -> tuple[float, float]:
    """Mean and population standard deviation of `values` (sums in list order)."""
    mean = sum(values) / len(values)
    return mean, math.sqrt(sum([(v - mean) ** 2 for v in values]) / len(values))


_Z_COLUMNS = tuple(SECOND_VIEWED_FEATURES.index(name) for name in ("cos", "view_max", "cos_second"))


def head_rows(rows: Sequence[tuple[float, ...]], which: Sequence[int] | None = None
              ) -> list[tuple[float, ...]]:
    """`SECOND_VIEWED_FEATURES` rows with `HEAD_FEATURES` added: the z-scores of `cos`,
    `view_max` and `cos_second` over all the lane's candidates (`rows`) — how far each stands out
    of this request's candidates, whatever the catalog's cosine scale; for the rows at `which`
    (every row when None)."""
    if not rows:
        return []
    stats = [_spread([row[i] for row in rows]) for i in _Z_COLUMNS]
    chosen = range(len(rows)) if which is None else which
    return [tuple(rows[k]) + tuple((rows[k][i] - mean) / spread if spread > 0.0 else 0.0
                                   for i, (mean, spread) in zip(_Z_COLUMNS, stats))
            for k in chosen]


def learned_lane(request: Request, documents: DocumentSet, pruned: Ranking, dense: Ranking,
                 describe: Callable[[str], str], views: ViewCosines | None = None,
                 second: SecondCosines | None = None) -> Ranking:
    """The candidates ranked by the learned score, scored `exp(score − best)`; ties keep
    candidate order (dense first). Without `views` the weights fitted without them score,
    without `second` those fitted without the second query; with `second` the first `HEAD`
    are then re-sorted by the head score (`resort_head`), each position keeping its score."""
    if views is None:
        second = None
    candidates, rows = features(request, documents, pruned, dense, describe, views, second)
    if not candidates:
        return []
    weights = (WEIGHTS if second is not None else WEIGHTS_WITHOUT_SECOND) if views is not None \
        else WEIGHTS_WITHOUT_VIEWS
    values = [sum(map(mul, weights, row)) for row in rows]  # `score` of each row
    # by score descending, ties in candidate order: a stable sort on the negated score
    order = sorted(range(len(values)), key=[-value for value in values].__getitem__)
    scored = [(values[k], k, candidates[k]) for k in order]
    best = scored[0][0]
    ranked = [doc_id for _, _, doc_id in scored]
    if second is not None:
        ranked = resort_head(scored, rows) + ranked[HEAD:]
    return [(doc_id, math.exp(value - best)) for doc_id, (value, _, _) in zip(ranked, scored)]


def resort_head(scored: Sequence[tuple[float, int, str]], rows: Sequence[tuple[float, ...]]
                ) -> list[str]:
    """The ids of the first `HEAD` entries of `scored` (`(score, candidate position, id)` in
    learned order) sorted by their `HEAD_WEIGHTS` score over `head_rows` (ties keep their
    order)."""
    head = scored[:HEAD]
    extended = head_rows(rows, [position for _, position, _ in head])
    order = sorted(range(len(head)), key=lambda k: -score(extended[k], HEAD_WEIGHTS))
    return [head[k][2] for k in order]
