"""The term pipeline of search.md §4, for both implementations."""

from __future__ import annotations

from types import ModuleType

import pytest

import _rank
from _rank import _reference

CASES: list[tuple[str, list[str]]] = [
    # camelCase parts, then the whole piece (search.md §4 step 2)
    ("presignUrl", ["presign", "url", "presignurl"]),
    ("putObject", ["put", "object", "putobject"]),
    ("HTTPServer", ["httpserver"]),
    ("v2Api", ["v2", "api", "v2api"]),
    ("a1B", ["a1", "b", "a1b"]),
    ("getTheValues", ["get", "value", "getthevalue"]),
    # splitting on everything that is not ASCII alphanumeric
    ("s3::put_object-v2", ["s3", "put", "object", "v2"]),
    ("email::send-template", ["email", "send", "template"]),
    ("naïve café", ["na", "ve", "caf"]),
    ("  ..::  ", []),
    ("", []),
    # the 22 stopwords, case-insensitively
    ("a an and are as at be by for from in is it of on or that the this to was with", []),
    ("The Cat", ["cat"]),
    # plural folding after stopword removal, on length
    ("summaries values repos", ["summary", "value", "repo"]),
    ("process status redis", ["process", "status", "redis"]),
    ("flies ties cats its bus buses", ["fly", "tie", "cat", "its", "bus", "buse"]),
    ("STATUSES Addresses", ["statuse", "addresse"]),
    # duplicates are term frequencies
    ("send send", ["send", "send"]),
    ("2024 v1", ["2024", "v1"]),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_tokenize_table(impl: ModuleType, text: str, expected: list[str]) -> None:
    assert impl.tokenize(text) == expected


QUERY_CASES: list[tuple[str, list[str]]] = [
    ('{"stdout": "done", "exit_code": 0}', ["done", "0"]),
    ('"say \\"hi\\"": value', ["value"]),
    ('"k" \n\t : v', ["v"]),
    ('"not a key" here', ["not", "key", "here"]),
    ('"unterminated: text', ["unterminated", "text"]),
    ('send"key":mail', ["send", "mail"]),
    ("plain words, no quotes", ["plain", "word", "no", "quote"]),
    ('"résumé": "naïve"', ["na", "ve"]),
]


@pytest.mark.parametrize(("text", "expected"), QUERY_CASES)
def test_tokenize_query_strips_quoted_json_keys(impl: ModuleType, text: str, expected: list[str]) -> None:
    assert impl.tokenize_query(text) == expected


def test_tokenize_keeps_json_keys(impl: ModuleType) -> None:
    assert impl.tokenize('{"stdout": 1}') == ["stdout", "1"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1, "b": "x"}', '{  1,   "x"}'),
        ('"a" "b": 2', '"a"   2'),
        ('no quotes', 'no quotes'),
        ('"open', '"open'),
        ('"é":ü', ' ü'),
    ],
)
def test_strip_json_keys(impl: ModuleType, text: str, expected: str) -> None:
    assert impl.strip_json_keys(text) == expected


@pytest.mark.parametrize("bad", [None, 3, b"bytes", ["list"]])
def test_non_string_input_is_a_type_error(impl: ModuleType, bad: object) -> None:
    for fn in (impl.tokenize, impl.tokenize_query, impl.strip_json_keys):
        with pytest.raises(TypeError, match="expects str"):
            fn(bad)


def test_odd_unicode_never_crashes(impl: ModuleType) -> None:
    text = "emoji 🚀 lone surrogate \ud800 nul \x00 end" + "x" * 10_000
    assert impl.tokenize(text)[:4] == ["emoji", "lone", "surrogate", "nul"]
    assert impl.tokenize_query('"\ud800": ok') == ["ok"]


def test_public_api_uses_the_same_pipeline() -> None:
    for text, expected in CASES:
        assert _rank.tokenize(text) == expected
    assert _rank.tokenize_query('{"stdout": "done"}') == ["done"]
    assert _rank.STOPWORDS == _reference.STOPWORDS and len(_rank.STOPWORDS) == 22
