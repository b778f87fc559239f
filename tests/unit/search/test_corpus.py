"""Canonical corpus, fingerprint and the lexical index (search.md §3.3, §3.5, §5.1)."""

from __future__ import annotations

import hashlib
import json

from iii_directory.search.ranking.corpus import (Corpus, Document, DocumentSet, canonical_corpus,
                                                 fingerprint, index_terms, query_terms,
                                                 namespace_of, slim_parameters, tool_from_schema)


def test_slim_parameters_keeps_keys_and_required_array() -> None:
    schema = {"type": "object", "properties": {"b": {"type": "string"}, "a": {"type": "int"}},
              "required": ["b"], "additionalProperties": False}
    assert slim_parameters(schema) == {"properties": {"a": {}, "b": {}}, "required": ["b"],
                                       "type": "object"}
    assert list(slim_parameters(schema)) == ["properties", "required", "type"]
    assert slim_parameters({"required": "x"}) == {"properties": {}, "type": "object"}
    assert slim_parameters(None) == {"properties": {}, "type": "object"}


def test_canonical_corpus_sorts_and_excludes() -> None:
    tools = [tool_from_schema("b::x", "B.", {}), tool_from_schema("a::y", "A. More.", {}),
             tool_from_schema("engine::functions::list", "List.", {}),
             tool_from_schema("directory::search_functions", "Search.", {})]
    corpus = canonical_corpus(tools)
    assert [t.name for t in corpus] == ["a::y", "b::x"]
    assert corpus[0].description == "A."


def test_fingerprint_is_sha256_of_compact_json_and_stable() -> None:
    tools = canonical_corpus([tool_from_schema("a::b", "Do it.", {"properties": {"x": {}}})])
    expected = hashlib.sha256(json.dumps(
        [{"name": "a::b", "description": "Do it.",
          "parameters": {"properties": {"x": {}}, "type": "object"}}],
        separators=(",", ":")).encode()).hexdigest()
    assert fingerprint(tools) == expected
    shuffled = canonical_corpus([tool_from_schema("z::z", "", {}), tool_from_schema("a::b", "Do it.", {"properties": {"x": {"type": "string"}}})])
    again = canonical_corpus([tool_from_schema("a::b", "Do it. Details change nothing.", {"properties": {"x": {}}}), tool_from_schema("z::z", "", {})])
    assert fingerprint(shuffled) == fingerprint(again)


def test_corpus_namespaces_and_lookup() -> None:
    corpus = Corpus.build([tool_from_schema("mail::send", "Send.", {}),
                           tool_from_schema("plain", "No namespace.", {})], raw_ids=["x"])
    assert corpus.namespaces == frozenset({"mail"})
    assert corpus.by_id["mail::send"].description == "Send."
    assert namespace_of("plain") is None
    assert namespace_of("a::b::c") == "a"


def test_document_set_bm25_requires_two_terms_and_breaks_ties_by_order() -> None:
    docs = DocumentSet((Document("a::one", "", "alpha beta"), Document("b::two", "", "alpha beta"),
                        Document("c::three", "", "alpha gamma")))
    hits = docs.bm25(["alpha", "beta"])
    assert [h[0] for h in hits] == ["a::one", "b::two"]
    assert all(h[2] == 2 for h in hits)
    assert docs.bm25(["alpha"]) == []
    assert [h[0] for h in docs.bm25(["alpha"], min_matched=1)] == ["a::one", "b::two", "c::three"]


def test_single_letters_are_not_indexed_or_scored() -> None:
    import _rank

    # single letters dropped; every other term is its normal term (stem or concept head)
    assert index_terms(_rank.tokenize_query("renew my driver's license for 3D printing v2")) == [
        "renew", "my", "driver", "licens", "3", "3d", "print", "v2"]
    # a request's numbers are values, not vocabulary: documents keep them, queries drop them
    assert query_terms(_rank.tokenize_query("3D printing v2")) == ["3d", "print", "v2"]
    docs = DocumentSet((Document("deploy::down", "", "stop the service's containers"),
                        Document("deploy::up", "", "start the stack's services")))
    # `s` (from the possessive) no longer counts as a matched term
    assert docs.bm25(_rank.tokenize_query("the driver's license")) == []
    assert docs.bm25(["s", "container"], min_matched=1) == [
        ("deploy::down", docs.bm25(["container"], min_matched=1)[0][1], 1)]

