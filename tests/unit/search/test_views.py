"""The fusion's extra dense views of a catalog (`search/ranking/views.py`)."""

from __future__ import annotations

import anyio
import numpy as np
import pytest

from iii_directory.search.ranking import views as views_module
from iii_directory.search.ranking.corpus import Corpus, Tool
from iii_directory.encoder.dense_lane import embed_views
from iii_directory.encoder.encoding import DOCUMENT
from iii_directory.search.ranking.views import (ViewVectors, Views, action_view, description_view,
                                                view_texts)

TOOLS = (Tool("mailer::send", "Send an email.", {}),
         Tool("hr::time-off::request", "", {}),
         Tool("dining::updateMenuItem", "Change a dish on the menu.", {}))


def unit_rows(n: int, dim: int = 4) -> np.ndarray:
    rows = np.random.default_rng(7).normal(size=(n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.mark.parametrize("function_id, phrase", [
    ("mailer::send", "send mailer"),
    ("hr::time-off::request", "request time off hr"),
    ("dining::updateMenuItem", "update menu item dining"),
    ("energy::ev_charger_start", "ev charger start energy"),
])
def test_action_view_reads_the_id_last_segment_first(function_id: str, phrase: str) -> None:
    assert action_view(function_id) == phrase


def test_description_view_falls_back_to_the_id() -> None:
    assert description_view(TOOLS[0]) == "Send an email."
    assert description_view(TOOLS[1]) == "hr::time-off::request"
    assert view_texts(TOOLS) == ["Send an email.", "hr::time-off::request",
                                 "Change a dish on the menu.", "send mailer",
                                 "request time off hr", "update menu item dining"]


def test_cosines_are_dot_products_with_each_view() -> None:
    vectors = unit_rows(6)
    views = Views.of(TOOLS, vectors)
    query = vectors[4]  # the action view of hr::time-off::request
    desc, act = views.cosines(["hr::time-off::request", "unknown::id", "mailer::send"], query)
    assert act[0] == pytest.approx(1.0)
    assert desc[0] == pytest.approx(float(vectors[1] @ query))
    assert desc[1] == act[1] == 0.0
    assert act[2] == pytest.approx(float(vectors[3] @ query))


class FakePipeline:
    """The encoder pipeline surface the views use: a cache, `warm` and `embed`."""

    def __init__(self) -> None:
        self.cache: dict[str, np.ndarray] = {}
        self.warmed: list[str] = []
        self.embedded = 0

    def cached(self, texts, kind=DOCUMENT):
        assert kind == DOCUMENT
        return [self.cache.get(t) for t in texts]

    def warm(self, texts, kind=DOCUMENT):
        self.warmed.extend(t for t in texts if t not in self.cache)

    def encode_warmed(self) -> None:
        for text, row in zip(self.warmed, unit_rows(len(self.warmed))):
            self.cache[text] = row
        self.warmed = []

    async def embed(self, texts, kind=DOCUMENT, keep=False):
        self.embedded += sum(t not in self.cache for t in texts)
        for text, row in zip(texts, unit_rows(len(texts))):
            self.cache.setdefault(text, row)
        return np.vstack([self.cache[t] for t in texts])


def test_get_queues_missing_views_and_assembles_them_once_known() -> None:
    now = [0.0]
    vectors = ViewVectors(TOOLS, clock=lambda: now[0])
    pipeline = FakePipeline()
    assert vectors.get(pipeline) is None
    assert sorted(pipeline.warmed) == sorted(view_texts(TOOLS))
    pipeline.encode_warmed()
    assert vectors.get(pipeline) is None  # looked again only after RECHECK_S
    now[0] += views_module.RECHECK_S
    views = vectors.get(pipeline)
    assert views is not None and vectors.get(pipeline) is views
    assert views.rows == {"mailer::send": 0, "hr::time-off::request": 1,
                          "dining::updateMenuItem": 2}


def test_build_embeds_now_and_a_large_catalog_gets_no_views(monkeypatch) -> None:
    pipeline = FakePipeline()
    vectors = ViewVectors(TOOLS)
    views = anyio.run(embed_views, vectors, pipeline)
    assert views is not None and pipeline.embedded == 6
    assert vectors.get(pipeline) is views
    monkeypatch.setattr(views_module, "VIEW_LIMIT", 2)
    big = ViewVectors(TOOLS)
    assert not big.enabled and big.get(pipeline) is None
    assert anyio.run(embed_views, big, pipeline) is None
    assert big.get(None) is None


def test_a_corpus_carries_its_views() -> None:
    corpus = Corpus.build(TOOLS)
    assert isinstance(corpus.views, ViewVectors) and corpus.views.tools == corpus.tools


def test_views_embed_at_the_pipelines_document_priority() -> None:
    """The ranking core names the pipeline's priority class itself (it imports nothing of the
    encoder); the two must stay the same number."""
    assert views_module.DOCUMENT == DOCUMENT
