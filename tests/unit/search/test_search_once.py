"""One search call computes each capability's screening (refusal and known-word share) and each
hybrid lane's admission once: the service hands them to the answerability decision instead of
the decision computing them again (fewer main-thread cycles per call, same answers)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from search_fakes import CATALOG, ExactIndex, FakeEncoder, PeerEngine, search

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.search import service as service_module
from iii_directory.search.ranking import answerability, lanes
from iii_directory.search.service import SearchService

CAPABILITIES = ("send an email to a customer", "charge a credit card", "create a calendar event",
                "list my open invoices")


def counting(calls: list[str], name: str, function: Any) -> Any:
    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(name)
        return function(*args, **kwargs)

    return counted


async def warmed(mode: str, settings: Settings, tmp_path: Path) -> tuple[Directory, dict[str, Any]]:
    """A directory in `mode` over the catalog, its index and vectors built by one search of
    `CAPABILITIES` (returned with that first answer) and its background work settled."""
    directory = Directory(settings=settings.model_copy(update={"function_search_mode": mode}),
                          engine=PeerEngine(CATALOG))
    service = directory.service(SearchService)
    if mode == "hybrid":
        service.use_encoder(FakeEncoder(), index_factory=ExactIndex, cache_dir=tmp_path)
    before = await search(directory, *CAPABILITIES)
    await service.settle()
    return directory, before


@pytest.mark.parametrize("mode", ["hybrid", "lexical"])
async def test_each_capability_is_screened_and_admitted_once(
        mode: str, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory, before = await warmed(mode, settings, tmp_path)

    calls: list[str] = []
    monkeypatch.setattr(answerability, "known_share",
                        counting(calls, "known_share", answerability.known_share))
    monkeypatch.setattr(answerability, "catalog_admitted",
                        counting(calls, "admit", lanes.catalog_admitted))
    monkeypatch.setattr(service_module, "CATALOG", dataclasses.replace(
        lanes.CATALOG, admit=counting(calls, "admit", lanes.CATALOG.admit)))
    response = await search(directory, *CAPABILITIES)

    assert response["search_mode"] == mode
    assert response["workers"] == before["workers"]
    assert calls.count("known_share") == len(CAPABILITIES)
    assert calls.count("admit") == (len(CAPABILITIES) if mode == "hybrid" else 0)


@pytest.mark.parametrize("mode", ["hybrid", "lexical"])
async def test_each_capability_lexical_evidence_is_computed_once_before_grading(
        mode: str, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`SearchCall.lexical_ahead` computes each capability's `evidence_leads` while the vectors
    are encoded; the graded decision reads it instead of computing it again."""
    from iii_directory.search import call as call_module

    directory, before = await warmed(mode, settings, tmp_path)

    ahead: list[str] = []
    graded: list[str] = []
    monkeypatch.setattr(call_module, "evidence_leads",
                        counting(ahead, "evidence", answerability.evidence_leads))
    monkeypatch.setattr(answerability, "evidence_leads",
                        counting(graded, "evidence", answerability.evidence_leads))
    response = await search(directory, *CAPABILITIES)

    assert response["search_mode"] == mode
    assert response["workers"] == before["workers"]
    assert len(ahead) == len(CAPABILITIES)
    assert graded == []
