"""The search surface in the function table: ids, metadata, schemas, binding, start hook."""

from __future__ import annotations

import json
from typing import Any

import pytest
from search_fakes import CATALOG, PeerEngine

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.functions.search import SURFACE
from iii_directory.request_bounds import LABEL_CHARS
from iii_directory.search.service import SearchService


def spec(function_id: str) -> Any:
    return next(f for f in SURFACE.functions if f.id == function_id)


def test_search_function_schema_keeps_the_tuned_prompt() -> None:
    search = spec("directory::search_functions")
    assert search.metadata == {}
    capabilities = search.request_schema()["properties"]["capabilities"]
    assert capabilities["minItems"] == 1 and capabilities["uniqueItems"] is True
    assert capabilities["maxItems"] == 64
    assert capabilities["items"] == {"type": "string", "minLength": 1, "maxLength": 512}
    text = capabilities["description"]
    for phrase in ("one search at each decision point", "all unmet external capabilities",
                   "intrinsic reasoning, summarization, planning, or formatting",
                   "Requests to summarize provided text or content are ignored",
                   "Write every entry in English", "preserving proper names, URLs, and function IDs",
                   "do not repeat needs already represented",
                   "usually one to six and at most eighteen per call (searched in batches of six)"):
        assert phrase in text
    response = search.response_schema()
    assert sorted(response["required"]) == ["guidance", "latency_ms", "search_mode", "workers"]
    assert response["properties"]["search_mode"]["enum"] == ["lexical", "hybrid", "judge"]
    assert response["properties"]["installable"]["type"] == "array"


def test_installed_candidates_publish_their_confidence() -> None:
    """Issue 31: every installed candidate carries `confidence` (`high` | `low`), additive to
    the response schema; installable (registry) candidates do not."""
    response = spec("directory::search_functions").response_schema()
    definitions = response["definitions"]
    worker = definitions[response["properties"]["workers"]["items"]["$ref"].rsplit("/", 1)[1]]
    candidate = definitions[worker["properties"]["functions"]["items"]["$ref"].rsplit("/", 1)[1]]
    assert candidate["properties"]["confidence"]["enum"] == ["high", "low"]
    assert "`high` candidates come first" in candidate["properties"]["confidence"]["description"]
    assert sorted(candidate["required"]) == ["confidence", "description", "function_id"]
    installable = definitions["InstallableWorker"]["properties"]["functions"]["items"]["$ref"]
    assert "confidence" not in definitions[installable.rsplit("/", 1)[1]]["properties"]


def test_the_schema_command_publishes_the_confidence(capsys: pytest.CaptureFixture[str]) -> None:
    from iii_directory.cli import main

    assert main(["schema", "directory::search_functions"]) == 0
    published = json.loads(capsys.readouterr().out)["response_format"]
    assert published["definitions"]["InstalledCandidate"]["properties"]["confidence"]["enum"] \
        == ["high", "low"]


def test_on_functions_change_is_internal_and_bound() -> None:
    refresh = spec("directory::on-functions-change")
    assert refresh.metadata == {"internal": True, "trace_hidden": True}
    assert refresh.request_schema()["properties"]["event"]["anyOf"] == [
        {"type": "string", "maxLength": LABEL_CHARS}, {"type": "null"}]
    (binding,) = SURFACE.bindings
    assert (binding.trigger_type, binding.function_id) == ("engine::functions-available",
                                                          "directory::on-functions-change")
    assert binding.config(Settings()) == {} and binding.enabled(Settings())


async def test_start_hook_snapshots_without_loading_a_model_in_lexical_mode(settings: Settings) -> None:
    engine = PeerEngine(CATALOG)
    directory = Directory(settings=settings, engine=engine)
    await directory.start()
    service = directory.service(SearchService)
    assert service.loaded and "mail::send" in service.corpus.by_id
    assert service.dense.state == "absent"
    await directory.stop()


@pytest.mark.parametrize("mode", ["hybrid", "judge"])
async def test_switching_to_a_model_mode_starts_loading(settings: Settings, mode: str) -> None:
    directory = Directory(settings=settings, engine=PeerEngine(CATALOG))
    await directory.start()
    service = directory.service(SearchService)
    service.dense.disable("no model in unit tests")
    directory.apply_settings(settings.model_copy(update={"function_search_mode": mode}))
    assert service._tasks  # the load was spawned
    await service.settle()
    assert not service.dense.ready
    await directory.stop()


@pytest.mark.parametrize("registry_search", [True, False])
async def test_start_hook_warms_the_registry_client_only_when_search_asks_the_registry(
        settings: Settings, registry_search: bool) -> None:
    from iii_directory.sources.registry import RegistryClient

    lexical = settings.model_copy(update={"function_search_mode": "lexical",
                                          "registry_search": registry_search})
    directory = Directory(settings=lexical, engine=PeerEngine(CATALOG))
    await directory.start()
    await directory.service(SearchService).settle()
    client = directory.service(RegistryClient)
    assert (client._client is not None) is registry_search
    await client.aclose()
    await directory.stop()
