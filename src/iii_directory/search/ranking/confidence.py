"""How sure search is of each capability's candidates: `high`, `low`, or none at all (issue 31).

An agent pays a few tokens to read and reject a weak candidate, but an empty answer tells it
the capability does not exist; so the answerability decision grades instead of refusing:

* **none** — certainly unservable: a refused class (`answerability.screen`: no real words, an
  excluded id, an intrinsic need) or nothing reaching the weak evidence floor (`weak_floor`);
* **high** — the calibrated decision says yes (`answerability.answerable`), or, without a MiniLM
  cosine, the static lane vouches for it (`answerability.vouches`), and the capability clears
  the `confident` boundary (a relative margin, not the yes/no threshold);
* **low** — everything else: what the decision used to refuse; and a lane's recall tail (the
  padding that fills the budget the lanes leave) is `low` whatever its lane's grade.

The same rule serves hybrid, lexical and the static lane, each family with the signals it has
(`answerability.Signals`). The judge mode grades nothing itself: the judge keeps (promotes to
`high`) or drops candidates. Why the floor is where it is: docs/record/search-quality.md, "Confidence
instead of refusal".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from . import answerability
from .answerability import (CALIBRATION, Evidence, Screening, Signals, answerable,
                            evidence_floor, family, informative_terms, score, signals, vouches)
from .corpus import DocumentSet
from .lanes import Ranking
from .static_evidence import static_cosine

Confidence = Literal["high", "low"]
HIGH: Confidence = "high"
LOW: Confidence = "low"

_QUESTION = re.compile(r"\s*(?:what|what's|where|where's|when|who|who's|whom|whose|which|how"
                       r"|is|are|was|were|does|do|did|has|have|any)\b(?!\s+an?\b)",
                       re.IGNORECASE)
"""A question's opener: a wh-word, or an auxiliary or `any` that opens a yes/no question; `what
a …` and `how a …` are exclamations. `can` / `could you …` open a polite command, whose verb
names its action."""


def asks_question(text: str) -> bool:
    """`text` opens as a question (`_QUESTION`): it asks for a fact, which is itself the action
    ("where is truck KL-442 right now" asks to read a location)."""
    return _QUESTION.match(text) is not None


_VALUE = re.compile(
    r"\d"                                     # a number, an amount, a date, a code with digits
    r"|(?:^|(?<=[\s(\[{,:]))[\"'\u2018\u201c`]\S"  # an opening quote: a quoted name or text
    r"|@\w|::|://|\w\.\w"                     # an e-mail or handle, an id, a URL, a file name
    r"|\w_\w|[a-z][A-Z]"                       # a snake_case or camelCase identifier
    r"|(?<![.!?]\s)(?<=\s)[A-Z][a-z]+")        # a capitalised name inside the sentence
"""A value a system would be handed: what a request to a tool carries (`PO 7781`, `'Pike Place
Market, Seattle'`, `signups_today`, `ana@corp.io`, `Northwind Ltd`) and a remark does not."""


def carries_value(text: str) -> bool:
    """`text` holds a value (`_VALUE`): a digit, a quoted span, an address, handle, id, URL or
    file name, a code identifier, or a capitalised word that does not open a sentence."""
    return _VALUE.search(text.strip()) is not None


STATIC_VALUE_COSINE = 0.45  # chosen: the least that answers no more of our no-match cases
"""Static family: the least best static cosine (`Signals.extra`) that, with a value in the
request, earns `low` candidates without a content term (docs/record/search-quality.md, "The weak
floor, round four")."""

CONCEPT_FLOOR = 0.55  # chosen: no unrelated request answered (docs/record/search-quality.md)
"""Lexical and static families: the least concept coverage (`Signals.concepts`) that, with a
named action, earns `low` candidates without the lexical evidence floor."""


def weak_floor(found: Signals, question: bool = False, value: bool = False) -> bool:
    """The least evidence that earns a capability `low` candidates: the hand-set evidence floor
    of the calibrated decision (`answerability.evidence_floor`: an id-named content term, or
    weaker lexical evidence the encoder does not contradict); or some content term matched
    (`Signals.rare_matched` > 0) in a request that carries a `value` (`carries_value`: an
    argument for a tool — a number, a quoted span, an id, a name — which a remark has not); or,
    in hybrid, a best cosine standing `HIGH_MARGIN` above the catalog's background (the margin a
    `high` answer needs) for a request that carries a value or asks a `question`, in the static
    family (lexical mode has no `Signals.extra`) a best static cosine of `STATIC_VALUE_COSINE`
    for a request that carries a value; or, for a request that names an action
    (`Signals.action` is not None), a sign that its meaning is in the catalog — in hybrid a
    dense ranking the lane admits (`Signals.admitted`; a request
    that asks a `question`, `asks_question`, or carries a `value` counts as naming one), in the
    lexical and static families a concept coverage of the lane's first candidates
    (`Signals.concepts`, static word vectors) of at least `CONCEPT_FLOOR`. Random letters,
    cooking steps and weather small talk stay under it on the eval and example catalogs
    (tests/unit/search/test_answerability_properties.py); a best cosine of 0.30, corroboration
    alone, a content term alone or a concept coverage of 0.45 let small talk through
    (docs/record/search-quality.md, "Several needs, round two", "Confidence, round three" and
    "The weak floor, round four"). Concept coverage does not serve hybrid: read beside a dense
    ranking the lane does not admit, it answered random letters ("see")."""
    if evidence_floor(found):
        return True
    if value and found.rare_matched > 0:
        return True
    if (value or question) and (found.margin or 0.0) >= HIGH_MARGIN:
        return True
    if value and found.cosine is None and (found.extra or 0.0) >= STATIC_VALUE_COSINE:
        return True
    if found.admitted:
        return found.action is not None or question or value
    return (found.cosine is None and found.action is not None and found.concepts is not None
            and found.concepts >= CONCEPT_FLOOR)


HIGH_MARGIN = 0.17  # chosen: near misses given `high` ≤ 1/10 (docs/record/search-quality.md)
"""Hybrid: the least margin of the best cosine over the catalog's background (`Signals.margin`,
best cosine less the median of the dense top 64) for a `high` answer."""

HIGH_SCORE_MARGIN = 0.9  # chosen: near misses given `high` ≤ 1/10 (docs/record/search-quality.md)
"""Lexical family: how far above its yes threshold (`CALIBRATION`) the calibrated log-odds
(`answerability.score`) must be for a `high` answer — the least at which the lexical and static
families meet the near-miss criterion of `confident`."""

STATIC_HIGH_SCORE_MARGIN = 1.0  # chosen: held-out no-match `high` ≤ 1/5 (docs/record/search-quality.md)
"""Static family: the same margin over its own yes threshold, the least (by steps of 0.05 from
`HIGH_SCORE_MARGIN`) at which our own no-match requests over the held-out catalog get a `high`
answer at most a fifth of the time; the near misses over the eval catalog stay under a tenth."""

SCORE_MARGINS: dict[str, float] = {"lexical": HIGH_SCORE_MARGIN, "static": STATIC_HIGH_SCORE_MARGIN}
"""The `high` score margin of each family without a MiniLM cosine."""


def confident(found: Signals) -> bool:
    """The `high` boundary, above the yes of the decision: in hybrid the best cosine stands
    `HIGH_MARGIN` above the catalog's background similarity to the request (a margin relative to
    this catalog, not an absolute cosine); without a MiniLM cosine the calibrated log-odds clear
    the family's threshold by its margin (`SCORE_MARGINS`: `HIGH_SCORE_MARGIN` lexical,
    `STATIC_HIGH_SCORE_MARGIN` static). Each boundary is the lowest at which seeded near-miss
    requests over the eval catalog (tool-like requests for services it lacks,
    benchmarks/fit_answerability_nearmiss.py) get a `high` answer at most a tenth of the time —
    the criterion the yes threshold was fitted to; the yes alone gave them 13–20 % — and, static,
    our no-match requests over the held-out catalog at most a fifth."""
    kind = family(found)
    if kind == "hybrid":
        return (found.margin or 0.0) >= HIGH_MARGIN
    return score(found) >= CALIBRATION[kind][2] + SCORE_MARGINS[kind]


def grade(found: Signals, vouched: bool = False, question: bool = False,
          value: bool = False) -> Confidence | None:
    """The confidence of one capability's candidates (module docstring): None for a refused
    class or below `weak_floor` (`question`: the request asks one; `value`: it carries one);
    when `answerable` (or
    `vouched` for by the static lane), `high` if `confident`, else `low`; `low` above the weak
    floor otherwise."""
    if found.refused:
        return None
    if vouched or answerable(found):
        return HIGH if confident(found) else LOW
    return LOW if weak_floor(found, question, value) else None


def graded_lanes(queries: Sequence[object], documents: DocumentSet, lanes: Sequence[Ranking],
                 dense: Sequence[Ranking | None] | None,
                 describe: Callable[[str], str],
                 lexical: Sequence[tuple[Ranking, int]] | None = None,
                 screened: Sequence[Screening | None] | None = None,
                 admitted: Sequence[bool | None] | None = None,
                 evidence: Sequence[Evidence | None] | None = None
                 ) -> list[tuple[Ranking, Confidence | None]]:
    """Each lane with its `grade` (`queries` are `query.Query` objects; the arguments are those
    of `answerability.signals`, per capability); an ungraded lane is emptied. Without dense
    rankings the best static cosine this call's static lane saw (`static_cosine`) is the
    `extra` signal and the static lane may vouch. The observer (`answerability.observe`) is
    handed the decision's yes (answerable or vouched for), before the `confident` boundary."""
    out: list[tuple[Ranking, Confidence | None]] = []
    for position, (query, lane) in enumerate(zip(queries, lanes)):
        if not lane:
            out.append((lane, None))
            continue
        ranking = dense[position] if dense is not None else None
        extra = static_cosine(query) if dense is None else None
        found = signals(query.text, query.terms, documents,  # type: ignore[attr-defined]
                        ranking, lane, describe, extra,
                        lexical[position] if lexical is not None else None,
                        screened[position] if screened is not None else None,
                        admitted[position] if admitted is not None else None,
                        evidence[position] if evidence is not None else None)
        vouched = dense is None and not found.refused and vouches(query, found)
        text = query.text  # type: ignore[attr-defined]
        level = grade(found, vouched, asks_question(text), carries_value(text))
        yes = not found.refused and (vouched or answerable(found))
        answerability.notify(query.text, found, lane, yes)  # type: ignore[attr-defined]
        out.append((lane if level is not None else [], level))
    return out


FALLBACK_DEPTH = 12  # spec: docs/rules/search.md §7.2 (the budget of 12)


def fallback_lanes(documents: DocumentSet, queries: Sequence[object], lanes: Sequence[Ranking],
                   exact: Sequence[Ranking | None]) -> tuple[list[Ranking], list[bool]]:
    """Lexical and static lanes: a lane left empty (the two-term minimum, coverage pruning, no
    static hit) becomes the first `FALLBACK_DEPTH` BM25 hits of the request's informative
    terms (`answerability.informative_terms`) with one term matched, so the graded decision
    still sees candidates; returns the lanes and which ones are such fallbacks — graded `low`
    at best (one shared word is thin evidence). An exact-id capability keeps its lane."""
    out: list[Ranking] = []
    fallback: list[bool] = []
    for query, lane, hit in zip(queries, lanes, exact):
        filled = not lane and hit is None
        if filled:
            terms = informative_terms(query.text, query.terms)  # type: ignore[attr-defined]
            lane = [(doc_id, score) for doc_id, score, _ in
                    documents.bm25(terms, 1, FALLBACK_DEPTH)] if terms else []
        out.append(lane)
        fallback.append(filled and bool(lane))
    return out, fallback


def static_fallback_positions(queries: Sequence[object], lanes: Sequence[Ranking],
                              exact: Sequence[Ranking | None]) -> list[int]:
    """The positions whose lane the static ranking fills (`static_fallback_lanes`): still empty
    after `fallback_lanes`, no exact id, and a request that `carries_value` — the only requests
    whose weak floor a static ranking alone can reach (`STATIC_VALUE_COSINE`); without a value,
    a lane of static neighbours of a one-word request ("see", no content concept) would pass the
    concept coverage."""
    return [i for i, (query, lane, hit) in enumerate(zip(queries, lanes, exact))
            if not lane and hit is None
            and carries_value(query.text)]  # type: ignore[attr-defined]


def static_fallback_lanes(lanes: Sequence[Ranking], fallback: Sequence[bool],
                          empty: Sequence[int], rankings: Sequence[Ranking] | None
                          ) -> tuple[list[Ranking], list[bool]]:
    """Static lane: each lane at a position of `empty` (still empty after `fallback_lanes`: no
    informative word of the request is in the catalog) becomes the first `FALLBACK_DEPTH` of its
    static ranking (`rankings`, one per position of `empty`, by static cosine), and is marked a
    fallback (graded `low` at best); the lanes unchanged when there are no rankings."""
    out, marked = list(lanes), list(fallback)
    if rankings is None:
        return out, marked
    for position, ranking in zip(empty, rankings):
        if ranking:
            out[position] = list(ranking[:FALLBACK_DEPTH])
            marked[position] = True
    return out, marked


def answerable_lanes(queries: Sequence[object], documents: DocumentSet, lanes: Sequence[Ranking],
                     dense: Sequence[Ranking | None] | None, describe: Callable[[str], str],
                     lexical: Sequence[tuple[Ranking, int]] | None = None,
                     screened: Sequence[Screening | None] | None = None,
                     admitted: Sequence[bool | None] | None = None) -> list[Ranking]:
    """`graded_lanes` (same arguments) with every lane not graded `high` emptied: the graded
    decision read as a yes/no."""
    return [lane if level == HIGH else [] for lane, level in graded_lanes(
        queries, documents, lanes, dense, describe, lexical, screened, admitted)]


def id_confidence(lanes: Sequence[Ranking], tails: Sequence[Ranking],
                  levels: Sequence[Confidence | None]) -> dict[str, Confidence]:
    """Each candidate id of a batch with the best confidence it earns: a lane's entries take
    the lane's confidence, the entries of its recall tail (padding from the budget the lanes
    leave, `select.select_batch`) are `low`; a function that surely serves one capability is
    `high` even when it is a weak candidate for another."""
    out: dict[str, Confidence] = {}
    for position, level in enumerate(levels):
        if level is None:
            continue
        tail = tails[position] if position < len(tails) else []
        for held, grade_of in ((lanes[position], level), (tail, LOW)):
            for doc_id, _ in held:
                if out.get(doc_id) != HIGH:
                    out[doc_id] = grade_of
    return out


def merged_levels(batches: Sequence[Mapping[str, Confidence]]) -> dict[str, Confidence]:
    """The batches' `id_confidence` maps in one, `high` winning."""
    out: dict[str, Confidence] = {}
    for levels in batches:
        for doc_id, level in levels.items():
            if out.get(doc_id) != HIGH:
                out[doc_id] = level
    return out


def high_first(ids: Sequence[str], levels: Mapping[str, Confidence]) -> list[str]:
    """`ids` with the `high` ones first, each part in its own order (stable)."""
    return ([i for i in ids if levels.get(i, HIGH) == HIGH]
            + [i for i in ids if levels.get(i, HIGH) != HIGH])
