"""Property tests of the honest empty answer (issue 18): 1,000 seeded random-letter strings and
1,000 seeded sentences from unrelated domains (cooking steps, weather small talk —
`unrelated_requests.py`) return no workers, in lexical mode, lexical with the static lane (as
on a BM25-only host) and hybrid (the packaged MiniLM), over the shipped example catalog and the
shared eval catalog. Capabilities go six to a call (one
batch), so a single answering capability fails the call."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import pytest
from unrelated_requests import random_letters, unrelated_sentence

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.encoder.dense_lane import dense_installed
from iii_directory.search.service import SearchService
from iii_directory.search.static_lane import compiled_kernels
from iii_directory.standalone import standalone_engine

pytestmark = [pytest.mark.timeout(600)]

COUNT = 1000
PER_CALL = 6
EVAL_CATALOG = Path(__file__).resolve().parents[3].parent / "shared" / "eval" / "catalog.json"


def example_catalog() -> list[dict]:
    return json.loads((resources.files("iii_directory") / "data" / "example_catalog.json")
                      .read_text("utf-8"))


def eval_catalog() -> list[dict]:
    if not EVAL_CATALOG.is_file():
        pytest.skip("the shared eval catalog is not on this machine")
    return json.loads(EVAL_CATALOG.read_text("utf-8"))


CATALOGS: dict[str, Callable[[], list[dict]]] = {"example": example_catalog, "eval": eval_catalog}
GENERATORS = {"letters": random_letters, "sentences": unrelated_sentence}


@pytest.fixture(scope="module")
def encoder():
    if not dense_installed():
        pytest.skip("the dense extra is not installed")
    from _rank import dense

    return dense.Encoder()


@pytest.mark.parametrize("kind", sorted(GENERATORS))
@pytest.mark.parametrize("catalog", sorted(CATALOGS))
@pytest.mark.parametrize("mode", ["lexical", "static", "hybrid"])
async def test_unrelated_requests_return_no_workers(settings: Settings, tmp_path: Path,
                                                   request: pytest.FixtureRequest, mode: str,
                                                   catalog: str, kind: str) -> None:
    records = CATALOGS[catalog]()
    directory = Directory(settings=settings.model_copy(update={
        "registry_search": False, "function_search_mode": "lexical" if mode == "static" else mode}),
        engine=standalone_engine(records))
    service = directory.service(SearchService)
    if mode == "static":
        if not compiled_kernels():
            pytest.skip("the static lane's kernels are not compiled")
        service.static.enabled = True
    if mode == "hybrid":
        service.use_encoder(request.getfixturevalue("encoder"), cache_dir=tmp_path / "cache")
    rng = random.Random(f"issue-18-{kind}")
    generate = GENERATORS[kind]
    capabilities = [generate(rng) for _ in range(COUNT)]
    answered: list[tuple[list[str], list[str]]] = []
    for start in range(0, COUNT, PER_CALL):
        batch = capabilities[start:start + PER_CALL]
        response = await directory.invoke("directory::search_functions", {"capabilities": batch})
        if mode == "hybrid":
            assert response["search_mode"] == "hybrid" or not response["workers"]
        found = [f["function_id"] for w in response["workers"] for f in w["functions"]]
        if found:
            answered.append((batch, found))
    await service.stop()
    assert answered == []
