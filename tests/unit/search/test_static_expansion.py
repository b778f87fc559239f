"""Static query expansion (`search/ranking/static_expansion.py`): the catalog's words nearest a
request's unknown words, and the lexical lane they give a lane whose own lexical lane is empty.
Needs the static table (BM25-only targets have it) but no numpy."""

from __future__ import annotations

import pytest

import _rank

from iii_directory.search.ranking import static_expansion as se
from iii_directory.search import static_lane as sl
from iii_directory.search.ranking.corpus import Corpus, tool_from_schema
from iii_directory.search.ranking.lanes import lexical_lane
from iii_directory.search.ranking.query import make_query

CATALOG = [
    ("image::resize", "Resize an image to a given width and height."),
    ("image::crop", "Crop an image to a rectangle."),
    ("files::read", "Read a file's contents."),
    ("mail::send", "Send an email message to recipients."),
]


@pytest.fixture(scope="module")
def setup() -> tuple[object, object, se.CatalogWords]:
    try:
        from _rank import static

        encoder = static.default_encoder()
    except Exception as exc:  # noqa: BLE001 - no table in this build
        pytest.skip(f"static table unavailable: {exc}")
    corpus = Corpus.build([tool_from_schema(i, d, {"type": "object", "properties": {}})
                           for i, d in CATALOG])
    return encoder, corpus, se.CatalogWords.build(encoder, corpus.documents)


def test_the_word_table_holds_the_catalogs_informative_words(setup) -> None:  # noqa: ANN001
    _, _, words = setup
    assert "width" in words.words and "height" in words.words
    assert "an" not in words.words and "to" not in words.words  # short or ordinary English
    assert len(words.index) == len(words.words)


def test_an_unknown_word_expands_to_its_nearest_catalog_word(setup) -> None:  # noqa: ANN001
    encoder, _, words = setup
    assert "width" in words.neighbours(encoder, "resize it to 800 pixels wide")


def test_known_ordinary_and_distant_words_do_not_expand(setup) -> None:  # noqa: ANN001
    encoder, _, words = setup
    assert words.neighbours(encoder, "resize the image") == []  # catalog words already
    assert words.neighbours(encoder, "the day until then") == []  # ordinary English
    assert words.neighbours(encoder, "zqxj wobble") == []  # nothing within the cosine


def test_the_expansion_gives_an_empty_lexical_lane_a_ranking(setup) -> None:  # noqa: ANN001
    encoder, corpus, words = setup
    query = make_query("resize it to 800 pixels wide")
    assert lexical_lane(corpus.documents, query.terms)[0] == []
    lane = sl.expanded_lane(encoder, words, corpus.documents, query)
    assert lane and lane[0][0] == "image::resize"
    assert sl.expanded_lane(encoder, words, corpus.documents, make_query("zqxj wobble")) == []


def test_expanded_terms_keep_the_request_first_without_repeats() -> None:
    terms = _rank.tokenize_query("resize it wide")
    assert se.expanded_terms(terms, ["width", terms[0]]) == list(terms) + ["width"]
