"""The answerability decision (issue 18): refusals, lexical evidence, the decision table, and
the search call answering an honest empty list."""

from __future__ import annotations

import dataclasses
import random

import _rank
import pytest
from search_fakes import CATALOG, PeerEngine, ids, record, search
from unrelated_requests import random_letters

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.search.ranking import answerability as a
from iii_directory.search import guidance as g
from iii_directory.search.ranking.corpus import Corpus, tool_from_schema


def corpus_of(records: list[dict]) -> Corpus:
    return Corpus.build([tool_from_schema(r["function_id"], r["description"], r["request_schema"])
                         for r in records if not r.get("metadata", {}).get("internal")])


@pytest.fixture(scope="module")
def documents():
    return corpus_of(CATALOG).documents


def refused(text: str, documents) -> str:
    return a.refusal(text, _rank.tokenize_query(text), documents)


# -- words -----------------------------------------------------------------------------------


def test_tokenizer_words_rank_ordinary_english_first() -> None:
    words = a.tokenizer_words()
    assert len(words) > 20_000
    assert words["the"] < words["until"] < a.ORDINARY_RANK < words["calendar"]
    assert "##ing" not in words


def test_request_words_leave_out_urls_ids_addresses_and_file_names() -> None:
    assert a.request_words("send hi to bo@x.io via https://a.b/c from mail::send, see notes.txt"
                           " and presignUrl") == ["send", "hi", "to", "via", "from", "see", "and",
                                                  "presign", "url"]


def test_ordinary_terms_are_the_frequent_english_words() -> None:
    ordinary = a.ordinary_terms("chop the onions until soft then send the invoice")
    assert {"the", "until", "then"} <= ordinary
    assert not {"onion", "invoic", "chop"} & ordinary


# -- refusals --------------------------------------------------------------------------------


def test_random_letters_are_unreadable(documents) -> None:
    rng = random.Random(3)
    words = a.tokenizer_words()
    for _ in range(200):
        text = random_letters(rng)
        if all(word.lower() in words for word in text.split()):
            continue  # by chance a real word (`pub`): the ranked decision answers it
        assert refused(text, documents) == "unreadable"
    assert refused("!!! ??? 1234", documents) == "unreadable"
    assert refused("qzv wrplkx pub", documents) == "unreadable"


@pytest.mark.parametrize("text", ["directory::search_functions", "engine::functions::list",
                                  "call engine::workers::list for me", "`state::claim-namespace`"])
def test_an_excluded_id_is_refused(documents, text: str) -> None:
    assert refused(text, documents) == "excluded"


@pytest.mark.parametrize("text", [
    "summarise the text I pasted above into three bullet points",
    "recap what we discussed",
    "think step by step: is 7919 a prime number?",
    "proofread the paragraph I just wrote",
    "brainstorm names for the new product",
    "format these results so a person can read them",
    "make the JSON human-readable",
    "write a warm cover letter for a designer role",
])
def test_intrinsic_needs_and_their_paraphrases_are_refused(documents, text: str) -> None:
    assert refused(text, documents) == "intrinsic"


@pytest.mark.parametrize("text", ["send an email to the team", "forecast the weather in Paris",
                                  "post a summary in #support", "write the value under key a",
                                  "kv::get", "write an email to the team"])
def test_ordinary_requests_are_not_refused(documents, text: str) -> None:
    assert refused(text, documents) == ""


def test_an_intrinsic_verb_a_catalog_id_names_is_searched() -> None:
    documents = corpus_of([*CATALOG, record("text::summarize", "Summarize a long document.", "text")]
                          ).documents
    assert refused("summarize the quarterly report", documents) == ""


# -- lexical evidence ------------------------------------------------------------------------


def test_a_shared_ordinary_word_is_no_evidence(documents) -> None:
    terms = _rank.tokenize_query("it was a long day and the rain kept going")
    coverage, content, _ = a.lexical_evidence(terms, documents, a.catalog_stats(documents),
                                              "it was a long day and the rain kept going")
    assert content == 0


def test_content_named_by_the_id_counts_more_than_description_words(documents) -> None:
    text = "weather forecast for Lisbon"
    _, content, lead = a.lexical_evidence(_rank.tokenize_query(text), documents,
                                          a.catalog_stats(documents), text)
    assert lead == "weather::forecast" and content == 2.0
    text = "read the value recipients"  # `recipients` only in mail::send's description
    _, content, lead = a.lexical_evidence(_rank.tokenize_query(text), documents,
                                          a.catalog_stats(documents), text)
    assert content >= a.DESCRIPTION_WEIGHT


def test_the_leading_verb_is_not_content(documents) -> None:
    text = "send her a welcome email"
    _, content, lead = a.lexical_evidence(_rank.tokenize_query(text), documents,
                                          a.catalog_stats(documents), text)
    assert lead == "mail::send" and content == 1.0  # `email` (a concept of the id `mail`)


# -- the decision table ----------------------------------------------------------------------


def s(content: float, *, action: bool | None = None, coverage: float = 0.1,
      cosine: float | None = None, refused: str = "", extra: float | None = None,
      known: float = 1.0, concepts: float | None = None) -> a.Signals:
    return a.Signals(words=5, known_share=known, coverage=coverage, rare_matched=content,
                     cosine=cosine, margin=None if cosine is None else cosine - 0.1,
                     action=action, extra=extra, refused=refused, concepts=concepts)


@pytest.mark.parametrize("found, expected", [
    # lexical
    (s(0.0, action=True, coverage=0.9), False),
    (s(0.5), False),
    (s(0.5, action=False), False),
    (s(0.5, action=True), True),
    (s(0.5, coverage=a.COVERED), True),
    (s(1.0), True),
    # hybrid
    (s(0.0, cosine=a.CONFIDENT_COSINE), True),
    (s(0.0, cosine=a.CONFIDENT_COSINE - 0.01, action=True), False),
    (s(a.STRONG_CONTENT, cosine=0.05), True),
    (s(1.0, cosine=a.FLOOR_COSINE - 0.01), False),
    (s(1.0, cosine=a.FLOOR_COSINE), True),
    (s(0.5, cosine=a.SUPPORTED_COSINE, action=False), True),
    (s(0.5, cosine=a.SUPPORTED_COSINE - 0.01, action=False), False),
    (s(0.5, cosine=a.CONFIDENT_COSINE - 0.01), False),
])
def test_evidence_floor(found: a.Signals, expected: bool) -> None:
    assert a.evidence_floor(found) is expected


@pytest.mark.parametrize("found, expected", [
    (s(2.0, cosine=0.9, refused="intrinsic"), False),
    (s(3.0, coverage=1.0, extra=0.9, refused="unreadable"), False),
    # lexical: the floor is necessary, the calibrated score decides above it (the concept
    # coverage one of its signals)
    (s(0.0, action=True, coverage=0.9, concepts=1.0), False),
    (s(1.0, concepts=0.3), False),
    (s(1.0, concepts=0.6), True),
    (s(1.0, coverage=0.3, concepts=0.3), True),
    (s(1.0, action=True, concepts=0.2), True),
    (s(0.5, action=True, concepts=0.2), True),
    (s(0.5, coverage=0.4, concepts=0.2), False),
    (s(0.5, coverage=0.4, concepts=0.4), True),
    (s(2.0, concepts=0.2), True),
    # static: the static cosine and the concept coverage are two more signals
    (s(1.0, extra=0.3, concepts=0.5), False),
    (s(1.0, extra=0.5, concepts=0.5), True),
    (s(0.5, action=True, coverage=0.2, extra=0.3, concepts=0.3), False),
    (s(0.5, action=True, coverage=0.2, extra=0.5, concepts=0.3), True),
    (s(1.0, extra=0.4, concepts=0.2), False),
    (s(1.0, extra=0.4, concepts=0.9), True),
    # hybrid
    (s(0.0, cosine=a.CONFIDENT_COSINE), True),
    (s(a.STRONG_CONTENT, cosine=0.05), False),
    (s(a.STRONG_CONTENT, coverage=0.3, cosine=0.3), True),
    (s(1.0, cosine=a.FLOOR_COSINE), False),
    (s(1.0, cosine=0.3), True),
    (s(0.5, cosine=a.SUPPORTED_COSINE, action=False, coverage=0.2), False),
    (s(0.5, cosine=0.4, action=True, coverage=0.2), True),
])
def test_decision(found: a.Signals, expected: bool) -> None:
    assert a.answerable(found) is expected


def test_the_family_follows_the_signals_present() -> None:
    assert a.family(s(1.0)) == "lexical"
    assert a.family(s(1.0, extra=0.4)) == "static"
    assert a.family(s(1.0, cosine=0.4, extra=0.4)) == "hybrid"
    for kind, (weights, _, _) in a.CALIBRATION.items():
        assert len(weights) == len(a.FEATURE_NAMES[kind])
    assert len(a.features(s(1.0))) == len(a.FEATURE_NAMES["lexical"])
    assert len(a.features(s(1.0, extra=0.4))) == len(a.FEATURE_NAMES["static"])
    assert len(a.features(s(1.0, cosine=0.4))) == len(a.FEATURE_NAMES["hybrid"])


def test_the_calibrated_score_is_the_linear_log_odds() -> None:
    found = s(5.0, action=False, coverage=0.4, extra=0.5, known=0.75, concepts=0.8)
    weights, bias, threshold = a.CALIBRATION["static"]
    values = (a.CONTENT_CAP, 0.4, 0.75, 0.0, 1.0, 0.5, 0.8)
    assert a.features(found) == values
    assert a.score(found) == pytest.approx(bias + sum(w * x for w, x in zip(weights, values)))
    assert a.answerable(found) is (a.score(found) >= threshold)


def test_the_decision_is_the_floor_and_the_score() -> None:
    grid = [s(content, action=action, coverage=coverage, cosine=cosine, extra=extra)
            for content in (0.0, 0.5, 1.0, 1.5, 2.0, 3.0)
            for action in (None, True, False)
            for coverage in (0.0, 0.2, 0.4, 0.8)
            for cosine, extra in ((None, None), (None, 0.3), (None, 0.6), (0.15, None),
                                  (0.3, None), (0.5, None))]
    for found in grid:
        threshold = a.CALIBRATION[a.family(found)][2]
        assert a.answerable(found) is (a.evidence_floor(found) and a.score(found) >= threshold)


@pytest.mark.parametrize("kind", ["lexical", "static", "hybrid"])
def test_more_evidence_never_turns_a_yes_into_a_no(kind: str) -> None:
    """Content, coverage and the cosines weigh positively, and the floor is monotone in them."""
    weights = dict(zip(a.FEATURE_NAMES[kind], a.CALIBRATION[kind][0]))
    assert all(weights[name] > 0 for name in ("content", "coverage", "static_cosine", "cosine",
                                              "margin", "concepts") if name in weights)
    extra = 0.45 if kind == "static" else None
    for cosine in ((0.25, 0.35, 0.5) if kind == "hybrid" else (None,)):
        for coverage in (0.0, 0.2, 0.4, 0.8):
            answers = [a.answerable(s(c, coverage=coverage, extra=extra, cosine=cosine))
                       for c in (0.0, 0.5, 1.0, 1.5, 2.0, 3.0)]
            assert answers == sorted(answers)


def test_the_static_cosine_is_a_signal_not_the_decision(documents) -> None:
    text = "send an email to the team"
    terms = _rank.tokenize_query(text)
    plain = a.signals(text, terms, documents)
    extra = a.signals(text, terms, documents, extra=0.7)
    assert extra.extra == 0.7 and a.family(extra) == "static"
    assert a.answerable(plain) is a.answerable(extra) is True
    assert a.score(s(0.5, extra=0.3)) < a.score(s(0.5, extra=0.6))
    assert not a.answerable(s(0.0, extra=0.95))


# -- through the search call -----------------------------------------------------------------


@pytest.fixture
def directory(settings: Settings) -> Directory:
    return Directory(settings=settings.model_copy(update={"registry_search": False}),
                     engine=PeerEngine(CATALOG))


@pytest.mark.parametrize("capability", ["qzvx wrplk", "directory::search_functions",
                                        "recap what we discussed",
                                        "it was a long day and the rain kept going"])
async def test_a_no_returns_an_empty_workers_section_that_says_so(directory: Directory,
                                                                  capability: str) -> None:
    response = await search(directory, capability)
    assert response["workers"] == []
    assert response["guidance"].startswith(g.REFINE_GUIDANCE)


async def test_a_served_request_still_answers(directory: Directory) -> None:
    assert "weather::forecast" in ids(await search(directory, "get the weather forecast for Oslo"))


# -- action agreement over tied evidence ------------------------------------------------------

CI_CATALOG = [
    *CATALOG,
    record("gh::actions::run", "Trigger a CI workflow run on a branch.", "repo", "workflow", "ref"),
    record("gh::actions::status", "Get the status and conclusion of recent CI workflow runs for a"
           " branch.", "repo", "branch"),
]


def test_action_agreement_reads_every_document_with_the_best_evidence() -> None:
    """`CI` matches `workflow` in both siblings' descriptions alone: the evidence ties, and the
    request's action (`check`) agrees with `::status` though not with `::run`, which BM25 ranks
    first; agreement with any tied sibling is agreement with the catalog."""
    documents = corpus_of(CI_CATALOG).documents
    text = "did the CI checks pass on main?"
    terms = _rank.tokenize_query(text)
    stats = a.catalog_stats(documents)
    coverage, content, leads = a.evidence_leads(terms, documents, stats, text)
    assert content == a.DESCRIPTION_WEIGHT
    assert set(leads) == {"gh::actions::run", "gh::actions::status"}
    assert a.lexical_evidence(terms, documents, stats, text) == (coverage, content, leads[0])
    descriptions = {r["function_id"]: r["description"] for r in CI_CATALOG}
    found = a.signals(text, terms, documents, describe=lambda i: descriptions.get(i, ""))
    assert found.action is True and a.answerable(found)


def test_hybrid_decision_needs_an_admitted_or_corroborating_dense_ranking() -> None:
    """The spec's lane gates are a condition of the one decision (`answerability.supported`):
    strong evidence without them is refused; either of them restores the decision."""
    strong = s(3.0, action=True, coverage=0.9, cosine=0.6)
    assert a.answerable(strong)  # gates not computed (other callers): as before
    assert not a.answerable(dataclasses.replace(strong, admitted=False, corroborated=False))
    assert a.answerable(dataclasses.replace(strong, admitted=True, corroborated=False))
    assert a.answerable(dataclasses.replace(strong, admitted=False, corroborated=True))


def test_signals_read_the_gates_from_the_dense_and_lexical_rankings(documents) -> None:
    terms = ["send", "email", "message"]
    lexical = [("mail::send", 3.0)]
    confident = [("mail::send", 0.62), ("sms::send", 0.40)]
    found = a.signals("send an email message", terms, documents, confident, lexical,
                      lambda _: "", None, (lexical, 2))
    assert found.admitted is True and found.corroborated is True
    scattered = [("weather::forecast", 0.31), ("kv::get", 0.30), ("calendar::event::create", 0.29)]
    found = a.signals("send an email message", terms, documents, scattered, lexical,
                      lambda _: "", None, (lexical, 2))
    assert found.admitted is False and found.corroborated is False
    assert a.signals("send an email message", terms, documents).admitted is None


def test_informative_terms_drop_ordinary_words() -> None:
    assert a.informative_terms("turn an address into coordinates",
                               ["turn", "address", "into", "coordinates"]) == ["turn", "address", "coordinates"]


def test_hybrid_calibration_keeps_a_weakly_cosine_request_its_lane_corroborates() -> None:
    """Issue 18, L2 chosen by cross-validation (docs/record/search-quality.md, "Regularisation by cross-validation"):
    the hybrid calibration fitted at L2 1.0 leans less on the best cosine, so a served dev
    capability ("ask a different, larger model for a second opinion on this answer": best cosine
    .21, its lexical lane corroborated, every request term matched) is answered; at L2 0.1 it was
    refused."""
    found = a.Signals(words=10, known_share=1.0, coverage=0.3347, rare_matched=1.0, cosine=0.2060,
                      margin=0.1428, action=None, admitted=False, corroborated=True)
    assert a.family(found) == "hybrid" and a.evidence_floor(found)
    assert a.answerable(found)
