"""What the search precomputes or converts in one step to spend less of the event loop per call
gives exactly what the element-by-element computation gave: per-function facts of the learned
fusion, per-document term sets, memoised query terms, and numpy rows turned into Python
numbers with `tolist`."""

from __future__ import annotations

import numpy as np
import pytest

import _rank
from iii_directory.search.ranking import fusion
from iii_directory.search.ranking.answerability import known_share, ordinary_terms, request_words
from iii_directory.search.ranking.corpus import (Document, DocumentSet, Tool, document_terms,
                                                 query_terms)
from iii_directory.encoder.dense_lane import top_ranking
from iii_directory.search.ranking.views import Views
from iii_directory.search.ranking.vocabulary import function_actions

IDS = ("mailer::send", "hr::time-off::request", "sheets::appendRow", "standalone", "crm::contacts::get")


@pytest.mark.parametrize("function_id", IDS)
def test_candidate_facts_are_the_lookups_they_replace(function_id: str) -> None:
    description = "Get the rows of a sheet."
    worker, named_by, words, count, actions = fusion.candidate_facts(function_id, description)
    expected_worker = function_id.partition("::")[0] if "::" in function_id else None
    assert worker == expected_worker
    assert named_by == (fusion.worker_term(worker) if worker else frozenset())
    assert words == fusion.id_words(function_id)
    assert count == max(1, len(fusion.id_words(function_id)))
    assert actions == function_actions(function_id, description)


def test_document_term_sets_are_each_documents_indexed_terms() -> None:
    documents = DocumentSet(tuple(Document(i, f"{i} text", f"{i} sends emails and appends rows")
                                  for i in IDS))
    assert documents.term_sets == tuple(
        frozenset(_rank_terms(d.lexical)) for d in documents.documents)
    assert documents.term_sets is documents.term_sets  # built once per set


def _rank_terms(lexical: str) -> list[str]:
    from iii_directory.search.ranking.corpus import index_terms

    return index_terms(_rank.tokenize(lexical))


def test_bm25_answers_the_same_for_any_sequence_of_terms() -> None:
    documents = DocumentSet(tuple(Document(i, i, f"{i} send email rows 42") for i in IDS))
    terms = _rank.tokenize_query("send the email rows 42 now")
    assert documents.bm25(terms, 1) == documents.bm25(tuple(terms), 1)
    assert [hit[0] for hit in documents.bm25(iter(terms), 1)] == [hit[0] for hit in documents.bm25(terms, 1)]
    assert query_terms(terms) == [t for t in query_terms(tuple(terms))]
    assert document_terms("send email") == tuple(query_terms(["send", "email"]))


def test_memoised_word_lists_are_fresh_lists_and_sets() -> None:
    words = request_words("Send the Report to https://x.io now")
    words.append("mutated")
    assert request_words("Send the Report to https://x.io now") == ["send", "the", "report", "to", "now"]
    assert "the" in ordinary_terms("send the report")


def test_top_ranking_of_numpy_rows_gives_python_numbers() -> None:
    positions = np.array([2, 0, -1, 1], dtype=np.int64)
    scores = np.array([0.25, 0.5, 0.9, 0.5], dtype=np.float32)
    ranking = top_ranking(["a", "b", "c"], positions, scores)
    assert ranking == [("a", float(np.float32(0.5))), ("b", float(np.float32(0.5))),
                       ("c", float(np.float32(0.25)))]
    assert all(type(cos) is float for _, cos in ranking)


def test_view_cosines_are_python_floats_and_zero_for_unknown_ids() -> None:
    tools = (Tool("mailer::send", "Send an email.", {}), Tool("hr::leave", "Request leave.", {}))
    rows = np.random.default_rng(3).normal(size=(4, 4)).astype(np.float32)
    views = Views.of(tools, rows)
    query = rows[0]
    desc, act = views.cosines(["hr::leave", "nobody::x", "mailer::send"], query)
    gathered = [1, 0, 0]  # an unknown id reads row 0 and answers 0.0
    old_desc = [float(c) for c in rows[:2][gathered] @ query]  # the element-by-element floats
    old_act = [float(c) for c in rows[2:][gathered] @ query]
    assert desc == [old_desc[0], 0.0, old_desc[2]]
    assert act == [old_act[0], 0.0, old_act[2]]
    assert all(type(value) is float for value in desc + act)
    only_known = views.cosines(["mailer::send"], query)
    assert only_known == ([float(c) for c in rows[:2][[0]] @ query],
                          [float(c) for c in rows[2:][[0]] @ query])


def test_known_share_reads_the_memoised_words() -> None:
    from iii_directory.search.ranking.answerability import catalog_stats

    documents = DocumentSet(tuple(Document(i, i, f"{i} send email") for i in IDS))
    assert known_share("send the xqzzv email", catalog_stats(documents)) == (4, 0.75)


def test_a_repeated_capability_shares_its_immutable_query() -> None:
    from iii_directory.search.ranking.query import make_query

    first = make_query("Send an email to the new customer")
    again = make_query("Send an email to the new customer")
    assert first is not None and again is first
    embedded = first.with_vector(3)
    assert (first.vector, embedded.vector) == (None, 3) and embedded.terms == first.terms
    assert make_query("summarize this thread") is make_query("summarize this thread")
