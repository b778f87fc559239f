"""Installed workers from `compose::status`, the cache and its fallbacks, kits.lock, and the
`filter_unregistered` survival rules (§3.6)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from iii_directory.content.visibility import (
    InstalledWorkers,
    Visibility,
    compose_route,
    kit_namespaces,
    parse_installed,
)
from iii_directory.port import EngineCallError

from .helpers import PeerEngine, write


def test_parse_installed() -> None:
    payload = {"containers": [
        {"container": "shell", "status": "running"},
        {"container": "database", "status": "stopped"},
        {"status": "running"},
        {"container": ""},
        "junk",
    ]}
    assert parse_installed(payload) == frozenset({"shell", "database"})
    assert parse_installed({"containers": []}) == frozenset()
    assert parse_installed({}) is None
    assert parse_installed({"containers": {"shell": {}}}) is None
    assert parse_installed(None) is None


def test_compose_route(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("III_COMPOSE_NAMESPACE", raising=False)
    monkeypatch.delenv("III_COMPOSE_FILE", raising=False)
    assert compose_route() == ({}, None)
    monkeypatch.setenv("III_COMPOSE_NAMESPACE", " prod ")
    monkeypatch.setenv("III_COMPOSE_FILE", "/p/worker-compose.yaml")
    assert compose_route() == ({"file": "/p/worker-compose.yaml", "namespace": "prod"}, "prod")
    monkeypatch.setenv("III_COMPOSE_NAMESPACE", "  ")
    assert compose_route() == ({"file": "/p/worker-compose.yaml"}, None)


async def test_cache_honours_the_ttl_and_fresh(make_directory: Any, peer: PeerEngine) -> None:
    peer.installed("shell")
    directory = make_directory(peer, filter_unregistered=True)
    workers = directory.service(InstalledWorkers)
    assert await workers.get() == frozenset({"shell"})
    peer.installed("shell", "database")
    assert await workers.get() == frozenset({"shell"})
    assert peer.status_calls() == 1
    assert await workers.get(fresh=True) == frozenset({"shell", "database"})
    assert peer.status_calls() == 2
    workers.invalidate()
    await workers.get()
    assert peer.status_calls() == 3


async def test_zero_ttl_disables_the_cache(make_directory: Any, peer: PeerEngine) -> None:
    directory = make_directory(peer, registry_cache_ttl_ms=0)
    workers = directory.service(InstalledWorkers)
    await workers.get()
    await workers.get()
    assert peer.status_calls() == 2


async def test_failures_fall_back_to_the_last_known_set(make_directory: Any, peer: PeerEngine) -> None:
    directory = make_directory(peer, registry_cache_ttl_ms=0)
    workers = directory.service(InstalledWorkers)
    peer.failure = EngineCallError("function_not_found", "compose::status not found")
    assert await workers.get() is None
    peer.failure = None
    peer.installed("shell")
    assert await workers.get() == frozenset({"shell"})
    peer.failure = EngineCallError("TIMEOUT", "timed out")
    assert await workers.get() == frozenset({"shell"})
    peer.failure = None
    peer.status_payload = {"containers": "nonsense"}
    assert await workers.get() == frozenset({"shell"})


async def test_configuration_reload_invalidates(make_directory: Any, peer: PeerEngine) -> None:
    directory = make_directory(peer)
    workers = directory.service(InstalledWorkers)
    await workers.get()
    directory.apply_settings(directory.settings.model_copy(update={"hint_min_workers": 3}))
    await workers.get()
    assert peer.status_calls() == 2


async def test_standalone_never_asks(make_directory: Any) -> None:
    directory = make_directory()
    assert await directory.service(InstalledWorkers).get(fresh=True) is None


async def test_compose_call_is_routed(make_directory: Any, peer: PeerEngine,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("III_COMPOSE_NAMESPACE", "prod")
    monkeypatch.setenv("III_COMPOSE_FILE", "/p/c.yaml")
    directory = make_directory(peer)
    await directory.service(InstalledWorkers).get()
    assert peer.calls == [("compose::status", {"file": "/p/c.yaml", "namespace": "prod"}, "prod")]


def test_kit_namespaces_are_read_leniently(roots: dict[str, Path]) -> None:
    lock = roots["project"] / "kits.lock"
    assert kit_namespaces() == frozenset()
    write(roots["project"], "kits.lock",
          "# kits.lock\nversion: 1\nkits:\n  acme/team:\n    version: 1.0.0\n")
    assert kit_namespaces() == frozenset({"acme/team"})
    assert kit_namespaces(roots["project"]) == frozenset({"acme/team"})
    for broken in ["version: 2\nkits:\n  acme/team: {}\n", "kits: [\n", "", "- 1\n",
                   "version: 1\nkits: [a]\n"]:
        lock.write_text(broken)
        assert kit_namespaces() == frozenset()


@pytest.mark.parametrize(
    ("skill_id", "visible"),
    [
        ("index", True),
        ("readme", True),
        ("directory/skills", True),
        ("iii/index", True),
        ("shell/exec", True),
        ("pdf/index", True),
        ("acme/team/flow", True),
        ("acme/teamx/flow", False),
        ("acme/flow", False),
        ("database/query", False),
    ],
)
def test_survival_rules(skill_id: str, visible: bool) -> None:
    vis = Visibility(True, frozenset({"shell"}), frozenset({"acme/team"}), frozenset({"pdf"}))
    assert vis.survives(skill_id) is visible


def test_filter_is_skipped_when_off_or_unknown() -> None:
    assert Visibility(False, frozenset(), frozenset(), frozenset()).survives("x/y")
    assert Visibility(True, None, frozenset(), frozenset()).survives("x/y")
    assert not Visibility(True, None, frozenset(), frozenset()).active
