"""`directory::skills::*` through the engine protocol: every function invoked by a test client,
coded error bodies, visibility through a Compose peer, the on-change fan-out and the watcher."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from iii_directory.config import Settings
from wire_checks import failure, own_ops

pytestmark = [pytest.mark.wire, pytest.mark.timeout(60)]

ON_CHANGE = "directory::skills::on-change"


def put(root: Path, rel: str, content: str = "# Title\n\nBody.\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    return path


async def test_every_function_round_trip(wire: Any, roots: dict[str, Path]) -> None:
    events = wire.subscribe(ON_CHANGE)
    put(roots["skills"], "team-a/index.md", "# Team A\n\nTeam A overview.\n")
    put(roots["skills"], "team-a/foo.md", "---\ntype: how-to\n---\n# Foo\n\nFoo body.\n")

    listed = await wire.call("directory::skills::list", {"prefix": "team-a/"})
    assert [(r["id"], r["title"], r["type"]) for r in listed["skills"]] == [
        ("team-a/foo", "Foo", "how-to"), ("team-a", "Team A", None)]

    created = await wire.call("directory::skills::create", {"id": "team-a/bar.md", "content": "# Bar\n\nbar\n"})
    assert (created["id"], created["title"], created["bytes"]) == ("team-a/bar", "Bar", 11)
    assert (roots["skills"] / "team-a" / "bar.md").read_text() == "# Bar\n\nbar\n"

    got = await wire.call("directory::skills::get", {"id": "iii://team-a/bar", "raw": True})
    assert (got["id"], got["body"], got["raw"]) == ("team-a/bar", "# Bar\n\nbar\n", "# Bar\n\nbar\n")
    assert got["path"] == str(roots["skills"] / "team-a" / "bar.md")

    updated = await wire.call("directory::skills::update", {"id": "team-a/bar", "content": "# Baz\n\nbaz\n"})
    assert updated["title"] == "Baz"

    index = await wire.call("directory::skills::index", {})
    assert index["workers_count"] == 1
    assert '`directory::skills::get { "id": "team-a" }` (legacy `iii://team-a`)' in index["body"]

    assert await wire.call("directory::skills::delete", {"id": "team-a/bar"}) == {"id": "team-a/bar"}
    assert not (roots["skills"] / "team-a" / "bar.md").exists()

    await events.wait_for(3)
    assert own_ops(events)[:3] == [
        {"op": "create", "namespace": "team-a", "id": "team-a/bar"},
        {"op": "update", "namespace": "team-a", "id": "team-a/bar"},
        {"op": "delete", "namespace": "team-a", "id": "team-a/bar"},
    ]


async def test_coded_errors_travel_with_their_codes(wire: Any, roots: dict[str, Path]) -> None:
    put(roots["skills"], "ns/alpha.md")
    miss = await failure(wire, "directory::skills::get", {"id": "ns/alpah"})
    assert miss.code == "D110"
    assert miss.message.startswith('D110 not_found: skill "ns/alpah" does not exist. Did you mean: ns/alpha.')
    d112 = await failure(wire, "directory::skills::get", {"id": "database::execute"})
    assert d112.code == "D112"
    d114 = await failure(wire, "directory::skills::create", {"id": "ns/alpha", "content": "x"})
    assert d114.code == "D114"
    d113 = await failure(wire, "directory::skills::update", {"id": "ns/alpha", "content": "---\na: 1\n---\n"})
    assert d113.code == "D113"
    d115 = await failure(wire, "directory::skills::create", {"id": "ns/prompts/x", "content": "x"})
    assert d115.code == "D115"
    put(roots["agents_skills"], "pdf/SKILL.md")
    d116 = await failure(wire, "directory::skills::delete", {"id": "pdf"})
    assert d116.code == "D116"
    bare = await failure(wire, "directory::skills::get", {"id": "Bad"})
    assert bare.code == "invocation_failed" and "segment may only contain" in bare.message
    shape = await failure(wire, "directory::skills::get", {"id": 7})
    assert 'field "id"' in shape.message
    assert (await wire.call("directory::skills::list", {"type": "zzz"})) == {"skills": []}


async def test_list_search_body_through_the_engine(wire: Any, roots: dict[str, Path]) -> None:
    put(roots["skills"], "ops/deploy.md", "# Deploy\n\nShips a release.\n\n## Rollback\n\nRun rollout undo.\n")
    put(roots["skills"], "ops/other.md", "# Other\n\nNothing here.\n")
    plain = await wire.call("directory::skills::list", {"search": "rollout undo"})
    assert plain == {"skills": []}
    found = await wire.call("directory::skills::list",
                            {"search": "Rollout Undo", "search_body": True, "include_description": False})
    assert [(r["id"], r["title"], r["description"]) for r in found["skills"]] == [("ops/deploy", "Deploy", "")]
    shape = await failure(wire, "directory::skills::list", {"search_body": "yes"})
    assert 'field "search_body"' in shape.message


async def test_list_include_origin_through_the_engine(wire: Any, roots: dict[str, Path]) -> None:
    put(roots["skills"], "team/tool.md")
    put(roots["agents_skills"], "pdf/SKILL.md")
    plain = await wire.call("directory::skills::list", {})
    assert all("origin" not in row for row in plain["skills"])
    rows = await wire.call("directory::skills::list", {"include_origin": True})
    assert {r["id"]: r["origin"] for r in rows["skills"]} == {"team/tool": "skills", "pdf": "read_only"}
    with_origin = await failure(wire, "directory::skills::delete", {"id": "pdf"})
    assert with_origin.code == "D116", "read_only is what the write paths refuse"


async def test_list_from_the_listing_cache_sees_every_edit(wire: Any, roots: dict[str, Path]) -> None:
    """Rows and bodies come from the worker's caches; each call still sees disk at once, with
    no wait for the watcher: an edit of the same size, a delete, a new file."""
    doc = put(roots["skills"], "ops/deploy.md", "# Deploy\n\nShips a release.\n\nRun rollout undo.\n")
    put(roots["skills"], "ops/other.md", "---\ntype: how-to\n---\n# Other\n\nNothing here.\n")
    await anyio.sleep(0.3)  # past the 100 ms settle time, so the rows below are kept in memory
    request = {"include_origin": True}
    first = await wire.call("directory::skills::list", request)
    assert first == await wire.call("directory::skills::list", request)
    assert first["skills"][0] == {
        "id": "ops/deploy", "title": "Deploy", "type": None, "function_id": None,
        "disable_model_invocation": False, "description": "Ships a release.",
        "bytes": doc.stat().st_size, "modified_at": first["skills"][0]["modified_at"],
        "origin": "skills"}
    body = {"search": "rollout", "search_body": True, "include_description": False}
    assert [r["id"] for r in (await wire.call("directory::skills::list", body))["skills"]] == ["ops/deploy"]
    size = doc.stat().st_size
    doc.write_text("# Deploy\n\nShips a release.\n\nRun rollback now.\n")
    assert doc.stat().st_size == size
    assert (await wire.call("directory::skills::list", body))["skills"] == []
    body["search"] = "rollback"
    assert [r["id"] for r in (await wire.call("directory::skills::list", body))["skills"]] == ["ops/deploy"]
    (roots["skills"] / "ops" / "other.md").unlink()
    put(roots["skills"], "ops/third.md", "# Third\n\nAlso a rollback.\n")
    listed = await wire.call("directory::skills::list", body)
    assert [(r["id"], r["description"]) for r in listed["skills"]] == [("ops/deploy", ""), ("ops/third", "")]
    assert [r["id"] for r in (await wire.call("directory::skills::list", {"type": "how-to"}))["skills"]] == []


class TestVisibility:
    @pytest.fixture
    def settings(self, settings: Settings) -> Settings:
        return settings.model_copy(update={"filter_unregistered": True, "registry_cache_ttl_ms": 0})

    async def test_installed_workers_come_from_compose(self, wire: Any, roots: dict[str, Path]) -> None:
        compose = wire.engine.install_compose()
        compose.set_containers("shell")
        for rel in ["shell/index.md", "database/index.md", "directory/index.md"]:
            put(roots["skills"], rel)
        listed = await wire.call("directory::skills::list", {})
        assert [r["id"] for r in listed["skills"]] == ["directory", "shell"]
        hidden = await failure(wire, "directory::skills::create", {"id": "database/x", "content": "x"})
        assert hidden.code == "D115" and "filter_unregistered" in hidden.message
        compose.set_containers("shell", "database")
        assert (await wire.call("directory::skills::index", {}))["workers_count"] == 3
        compose.down = True
        listed = await wire.call("directory::skills::list", {})
        assert [r["id"] for r in listed["skills"]] == ["database", "directory", "shell"]


async def settle() -> None:
    """Longer than one notification debounce plus the watcher's 300 ms window."""
    await anyio.sleep(1.5)


async def test_watcher_doorbell_and_self_write_suppression(wire: Any, roots: dict[str, Path]) -> None:
    events = wire.subscribe(ON_CHANGE)
    watcher_ready = False
    for attempt in range(40):
        put(roots["skills"], "probe/p.md", f"# probe {attempt}\n\nx\n")
        try:
            await events.wait_for(1, timeout=0.25)
            watcher_ready = True
            break
        except TimeoutError:
            continue
    assert watcher_ready, "the watcher never reported an external write"
    await settle()
    events.clear()
    await wire.call("directory::skills::create", {"id": "mine/doc", "content": "# Mine\n\nx\n"})
    await events.wait_for(1)
    await settle()
    assert list(events) == [{"op": "create", "namespace": "mine", "id": "mine/doc"}]
    put(roots["skills"], "theirs/a.md")
    put(roots["skills"], "theirs/b.md")
    await events.wait_for(2)
    await settle()
    assert list(events)[1:] == [{"op": "external"}]
