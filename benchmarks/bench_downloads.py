"""Registry downloads and the registry proxy against the loopback MockRegistry.

Run: `python -m pytest benchmarks/bench_downloads.py --benchmark-only`.

* `download_200` — `directory::skills::download_from_registry` of a 200-file bundle (8 KiB
  markdown each): one HTTP GET, validation of every path and destination, 200 atomic writes
  (fsync + rename) and the completion marker. Dominated by the fsyncs.
* `plan_1000` — planning alone (path validation, routing, destination checks) for 1,000 entries.
* `info_cached` / `info_uncached` — `directory::registry::workers::info` served from the TTL
  cache versus two concurrent loopback GETs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.functions import downloads, registry
from iii_directory.port import StandaloneEngine
from iii_directory.sources.bundle import plan_registry_bundle
from iii_directory.table import FunctionTable
from iii_directory.testing.registry import MockRegistry

BODY = ("A paragraph explaining one function of the worker in plain words. " * 120)[:8192]


def bundle(count: int) -> list[dict[str, str]]:
    return [{"path": f"skills/section-{i // 20:02d}/page-{i:04d}.md", "content": BODY}
            for i in range(count)]


@pytest.fixture(scope="module")
def mock() -> Iterator[MockRegistry]:
    with MockRegistry() as server:
        server.add_worker("big", skills=bundle(200),
                          functions=[{"name": f"big::fn-{i}", "description": "Does one thing."}
                                     for i in range(60)])
        yield server


def make_directory(tmp: Path, url: str, ttl_ms: int) -> Directory:
    settings = Settings(skills_folder=str(tmp / "skills"), local_skills_folder=str(tmp / "local"),
                        agents_folder=str(tmp / "agents"), registry_url=url,
                        registry_cache_ttl_ms=ttl_ms, auto_download=False,
                        filter_unregistered=False)
    table = FunctionTable.merge([downloads.SURFACE, registry.SURFACE])
    return Directory(settings=settings, engine=StandaloneEngine(), table=table)


def test_download_200(benchmark: object, mock: MockRegistry, tmp_path: Path) -> None:
    directory = make_directory(tmp_path, mock.url, 60_000)

    def run() -> None:
        out = asyncio.run(directory.invoke("directory::skills::download_from_registry",
                                           {"worker": "big"}))
        assert len(out["skills_written"]) == 200

    benchmark.pedantic(run, rounds=5, iterations=1)  # type: ignore[attr-defined]


def test_plan_1000(benchmark: object, tmp_path: Path) -> None:
    payload = {"skills": bundle(1000)}

    def run() -> None:
        plan = plan_registry_bundle(payload, "big", tmp_path / "skills", tmp_path / "agents", {})
        assert len(plan.files) == 1000

    benchmark.pedantic(run, rounds=5, iterations=1)  # type: ignore[attr-defined]


@pytest.mark.parametrize("ttl_ms", [60_000, 0], ids=["info_cached", "info_uncached"])
def test_info(benchmark: object, mock: MockRegistry, tmp_path: Path, ttl_ms: int) -> None:
    directory = make_directory(tmp_path, mock.url, ttl_ms)
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(directory.invoke("directory::registry::workers::info",
                                                 {"name": "big"}))

        def run() -> None:
            card = loop.run_until_complete(
                directory.invoke("directory::registry::workers::info", {"name": "big"}))
            assert len(card["api_reference"]["functions"]) == 60

        benchmark.pedantic(run, rounds=20, iterations=1)  # type: ignore[attr-defined]
    finally:
        loop.close()
