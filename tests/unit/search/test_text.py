"""Text projections and capability handling (search.md §3.4, §4)."""

from __future__ import annotations

import _rank
import pytest

from iii_directory.search.ranking.query import make_query
from iii_directory.search.ranking.text import (bm25_document, compact_capability, dense_query,
                                               is_intrinsic, searchable_text, side_document,
                                               slim_description, truncate_bytes)


@pytest.mark.parametrize(
    ("description", "slim"),
    [
        ("Create a pull request? This sentence is contract detail.", "Create a pull request?"),
        ("Send an email. Supports HTML.", "Send an email."),
        ("Wow! Really.", "Wow!"),
        ("Version 1.2 ships now. More text.", "Version 1.2 ships now."),
        ("No sentence end here", "No sentence end here"),
        ("First line only\nSecond line. More.", "First line only"),
        ("Ends with a dot.", "Ends with a dot."),
        ("Trailing spaces   ", "Trailing spaces"),
        ("", ""),
        (None, ""),
    ],
)
def test_slim_description(description: str | None, slim: str) -> None:
    assert slim_description(description) == slim


def test_slim_description_caps_at_160_bytes_on_a_character_boundary() -> None:
    text = "é" * 200
    slim = slim_description(text)
    assert len(slim.encode("utf-8")) <= 160
    assert slim == "é" * 80
    assert slim_description("a" * 300) == "a" * 160


def test_truncate_bytes_never_splits_a_character() -> None:
    assert truncate_bytes("aé", 2) == "a"
    assert truncate_bytes("abc", 10) == "abc"


def test_searchable_text_and_bm25_document_layout() -> None:
    text = searchable_text("email::send", "Send an email.", ["to", "body", "subject"])
    assert text == "email::send Send an email. body subject to"
    assert bm25_document("email::send", text) == f"email::send email::send {text}"


def test_browser_fetch_gets_the_boost_words() -> None:
    document = bm25_document("browser::fetch", "browser::fetch Fetch a page.")
    assert document.endswith("default static web page webpage website RSS Atom API content scrape scraping")
    assert "scraping" not in bm25_document("web::fetch", "web::fetch Fetch.")


def test_compaction_trims_and_caps_at_2048_bytes() -> None:
    assert compact_capability("  send mail  ") == "send mail"
    long = "ü" * 3000
    assert len(compact_capability(long).encode("utf-8")) <= 2048


@pytest.mark.parametrize(
    "capability",
    ["summarize text content", "summarise provided text", "summary of provided content",
     "summarize the provided text", "Summaries of the provided contents"],
)
def test_intrinsic_capabilities_are_dropped(capability: str) -> None:
    assert is_intrinsic(_rank.tokenize_query(capability))
    assert make_query(capability) is None


def test_summarize_a_paragraph_is_searched() -> None:
    assert not is_intrinsic(_rank.tokenize_query("summarize the following paragraph"))
    query = make_query("summarize the following paragraph")
    assert query is not None and "summarize" in query.terms


def test_query_strips_json_keys() -> None:
    query = make_query('read the file {"path": "/tmp/report.csv"}')
    assert query is not None
    assert "path" not in query.terms
    assert {"read", "file", "tmp", "report", "csv"} <= set(query.terms)


def test_side_document_is_capped_at_300_bytes() -> None:
    assert len(side_document("x" * 500).encode()) == 300


@pytest.mark.parametrize(
    ("capability", "embedded"),
    [
        ('POST {"status": "done", "run": 42} to https://hooks.example.com/ci',
         'POST { "done", 42} to URL'),
        ("email the German version to anna@example.de", "email the German version to email address"),
        ("open http://shop.example.com/deals?x=1 in a browser", "open URL in a browser"),
        ("fetch FTP://mirror.example.org/pub/file.tar.gz", "fetch URL"),
        ("send an email to a customer", "send an email to a customer"),
        ("ping @oncall in #ops", "ping @oncall in #ops"),
    ],
)
def test_dense_query_strips_keys_and_masks_urls_and_addresses(capability: str, embedded: str) -> None:
    assert dense_query(capability) == embedded


def test_query_keeps_the_capability_for_terms_and_exact_ids() -> None:
    query = make_query("  read {\"path\": \"/tmp/a.csv\"} from https://x.example.com  ")
    assert query is not None
    assert query.text == 'read {"path": "/tmp/a.csv"} from https://x.example.com'
    assert query.dense_text == 'read { "/tmp/a.csv (text file)"} from URL'  # the file kind follows its name
    assert "path" not in query.terms and "example" in query.terms
    assert query.with_vector(3).dense_text == query.dense_text

