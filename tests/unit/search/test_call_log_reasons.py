"""The log lines of a search call name a reason even when the exception carries no message."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pytest

from iii_directory.config import Settings
from iii_directory.search.call import SearchCall
from iii_directory.encoder.dense_lane import DenseUnavailable


class RaisingDense:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    async def rank_adhoc(self, ids: Any, texts: Any, vectors: Any, *, wait: bool = True) -> Any:
        raise self.exc


class Rows:
    """The query matrix: rows by index."""

    def __getitem__(self, rows: list[int]) -> list[int]:
        return rows


class Docs:
    ids = ["a::b"]
    documents = [SimpleNamespace(searchable="a b")]

    def __len__(self) -> int:
        return 1


@pytest.fixture(autouse=True)
def fresh_throttle(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each case starts with no line of its reason logged yet (the throttle is per process)."""
    from iii_directory.log_throttle import ThrottledLog
    from iii_directory.search import call

    monkeypatch.setattr(call, "_skips", ThrottledLog(call.log))


def call_with(exc: BaseException) -> SearchCall:
    return SearchCall(ctx=None, settings=Settings(function_search_mode="hybrid"), corpus=None,  # type: ignore[arg-type]
                      dense=RaisingDense(exc), judge=None, judge_active=False,  # type: ignore[arg-type]
                      deadline=0.0, vectors=Rows())


@pytest.mark.parametrize(("exc", "level", "expected"), [
    (TimeoutError(), logging.INFO, "ad-hoc dense ranking skipped: TimeoutError"),
    (DenseUnavailable(""), logging.INFO, "ad-hoc dense ranking skipped: DenseUnavailable"),
    (DenseUnavailable("model missing"), logging.INFO, "ad-hoc dense ranking skipped: model missing"),
    (RuntimeError(), logging.WARNING, "ad-hoc dense ranking failed: RuntimeError"),
])
async def test_an_empty_exception_message_logs_the_exception_type(
        caplog: pytest.LogCaptureFixture, exc: BaseException, level: int, expected: str) -> None:
    caplog.set_level(logging.INFO, logger="iii_directory.search.call")
    call = call_with(exc)
    assert await call.adhoc_dense(Docs(), [SimpleNamespace(vector=0)]) is None  # type: ignore[arg-type]
    records = [r for r in caplog.records if r.name == "iii_directory.search.call"]
    assert [(r.levelno, r.getMessage()) for r in records] == [(level, expected)]
