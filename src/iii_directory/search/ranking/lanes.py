"""Per-capability ranking lanes (docs/rules/search.md §5.1, §5.4, §5.5).

A ranking is a list of `(id, score)` pairs, best first. Lanes are built from:
* the lexical ranking — BM25 (two distinct matched terms) with coverage pruning; when nothing
  matches two terms, single-term hits of a worker named twice at the top;
* the dense ranking — cosine similarity, admitted when its best cosine reaches 0.30, cut to the
  documents close to the best semantic match;
* their weighted reciprocal-rank fusion.

Two fusion policies: `AD_HOC` is §5.5 as written (registry contracts, skills, triggers);
`CATALOG`, for the installed function catalog, admits low-confidence lanes only when their dense
head is coherent and weights the dense list 1.5 (both chosen for this project, see
`catalog_admitted` and `CATALOG_DENSE_WEIGHT`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import _rank

from .corpus import DocumentSet, namespace_of
from .vocabulary import function_actions

Ranking = list[tuple[str, float]]

MIN_MATCHED_TERMS = 2  # spec: docs/rules/search.md §5.1
FALLBACK_HEAD = 3  # chosen, our change (docs/rules/search.md §5.1): the single-term fallback
LEXICAL_DEPTH = 100  # chosen: deeper than any lane's use of BM25
PRUNE_SCORE_FLOOR = 0.5  # spec: docs/rules/search.md §5.1
PRUNE_CO_RELEVANT = 0.85  # spec: docs/rules/search.md §5.1
ADMISSION_COSINE = 0.30  # spec: docs/rules/search.md §5.5
DENSE_DEPTH = 24  # spec: docs/rules/search.md §5.5
DENSE_GAP = 0.20  # chosen (docs/rules/search.md §5.5): tuned on dev
DENSE_K = 64  # spec: docs/rules/search.md §5.3
FUSION_WEIGHT = 1.0  # spec: docs/rules/search.md §5.5
RRF_K = 60  # spec: docs/rules/search.md §5.4
CONFIDENT_COSINE = 0.40  # chosen, our change (docs/rules/search.md §5.5): coherence below it
COHERENCE_HEAD = 4  # chosen, our change (docs/rules/search.md §5.5): the coherent dense head
LEXICAL_AGREEMENT_HEAD = 3  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)
COHERENCE_GAP = 0.06  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)
CORROBORATION_DEPTH = 16  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)
# chosen, our change (docs/rules/search.md §5.5): the catalog's dense weight
CATALOG_DENSE_WEIGHT = 1.5


def coverage_prune(hits: Sequence[tuple[str, float, int]]) -> Ranking:
    """Keep a hit iff `score ≥ 0.5·S` and (`matched ≥ M` or `score ≥ 0.85·S`), where S and M are
    the leader's score and matched-term count. Family members riding the namespace token plus one
    generic word sit at 44–57 % of a name-boosted leader; co-relevant functions at ≥ 85 %."""
    if not hits:
        return []
    _, leader_score, leader_matched = hits[0]
    return [
        (doc_id, score)
        for doc_id, score, matched in hits
        if score >= PRUNE_SCORE_FLOOR * leader_score
        and (matched >= leader_matched or score >= PRUNE_CO_RELEVANT * leader_score)
    ]


def single_term_fallback(hits: Sequence[tuple[str, float, int]],
                         head: int = FALLBACK_HEAD) -> Ranking:
    """The lexical lane when no document matches two distinct query terms (chosen for this
    project): if one worker (namespace) holds at least two of the first `head` (3) single-term
    hits, the lane is that worker's hits, coverage-pruned; otherwise it stays empty.

    The two-term minimum was the largest single loss of the lexical lane on the dev split (17 of
    the 78 relevant capability targets matched one query word: `transcribe the voice memo`,
    `translate the article`, `add the dates to my calendar`). Admitting every single-term hit
    made no-match wordings return something (`which` → `shell::which`, `set` →
    `chat::set-status`); a word that names a worker's family
    (`translate` → `translate::*`) is evidence, a word that touches scattered documents is not.
    A head of three keeps no-match wordings out
    (figures: docs/record/search-quality.md, "Figures from the search/ docstrings")."""
    workers = Counter(ns for ns in (namespace_of(doc_id) for doc_id, _, _ in hits[:head]) if ns)
    if not workers:
        return []
    worker, count = workers.most_common(1)[0]
    if count < 2:
        return []
    return coverage_prune([hit for hit in hits if namespace_of(hit[0]) == worker])


def lexical_lane(documents: DocumentSet, terms: Sequence[str]) -> tuple[Ranking, int]:
    """`lexical_ranking` and the number of distinct query terms its leader matched (1 for a
    single-term fallback lane, 0 for an empty one)."""
    hits = documents.bm25(terms, MIN_MATCHED_TERMS, LEXICAL_DEPTH)
    if hits:
        return coverage_prune(hits), hits[0][2]
    fallback = single_term_fallback(documents.bm25(terms, 1, LEXICAL_DEPTH))
    return fallback, 1 if fallback else 0


def lexical_ranking(documents: DocumentSet, terms: Sequence[str]) -> Ranking:
    """The lane's lexical ranking: BM25 with the two-term minimum, then coverage pruning, over
    the best `LEXICAL_DEPTH` (100) hits — a lane never contributes more than the selection
    budget, and a 50,000-function catalog would otherwise materialise thousands of hits. When
    nothing matches two terms, the `single_term_fallback` over the best single-term hits."""
    return lexical_lane(documents, terms)[0]


def raw_bm25(documents: DocumentSet, terms: Sequence[str], depth: int = LEXICAL_DEPTH) -> Ranking:
    """BM25 with the two-term minimum and no pruning (the judge shortlist), first `depth`."""
    return [(doc_id, score) for doc_id, score, _ in documents.bm25(terms, MIN_MATCHED_TERMS, depth)]


def weighted_rrf(first: Ranking, second: Ranking, weight: float | None = None) -> Ranking:
    """`score(id) = 1/(60 + rank_first) + weight/(60 + rank_second)` over 1-based first-occurrence
    ranks (a missing list adds 0); sorted by score, then rank in `first`, then rank in `second`,
    then id."""
    if not first and not second:
        return []
    w = FUSION_WEIGHT if weight is None else weight
    fused = _rank.rrf([[i for i, _ in first], [i for i, _ in second]], [1.0, w], RRF_K)
    return [(str(doc_id), float(score)) for doc_id, score in fused]


def is_admitted(dense: Ranking) -> bool:
    """A lane takes the dense ranking when its best cosine is ≥ 0.30 (inclusive)."""
    return bool(dense) and dense[0][1] >= ADMISSION_COSINE


def is_coherent(dense: Ranking, lexical: Sequence[tuple[str, float]] = (),
                head: int = COHERENCE_HEAD, lexical_head: int = LEXICAL_AGREEMENT_HEAD) -> bool:
    """The evidence names one worker twice: some namespace holds two of the first `head` (4)
    dense hits, or one of those hits' namespaces also holds one of the first `lexical_head` (3)
    hits of the lexical lane. Only dense hits within `COHERENCE_GAP` (0.06) of the best cosine
    count, and ids without a namespace never do. A worker with many functions lands two of them
    somewhere in the top four of almost any request; within 0.06 of the best they are a family
    answering together. The window of 0.06 keeps stray
    pairs out at equal recall
    (figures: docs/record/search-quality.md, "Figures from the search/ docstrings")."""
    if not dense:
        return False
    near = [doc_id for doc_id, cos in dense[:head] if cos >= dense[0][1] - COHERENCE_GAP]
    workers = [ns for ns in (namespace_of(doc_id) for doc_id in near) if ns]
    if not workers:
        return False
    if max(Counter(workers).values()) >= 2:
        return True
    return any(namespace_of(doc_id) in workers for doc_id, _ in lexical[:lexical_head])


def catalog_admitted(dense: Ranking, lexical: Sequence[tuple[str, float]] = ()) -> bool:
    """Admission of a lane over the installed catalog (chosen for this project): the best cosine
    is ≥ 0.40 (`CONFIDENT_COSINE`), or it is ≥ 0.30 and the evidence is coherent (`is_coherent`:
    a worker holds two of the first four dense hits, or one of them and a lexical leader).

    A capability that a worker serves pulls several of that worker's functions to the top (a
    family shares vocabulary), while a capability nothing serves scatters its nearest neighbours
    over unrelated workers at similar, middling cosines; MiniLM puts both at 0.30–0.40, so one
    fixed floor cannot separate them. The dense-head rule removes
    no-match answers at a small recall cost, which the lexical-agreement clause wins back
    (figures: docs/record/search-quality.md, "Figures from the search/ docstrings")."""
    if not is_admitted(dense):
        return False
    return dense[0][1] >= CONFIDENT_COSINE or is_coherent(dense, lexical)


def dense_cut(dense: Ranking) -> Ranking:
    """The first `DENSE_DEPTH` (24) dense hits whose cosine ≥ max(0.30, top cosine −
    `DENSE_GAP`). The gap, 0.20, was tuned on the dev split
    (figures: docs/record/search-quality.md, "Figures from the search/ docstrings")."""
    if not dense:
        return []
    floor = max(ADMISSION_COSINE, dense[0][1] - DENSE_GAP)
    return [(doc_id, cos) for doc_id, cos in dense if cos >= floor][:DENSE_DEPTH]


@dataclass(frozen=True)
class FusionPolicy:
    """How a hybrid lane admits its dense ranking and how much the dense list weighs in the
    fusion."""

    admit: Callable[[Ranking, Ranking], bool]
    """`admit(dense, lexical)`: whether the lane takes its dense ranking."""
    dense_weight: float
    unsure_dense_weight: float
    """The dense list's weight when its best cosine is under `CONFIDENT_COSINE` (0.40)."""
    corroborate: bool = False
    """Whether a lane that does not admit its dense ranking keeps its lexical ranking only when
    the dense ranking corroborates it."""


AD_HOC = FusionPolicy(lambda dense, lexical: is_admitted(dense), FUSION_WEIGHT, FUSION_WEIGHT)
"""§5.5 as written: admission at 0.30, weight 1.0 (registry contracts, skills, triggers)."""

CATALOG = FusionPolicy(catalog_admitted, CATALOG_DENSE_WEIGHT, FUSION_WEIGHT, corroborate=True)
"""The installed catalog: coherent admission and the dense list weighted 1.5. The weight, chosen
for this project, makes a semantic leader beat a lexical leader that the encoder places lower
(RRF ties otherwise go to the lexical rank); it goes with coherent admission, without which it
costs multi coverage. A lane admitted only by coherence (best cosine under 0.40) weighs its
dense list 1.0: a weak semantic leader should not outvote a clear lexical one
(figures: docs/record/search-quality.md, "Figures from the search/ docstrings")."""


def corroborated(lexical: Ranking, dense: Ranking, matched: int) -> bool:
    """Whether the dense ranking supports a lexical lane it was not admitted into (chosen for
    this project): the lexical leader's worker holds one of the first `CORROBORATION_DEPTH` (16)
    dense hits; for a single-term fallback lane (`matched` ≤ 1, the distinct terms its leader
    matched), one of the first `COHERENCE_HEAD` (4) at a cosine of at least 0.30.

    Two shared words are weak evidence when the encoder places the worker nowhere near the
    request: `buy shares … in my brokerage account` matched `calendar::list-calendars`
    ("shared", "account"), `start a live video call … right now` matched `cron::trigger` ("Run a
    scheduled job right now"), `reserve a table for four` fell back to `database::*` tables.
    The depth of 16 removes those no-match answers at equal recall
    (figures: docs/record/search-quality.md, "Figures from the search/ docstrings")."""
    if not lexical:
        return False
    if matched <= 1:
        workers = {namespace_of(doc_id) for doc_id, _ in lexical}
        return any(namespace_of(doc_id) in workers and cos >= ADMISSION_COSINE
                   for doc_id, cos in dense[:COHERENCE_HEAD])
    leader = namespace_of(lexical[0][0])
    return any(namespace_of(doc_id) == leader for doc_id, _ in dense[:CORROBORATION_DEPTH])


def hybrid_lane(lexical: Ranking, dense: Ranking, policy: FusionPolicy = AD_HOC,
                matched: int = MIN_MATCHED_TERMS) -> Ranking:
    """Default hybrid lane (no reranker): an admitted lane fuses its lexical ranking with the
    dense cut, its dense list weighted by the policy and the dense lane's confidence; a
    non-admitted lane keeps its lexical ranking — under a policy that asks for it, only when the
    dense ranking corroborates it (`corroborated`; `matched` is what `lexical_lane` reports)."""
    if not policy.admit(dense, lexical):
        if policy.corroborate and not corroborated(lexical, dense, matched):
            return []
        return lexical
    return fuse(lexical, dense, policy)


def fuse(lexical: Ranking, dense: Ranking, policy: FusionPolicy = AD_HOC) -> Ranking:
    """The weighted RRF of `lexical` and the dense cut, the dense list weighing the policy's
    `dense_weight` when the best cosine is ≥ 0.40 (`CONFIDENT_COSINE`), else its
    `unsure_dense_weight`."""
    confident = bool(dense) and dense[0][1] >= CONFIDENT_COSINE
    weight = policy.dense_weight if confident else policy.unsure_dense_weight
    return weighted_rrf(lexical, dense_cut(dense), weight)


TAIL_COSINE = 0.20  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)
TAIL_DEPTH = 6  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)


def answered_tail(lane: Ranking, dense: Ranking, answered: bool = False) -> Ranking:
    """The recall tail of an answered lane that admitted its dense ranking (chosen for this
    project): the first `TAIL_DEPTH` (6) dense hits at a cosine of at least `TAIL_COSINE` (0.20)
    that `lane` (the lane as ranked) does not hold; empty for an empty lane (a capability the
    answerability decision refused). Selection spends only the budget the lanes leave
    (`select.select_batch`), so a tail never displaces a ranked candidate.

    The dense cut (`dense_cut`) keeps the fused head precise, but a relevant function the
    encoder placed a little lower was then never returned although the budget of 12 was far
    from spent. Appended to the lane itself instead,
    the tail would cost recall in multi-capability batches, whose lanes share the budget
    (figures: docs/record/search-quality.md, "Figures from the search/ docstrings").
    `answered`: the lane is a need's, emptied, of a capability whose own lane is answered
    (`needs.answered_needs`); its tail is kept."""
    return ranking_tail(lane, [(doc_id, cos) for doc_id, cos in dense
                               if cos >= TAIL_COSINE], answered)[:TAIL_DEPTH]


def ranking_tail(lane: Ranking, ranking: Ranking, answered: bool = False) -> Ranking:
    """The entries of `ranking` that `lane` does not hold, in `ranking`'s order; empty for an
    empty lane (a capability the answerability decision refused). The recall tail of a hybrid
    lane that kept its lexical ranking (its dense ranking corroborated it without being
    admitted) is its learned fusion (`fusion.learned_lane`): the lexical head stays as the spec
    ranks it, the budget it leaves is filled in the learned order. An empty lane keeps its tail
    only when `answered` (a need's lane of an answered capability, `needs.answered_needs`)."""
    if not lane and not answered:
        return []
    held = {doc_id for doc_id, _ in lane}
    return [(doc_id, score) for doc_id, score in ranking if doc_id not in held]


BM25_TAIL_DEPTH = 12  # spec: docs/rules/search.md §7.2 (the budget of 12)


def bm25_tail(lane: Ranking, documents: DocumentSet, terms: Sequence[str],
              answered: bool = False) -> Ranking:
    """The recall tail of an answered lexical lane (chosen for this project): the BM25 hits of
    `terms` (the request's informative terms, `answerability.informative_terms`: one shared
    `into` made `compose::add` pad a geocoding request) with one matched term or more that
    `lane` does not hold — what coverage pruning, the two-term
    minimum and the namespace floor left out — in BM25 order, the first `BM25_TAIL_DEPTH` (12);
    empty for an empty lane (a capability the answerability decision refused). Selection spends
    only the budget the lanes leave (`select.select_batch`), so the lane's head is unchanged.

    A prior for the lane's own workers was measured and not kept: the padding joins its
    worker's entry in the response, ahead of the next capability's functions
    (figures: docs/record/search-quality.md, "Figures from the search/ docstrings").
    An empty lane keeps its tail when `answered` (`needs.answered_needs`)."""
    if not lane and not answered:
        return []
    hits = [(doc_id, score) for doc_id, score, _ in documents.bm25(terms, 1, LEXICAL_DEPTH)]
    return ranking_tail(lane, hits, answered)[:BM25_TAIL_DEPTH]


def exact_lane(capability: str, known: set[str] | dict[str, object] | DocumentSet,
               score: float = 0.0) -> Ranking | None:
    """`[(id, score)]` when the trimmed capability is exactly a known id, else None. Exact-id
    lanes bypass every model in every mode."""
    wanted = capability.strip()
    if isinstance(known, DocumentSet):
        hit = wanted in known.positions
    else:
        hit = wanted in known
    return [(wanted, score)] if hit else None


ACTION_BONUS = 0.25  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)


def action_agreement(ranking: Ranking, actions: frozenset[str],
                     describe: Callable[[str], str], bonus: float = ACTION_BONUS) -> Ranking:
    """`ranking` re-sorted with every function whose action agrees with the request's (their
    action classes intersect, `vocabulary.function_actions`) scored `× (1 + bonus)`; ties keep
    the lane's order. A request without a known leading verb leaves the lane as it is.

    Families share their namespace and most of their vocabulary, and the sentence encoder reads
    the object of a request far more than its verb (`store the value under the key` sat closer to
    `state::get` than to `state::set`); the verb is what tells siblings apart."""
    if not actions or not ranking:
        return ranking
    scored = [
        (score * (1.0 + bonus) if function_actions(doc_id, describe(doc_id)) & actions else score,
         position, doc_id)
        for position, (doc_id, score) in enumerate(ranking)
    ]
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [(doc_id, score) for score, _, doc_id in scored]
