"""Answerability: does anything in this catalog serve a capability at all? (docs/rules/search.md §14.4, "an
honest empty answer"; chosen for this project.)

One decision per capability, in every mode, from signals that do not depend on one catalog's
scale:

| signal | meaning |
|---|---|
| `known_share` | share of the request's words that are words at all: in the catalog's own vocabulary or among the whole words of the MiniLM tokenizer's vocabulary (`tokenizer.json`, read with the standard library, so BM25-only hosts have it too) |
| `rare_matched` | the content evidence of the best-matching document (`lexical_evidence`): request terms it matches that are neither ordinary English (`ORDINARY_RANK`) nor a bare verb, 1 each when its id names them, `DESCRIPTION_WEIGHT` (0.5) when only its description or arguments do — one shared ordinary word (`day`, `until`, `get`) is not evidence |
| `coverage` | that document's IDF-weighted coverage of the request's informative (not ordinary) terms: `Σ idf(matched) / Σ idf(request terms)`, a term the catalog never uses weighing the most (`idf = ln((N − df + 0.5)/(df + 0.5) + 1)`) |
| `cosine`, `margin` | the best cosine and its margin over the catalog's background similarity to the request (the median cosine of its dense top 64), hybrid only |
| `action` | whether the request's action class agrees with the action of a leading candidate (`vocabulary.function_actions`): any document with the best lexical evidence (siblings that match the same terms tie), else the lane's first; None when the request names no known verb |
| `concepts` | lexical and static families: the concept coverage of the lane's first three candidates (`concept_coverage.coverage`: the mean over the request's content words of their best static word-vector cosine to a word of the candidate, best candidate) |
| `extra` | the best static cosine (`static_evidence.static_cosine`) on lanes the static lane fused (`--mode static`, BM25-only hosts) |

Before the signals, three classes are refused outright: a request no more than half of whose
words are words (`known_share` ≤ `MIN_KNOWN_SHARE`, 0.5); a request that names an excluded
function id (the search itself, the engine control plane); an intrinsic need — summarising,
reasoning, formatting for a person to read (`intrinsic_need`) — unless the catalog has a
function whose id names that very verb. In hybrid, a yes needs the spec's lane gates as one of
its conditions (`supported`: the dense ranking admitted or corroborating the lexical lane; every
hybrid capability reaches the decision with its learned-fusion lane). Then a yes needs the
hand-set `evidence_floor` and a
calibrated score of its mode family (`hybrid`, `lexical`, `static`: `features`, `CALIBRATION`)
at or above the family's threshold — a logistic regression fitted by
`benchmarks/fit_answerability.py` on the eval catalog's sets only. A "no" does not empty
the capability's lane: `confidence.grade` returns its candidates as `low` unless it is below
the weak evidence floor (docs/record/search-quality.md, "Confidence instead of refusal").
Figures (before → after, cross-checks on the held-out catalog, what was tried): docs/record/search-quality.md,
"Answerability".
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import _rank

from . import concept_coverage, fitted, word_lists
from . import text_memo as memos
from .corpus import FILLER_TERMS, DocumentSet, index_terms, query_terms
from ...exclusions import is_excluded_id
from .lanes import catalog_admitted, corroborated
from .text import mask_non_prose
from .static_evidence import VOUCH_HEAD, VOUCH_SCORE, head_share_of
from .vocabulary import (ACTIONS, ID_WORD, LEADING_VERB_WINDOW, function_actions, normal_term,
                         normal_terms, request_actions)

Ranking = list[tuple[str, float]]

MIN_KNOWN_SHARE = 0.5  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)
COVERAGE_DEPTH = 20  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)


# -- words ------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def tokenizer_words() -> Mapping[str, int]:
    """The whole words (no `##` continuation pieces, ASCII letters, two or more) of the MiniLM
    tokenizer's vocabulary — about 21,700 English words and names — with their vocabulary ids.
    BERT's WordPiece vocabulary lists whole words roughly by corpus frequency (`the` is 1996,
    `until` 2127, `calendar` 8094), so the id is a usable frequency rank. A view of the static
    lane's compact vocabulary (`_rank.vocabulary.Subset`), no copy."""
    from _rank.static import packaged_vocabulary  # the static lane's parse, shared
    from _rank.vocabulary import Subset

    try:
        vocab = packaged_vocabulary()
    except (OSError, ValueError, KeyError):  # pragma: no cover - a broken install
        return {}
    return Subset(vocab, lambda word: (len(word) >= 2 and word.isascii() and word.isalpha()
                                       and word.islower()))


# chosen: where the tokenizer's ids stop being everyday English, read off the vocabulary
ORDINARY_RANK = 2400
"""Whole words with a vocabulary id below this are ordinary English (`the` … `until`, `day`,
`long`, `once`, `water`): a catalog that shares one of them with a request has shown nothing."""


@memos.text_memo(share=0.04)
def ordinary_terms(text: str) -> frozenset[str]:
    """The normal terms of a request that come only from ordinary English words."""
    vocabulary = tokenizer_words()
    ranks: dict[str, bool] = {}
    for word in ID_WORD.findall(text):
        word = word.lower()
        if not word.isalpha():
            continue
        term = normal_term(word)
        ordinary = vocabulary.get(word, ORDINARY_RANK) < ORDINARY_RANK
        ranks[term] = ranks.get(term, True) and ordinary
    return frozenset(term for term, ordinary in ranks.items() if ordinary)


@memos.text_memo(share=0.04)
def concept_words(text: str) -> tuple[str, ...]:
    """The content concepts of a request (`concept_coverage`): its prose words
    (`request_words`, first occurrence each) that are neither ordinary English
    (`ORDINARY_RANK`), stop words nor filler (`corpus.FILLER_TERMS`); remembered per text."""
    vocabulary = tokenizer_words()
    return tuple(word for word in dict.fromkeys(request_words(text))
                 if vocabulary.get(word, ORDINARY_RANK) >= ORDINARY_RANK
                 and word not in _rank.STOPWORDS and normal_term(word) not in FILLER_TERMS)


def informative_terms(text: str, terms: Sequence[str]) -> list[str]:
    """The request's §4 `terms` less those that come only from ordinary English words
    (`ordinary_terms`): what a padding hit must share with the request (`lanes.bm25_tail`)."""
    ordinary = ordinary_terms(text)
    return [term for term in terms if normal_term(term.lower()) not in ordinary]


def request_words(text: str) -> list[str]:
    """The prose words of a request, lowercase, two letters or more (camelCase split; URLs,
    addresses, code spans, ids and file names left out)."""
    return list(_request_words(text))


@memos.text_memo(share=0.06)
def _request_words(text: str) -> tuple[str, ...]:
    """`request_words`, remembered per text: the decision reads them twice (`known_share`,
    `concept_words`) and agents repeat capabilities."""
    prose = mask_non_prose(text)
    return tuple(word.lower() for word in ID_WORD.findall(prose)
                 if word.isalpha() and len(word) >= 2)


# -- catalog statistics -----------------------------------------------------------------------


@dataclass(frozen=True)
class CatalogStats:
    """Document frequencies of the normal terms, the raw words, and the id words of a set."""

    size: int
    df: dict[str, int]
    words: frozenset[str]
    id_words: frozenset[str]

    def idf(self, term: str) -> float:
        df = self.df.get(term, 0)
        return math.log((self.size - df + 0.5) / (df + 0.5) + 1.0)

    @property
    def max_idf(self) -> float:
        return math.log((self.size + 0.5) / 0.5 + 1.0)


_STATS_LOCK = threading.Lock()
_STATS: dict[int, tuple[DocumentSet, CatalogStats]] = {}
_STATS_KEPT = 8  # chosen: a few catalogs (installed, registry pages) alive at once; bounds memory


def catalog_stats(documents: DocumentSet) -> CatalogStats:
    """The statistics of `documents`, computed once per set (the last `_STATS_KEPT` sets)."""
    key = id(documents)
    with _STATS_LOCK:
        found = _STATS.get(key)
        if found is not None and found[0] is documents:
            return found[1]
    df: Counter[str] = Counter()
    words: set[str] = set()
    ids: set[str] = set()
    for document in documents.documents:
        raw = _rank.tokenize(document.lexical)
        words.update(raw)
        df.update(set(index_terms(raw)))
        ids.update(normal_terms(word.lower() for segment in document.id.split("::")
                                for word in ID_WORD.findall(segment)))
    stats = CatalogStats(len(documents), dict(df), frozenset(words), frozenset(ids))
    with _STATS_LOCK:
        _STATS[key] = (documents, stats)
        while len(_STATS) > _STATS_KEPT:
            _STATS.pop(next(iter(_STATS)))
    return stats


ACTION_NOUNS: frozenset[str] = frozenset(normal_terms(word_lists.words("answerability", "action_nouns")))
"""Action words that also name a thing a function is about (`send her a welcome email`;
data/words/answerability.json)."""

VERBS: frozenset[str] = frozenset(ACTIONS) - ACTION_NOUNS
"""Action words that are only verbs: shared with a function, they say nothing of its subject."""

DESCRIPTION_WEIGHT = 0.5  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)
"""What a content term matched only in a function's description or argument names counts,
against 1 for a term of its id: a word the id names is what the function is about, a word of
its description may be incidental (`wind` in "current conditions (temperature, wind …)")."""


@lru_cache(maxsize=65536)
def _id_terms(function_id: str) -> frozenset[str]:
    return frozenset(normal_terms(word.lower() for segment in function_id.split("::")
                                  for word in ID_WORD.findall(segment)))


def known_share(text: str, stats: CatalogStats) -> tuple[int, float]:
    """The number of prose words of a request and the share of them that are known words."""
    words = _request_words(text)
    if not words:
        return 0, 0.0
    vocabulary = tokenizer_words()
    known = sum(1 for w in words if w in vocabulary or w in stats.words
                or normal_term(w) in stats.df)
    return len(words), known / len(words)


# -- intrinsic needs --------------------------------------------------------------------------

INTRINSIC_VERBS: frozenset[str] = frozenset(normal_terms(word_lists.words("answerability",
                                                                    "intrinsic_verbs")))
"""Leading verbs of needs an agent serves itself (reasoning, summarising, planning, writing;
data/words/answerability.json)."""

_READABLE = re.compile(
    r"\b(?:human[- ]readable|(?:easy|easier|nice|nicer)\s+to\s+read|readable|for\s+(?:a\s+)?"
    r"(?:person|people|human|humans|reader|readers|me|the\s+user)\s+to\s+read|pretty[- ]?print"
    r"|so\s+(?:that\s+)?(?:a\s+)?(?:person|people|humans?|readers?|i|we|you|they|the\s+user)"
    r"\s+can\s+(?:easily\s+)?read"
    r"|in\s+plain\s+(?:english|language|words)|step\s+by\s+step|pros\s+and\s+cons)\b",
    re.IGNORECASE)
"""Phrases that say the work is for a reader or a line of thought, not for a system."""

_WRITE_FOR_READER = frozenset(normal_terms(word_lists.words("answerability", "write_for_reader")))
_PROSE = frozenset(normal_terms(word_lists.words("answerability", "prose")))
_CHANNEL = frozenset(normal_terms(word_lists.words("answerability", "channel")))


def intrinsic_need(text: str, terms: Sequence[str], stats: CatalogStats) -> bool:
    """A need the agent serves itself: the request's first term is an
    intrinsic verb (summarise, explain, reason, brainstorm, proofread …) that no catalog id
    names; or it asks for something to be made readable for a person / thought through step by
    step; or it asks to write prose (a letter, an essay, bullet points) and names no channel
    or store to put it in."""
    normal = [t for t in query_terms(terms)]
    if normal and normal[0] in INTRINSIC_VERBS and normal[0] not in stats.id_words:
        return True
    lead = normal[:3]
    if _READABLE.search(text):
        return True
    if any(t in _WRITE_FOR_READER for t in lead) and set(normal) & _PROSE \
            and not set(normal) & _CHANNEL:
        return True
    return False


def names_excluded_id(text: str) -> bool:
    """The request names an id that search never returns (`directory::search_functions`,
    `engine::functions::list` …)."""
    return any(is_excluded_id(token.strip("`'\".,;:()[]{}<>"))
               for token in text.split() if "::" in token)


# -- the decision -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Signals:
    """What the decision reads about one capability (see the module docstring)."""

    words: int
    known_share: float
    coverage: float
    rare_matched: float
    cosine: float | None = None
    margin: float | None = None
    action: bool | None = None
    extra: float | None = None
    refused: str = ""
    """Why the capability was refused before any score: `unreadable`, `excluded`,
    `intrinsic`; empty otherwise."""
    admitted: bool | None = None
    """Hybrid: the dense ranking is confident, or coherent with its lexical lane
    (`lanes.catalog_admitted`); None without a dense ranking."""
    corroborated: bool | None = None
    """Hybrid: the lexical lane's worker is among the dense ranking's leaders
    (`lanes.corroborated`); False without a lexical lane."""
    concepts: float | None = None
    """Lexical and static families (no MiniLM cosine): `concept_coverage.coverage` of the
    lane's first candidates; None in the other families or without the static table."""


def lexical_evidence(terms: Sequence[str], documents: DocumentSet, stats: CatalogStats,
                     text: str = "") -> tuple[float, int, str | None]:
    """`evidence_leads`, with its first document only."""
    coverage, content, leads = evidence_leads(terms, documents, stats, text)
    return coverage, content, leads[0] if leads else None


Evidence = tuple[float, float, list[str]]
"""`evidence_leads`' coverage, content count and lead ids."""


def evidence_leads(terms: Sequence[str], documents: DocumentSet, stats: CatalogStats,
                   text: str = "") -> Evidence:
    """The lexical evidence that one document serves the request, best over its first
    `COVERAGE_DEPTH` BM25 hits (one matched term): the number of *content* terms it matched —
    request terms that are neither ordinary English (`ordinary_terms`) nor the request's leading
    verb (agreement on the action is its own signal), each counting 1 when the document's id
    names it, else `DESCRIPTION_WEIGHT` — and nothing for a verb (`VERBS`: `getting` shares
    `get` with `tracker::ticket::get`) — then the IDF-weighted
    coverage of the request's informative (not ordinary) terms. Returns coverage, content count
    and the ids of the documents with that very evidence, in BM25 order (siblings that share
    the same matched terms — `github::actions::run` and `::status` for `CI` — tie, and the
    action signal reads all of them)."""
    ordinary = ordinary_terms(text)
    wanted = [t for t in dict.fromkeys(query_terms(terms)) if t not in ordinary]
    verb = leading_verb(terms)
    if not wanted:
        return 0.0, 0, []
    weights = {t: stats.idf(t) for t in wanted}
    total = sum(weights.values()) or 1.0
    best: tuple[float, float] = (0.0, 0.0)
    leads: list[str] = []
    coverages: dict[tuple[str, ...], float] = {}  # hits often match the very same terms
    term_sets, positions = documents.term_sets, documents.positions
    for doc_id, _, _ in documents.bm25(terms, 1, COVERAGE_DEPTH):
        held = term_sets[positions[doc_id]]
        matched = tuple([t for t in wanted if t in held])
        named = _id_terms(doc_id)
        content = sum([0.0 if t in VERBS else 1.0 if t in named else DESCRIPTION_WEIGHT
                       for t in matched if t != verb])
        coverage = coverages.get(matched)
        if coverage is None:
            coverage = coverages[matched] = sum([weights[t] for t in matched]) / total
        if (content, coverage) > best:
            best, leads = (content, coverage), [doc_id]
        elif (content, coverage) == best and leads:
            leads.append(doc_id)
    return best[1], best[0], leads


def leading_verb(terms: Sequence[str]) -> str | None:
    """The normal term that gives a request its action (`vocabulary.request_actions`)."""
    for term in normal_terms(terms)[:LEADING_VERB_WINDOW]:
        if term in ACTIONS:
            return term
    return None


def background(dense: Ranking) -> float:
    """The catalog's background similarity to a request: the median cosine of its dense top
    64 (all documents when the catalog is smaller)."""
    values = sorted([cos for _, cos in dense])
    return values[len(values) // 2] if values else 0.0


def signals(text: str, terms: Sequence[str], documents: DocumentSet,
            dense: Ranking | None = None, lane: Ranking | None = None,
            describe: Callable[[str], str] | None = None,
            extra: float | None = None,
            lexical: tuple[Ranking, int] | None = None,
            screened: Screening | None = None,
            admitted: bool | None = None,
            evidence: Evidence | None = None) -> Signals:
    """The signals of one capability over `documents`; `dense` is its dense ranking (hybrid),
    `lane` the lane as ranked (for action agreement), `lexical` its lexical lane and the terms
    its leader matched (`lanes.lexical_lane`; hybrid, for coherence and corroboration).
    `screened` is the capability's `screen`, `admitted` its `lanes.catalog_admitted` and
    `evidence` its `evidence_leads` over `documents` when the caller already has them (the
    search service computes each once per capability); computed here otherwise."""
    stats = catalog_stats(documents)
    if screened is None:
        screened = screen(text, terms, documents)
    count, share = screened.words, screened.known_share
    coverage, rare, leads = evidence if evidence is not None \
        else evidence_leads(terms, documents, stats, text)
    cosine = margin = None
    if dense:
        cosine = dense[0][1]
        margin = cosine - background(dense)
    action = None
    actions = request_actions(terms)
    if actions and describe is not None:
        head = leads or [doc_id for doc_id, _ in (lane or dense or [])[:1]]
        action = any(function_actions(doc_id, describe(doc_id)) & actions for doc_id in head)
    corroborates = None
    if dense and lexical is not None:
        if admitted is None:
            admitted = catalog_admitted(dense, lexical[0])
        corroborates = corroborated(lexical[0], dense, lexical[1])
    else:
        admitted = None
    concepts = None
    if not dense and lane:
        concepts = concept_coverage.coverage(concept_words(text), [doc_id for doc_id, _ in lane],
                                             documents)
    return Signals(count, share, coverage, rare, cosine, margin, action, extra,
                   screened.refused, admitted, corroborates, concepts)


FEATURE_NAMES: dict[str, tuple[str, ...]] = {
    "lexical": ("content", "coverage", "known_share", "agrees", "clashes", "concepts"),
    "static": ("content", "coverage", "known_share", "agrees", "clashes", "static_cosine",
               "concepts"),
    "hybrid": ("content", "coverage", "known_share", "agrees", "clashes", "cosine", "margin"),
}
"""The inputs of the calibrated decision per mode family."""

CONTENT_CAP = 3.0  # chosen: past three rare terms more evidence says nothing new
# chosen: the middle of the 0–1 coverage, for want of a reading
CONCEPTS_UNKNOWN = 0.5
"""The `concepts` input (lexical, static) when the static table could not be loaded."""


def family(found: Signals) -> str:
    """`hybrid` with a dense cosine, `static` with a static one, else `lexical`."""
    if found.cosine is not None:
        return "hybrid"
    return "static" if found.extra is not None else "lexical"


def features(found: Signals, kind: str | None = None) -> tuple[float, ...]:
    """The decision's inputs for mode family `kind` (default `family(found)`): content evidence
    (capped at `CONTENT_CAP`), coverage, known-word share, action agreement and clash (1/0; both
    0 when the request names no known verb), then the family's cosines (hybrid: best and
    margin; static: best static cosine), then the concept coverage (lexical and static;
    `CONCEPTS_UNKNOWN` when it is unknown)."""
    kind = kind or family(found)
    values = [min(found.rare_matched, CONTENT_CAP), found.coverage, found.known_share,
              1.0 if found.action is True else 0.0, 1.0 if found.action is False else 0.0]
    if kind == "static":
        values.append(found.extra or 0.0)
    elif kind == "hybrid":
        values += [found.cosine or 0.0, found.margin or 0.0]
    if kind in ("static", "lexical"):
        values.append(CONCEPTS_UNKNOWN if found.concepts is None else found.concepts)
    return tuple(values)


def _calibration(kind: str) -> tuple[tuple[float, ...], float, float]:
    """Family `kind`'s fitted weights, bias and threshold (data/fitted.json)."""
    found = fitted.entry(f"answerability.CALIBRATION.{kind}", FEATURE_NAMES[kind])
    return tuple(float(v) for v in found["values"]), float(found["bias"]), float(found["threshold"])


CALIBRATION: dict[str, tuple[tuple[float, ...], float, float]] = {
    kind: _calibration(kind) for kind in ("hybrid", "lexical", "static")}
"""Per mode family: the weights of `features` (in `FEATURE_NAMES` order), the bias, and the
threshold on the score (a log-odds) — an L2-regularised logistic regression fitted by
`benchmarks/fit_answerability.py fit --nearmiss` on the eval catalog's sets only (dev, extra,
extra2, seeded calibration chatter and near-miss requests, `fit_answerability_nearmiss.py`;
never `test`, never the held-out catalog) over the capabilities that meet `evidence_floor`,
the threshold the lowest that answers no chatter sentence and at most a tenth of the no-match
cases and near misses. L2 0.1, hybrid 1.0: the L2 chosen by leave-one-set-out over dev,
extra and extra2 (`fit_answerability.py fit --sweep`; docs/record/search-quality.md, "Regularisation by
cross-validation"). The static family reads the concept coverage too
(docs/record/search-quality.md, "Static lane"). The numbers are read from data/fitted.json,
which `fit_answerability.py fit --write` writes."""


def score(found: Signals) -> float:
    """The calibrated log-odds that the catalog serves the capability: `w · features + b`."""
    weights, bias, _ = CALIBRATION[family(found)]
    return bias + sum(w * x for w, x in zip(weights, features(found)))


COVERED = 0.4  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)
STRONG_CONTENT = 2.0  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)
FLOOR_COSINE = 0.20  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)
CONFIDENT_COSINE = 0.45  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)
SUPPORTED_COSINE = 0.32  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)


def lexical_floor(found: Signals) -> bool:
    """Lexical evidence: one content term that the document's id names (or two of its
    description), or less when the document's action agrees with the request's or it covers
    `COVERED` of the request's informative terms."""
    return found.rare_matched >= 1 or (found.rare_matched > 0 and bool(
        found.action or found.coverage >= COVERED))


def evidence_floor(found: Signals) -> bool:
    """The least evidence a yes needs (set by hand on dev, extra, extra2 and calibration
    chatter; no fit replaces it, see `answerable`). Without a MiniLM cosine, `lexical_floor`.
    With one, `STRONG_CONTENT` (two id-named content terms) is enough; weaker lexical evidence
    counts only when the encoder does not contradict it (best cosine ≥ `FLOOR_COSINE`); the
    encoder alone suffices at `CONFIDENT_COSINE`, or at `SUPPORTED_COSINE` with some content
    term matched by a document whose action is known."""
    if found.cosine is None:
        return lexical_floor(found)
    if found.cosine >= CONFIDENT_COSINE or found.rare_matched >= STRONG_CONTENT:
        return True
    if found.cosine < FLOOR_COSINE:
        return False
    return lexical_floor(found) or (found.rare_matched > 0 and found.action is not None
                                    and found.cosine >= SUPPORTED_COSINE)


def answerable(found: Signals) -> bool:
    """The decision: refused classes say no; otherwise yes when the capability has the
    `evidence_floor` and its calibrated `score` reaches its family's threshold (`CALIBRATION`).
    The floor stays because the score alone, linear in its signals, answered cooking and
    weather small talk (tests/unit/search/test_answerability_properties.py) that its training
    sets never showed it; the score then refuses what the floor lets through weakly."""
    if found.refused or not supported(found) or not evidence_floor(found):
        return False
    return score(found) >= CALIBRATION[family(found)][2]


def supported(found: Signals) -> bool:
    """Hybrid: the dense ranking is admitted (`lanes.catalog_admitted`: best cosine ≥ 0.40, or
    ≥ 0.30 with a coherent head) or corroborates the lexical lane (`lanes.corroborated`) — the
    spec's lane admission, now a condition of the one decision rather than of the lane (docs/record/search-quality.md,
    "One decision per capability"). True when these were not computed (other modes)."""
    if found.admitted is None:
        return True
    return bool(found.admitted or found.corroborated)


@dataclass(frozen=True)
class Screening:
    """The checks of one capability that need no ranking (`screen`)."""

    refused: str
    """`refusal`: `excluded`, `unreadable`, `intrinsic`, or "" when the capability is searched."""
    words: int
    known_share: float
    """`known_share`: its prose word count and the share of them that are known words."""


def screen(text: str, terms: Sequence[str], documents: DocumentSet) -> Screening:
    """The capability's `refusal` with the `known_share` it reads, computed once: the search
    service screens every capability before ranking and hands the result to `signals`."""
    stats = catalog_stats(documents)
    count, share = known_share(text, stats)
    if text.strip() in documents.positions:
        refused = ""
    elif names_excluded_id(text):
        refused = "excluded"
    elif count == 0 or share <= MIN_KNOWN_SHARE:
        refused = "unreadable"
    elif intrinsic_need(text, terms, stats):
        refused = "intrinsic"
    else:
        refused = ""
    return Screening(refused, count, share)


def refusal(text: str, terms: Sequence[str], documents: DocumentSet) -> str:
    """Why a capability is not searched at all — `excluded`, `unreadable` or `intrinsic` — or
    "": the checks that need no ranking. A capability that is exactly a catalog id is never
    refused."""
    return screen(text, terms, documents).refused


Observer = Callable[[str, Signals, Ranking, bool], None]
_OBSERVER: Observer | None = None


def observe(observer: Observer | None) -> Observer | None:
    """Install `observer(text, signals, lane, decision)`, called for every decision taken (the
    fit script `benchmarks/fit_answerability.py` records the signals with it); returns the
    previous one. None removes it."""
    global _OBSERVER
    previous, _OBSERVER = _OBSERVER, observer
    return previous


def notify(text: str, found: Signals, lane: Ranking, decision: bool) -> None:
    """Hand one decision to the installed observer (`observe`), if any."""
    if _OBSERVER is not None:
        _OBSERVER(text, found, lane, decision)


def vouches(query: object, found: Signals) -> bool:
    """The static lane answers for a capability the decision refused (`answerable` said no,
    `found` its `Signals`): not a hard refusal, one worker holds all of the first `VOUCH_HEAD`
    (4) static hits of this call (`static_evidence`), the request names a known action
    (`found.action` is not None: agreeing or not — small talk that shares a topic with a worker
    names none), and the static family's calibrated score (`score`, which weighs the best static
    cosine) reaches `VOUCH_SCORE` (0, even odds) — above the family threshold, but without the
    lexical evidence floor. On dev, extra and extra2 the capabilities this answers all held a
    relevant function in their lane; near misses and chatter that score ≥ 0 spread their static
    head over two or three workers (docs/record/search-quality.md, "Static lane")."""
    share = head_share_of(query)
    if share is None or found.refused or found.action is None or share < VOUCH_HEAD:
        return False
    return family(found) == "static" and score(found) >= VOUCH_SCORE
