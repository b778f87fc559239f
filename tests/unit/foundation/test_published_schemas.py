"""The shipped registration frames (`data/schemas.json`) are what the function table generates,
and the deferred table (`call`) answers exactly as the complete one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from iii_directory import schemas
from iii_directory.functions import SURFACE_MODULES, build_table, deferred_table, surface
from iii_directory.published import SCHEMAS_PATH, Published, own_records, parse, published, registration
from iii_directory.table import FunctionSpec, FunctionTable, Surface

from .conftest import Empty


def test_the_shipped_file_equals_what_the_models_produce() -> None:
    shipped = json.loads(SCHEMAS_PATH.read_text(encoding="utf-8"))
    assert shipped == schemas.generate(), "data/schemas.json is stale: run `python -m iii_directory.schemas --write`"


def test_every_function_of_the_table_is_published_with_its_generated_frame() -> None:
    table = build_table()
    shipped = published()
    assert set(shipped.frames) == set(table.functions) and len(table.functions) >= 40
    for spec in table.functions.values():
        assert shipped.frame(spec) == spec.registration(), spec.id
        assert spec in surface(shipped.surfaces[spec.id]).functions


async def _noop(ctx: Any, request: Any) -> None:
    return None


def _spec(function_id: str, description: str = "probe") -> FunctionSpec:
    return FunctionSpec(id=function_id, description=description, request=Empty, response=None,
                        handler=_noop, metadata={"internal": True})


def test_a_stale_frame_is_not_used() -> None:
    spec = _spec("probe::x")
    frame = spec.registration()
    stale = Published({"probe::x": {**frame, "description": "old words"}}, {"probe::x": "probe"})
    assert stale.frame(spec) is None
    other_metadata = Published({"probe::x": {**frame, "metadata": {}}}, {"probe::x": "probe"})
    assert other_metadata.frame(spec) is None
    assert Published({"probe::x": frame}, {"probe::x": "probe"}).frame(spec) == frame


def test_registration_generates_a_frame_nothing_published() -> None:
    spec = _spec("probe::unpublished")
    assert registration(spec) == spec.registration()


@pytest.mark.parametrize("document", [
    [], {"functions": []}, {"functions": {"a::b": {"surface": "x"}}},
    {"functions": {"a::b": {"surface": 3, "registration": {"id": "a::b"}}}},
    {"functions": {"a::b": {"surface": "x", "registration": {"id": "a::c"}}}},
])
def test_a_malformed_document_is_refused(document: Any) -> None:
    with pytest.raises(ValueError):
        parse(document)


def test_an_unreadable_file_means_nothing_published(tmp_path: Path) -> None:
    broken = tmp_path / "schemas.json"
    broken.write_text("{not json", encoding="utf-8")
    assert published(broken) == Published()
    assert published(tmp_path / "missing.json") == Published()


def test_write_then_check_round_trips(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "schemas.json"
    assert schemas.write(target) is True
    assert schemas.is_current(target)
    assert schemas.write(target) is False  # unchanged text is not rewritten
    assert target.stat().st_mode & 0o777 == 0o644
    document = json.loads(target.read_text(encoding="utf-8"))
    document["functions"]["directory::skills::list"]["registration"]["description"] = "edited"
    target.write_text(json.dumps(document), encoding="utf-8")
    assert not schemas.is_current(target)
    monkeypatch.setattr(schemas, "SCHEMAS_PATH", target)
    assert schemas.main(["--check"]) == 1


def _counting_table(loads: list[str]) -> FunctionTable:
    surfaces = {"one": Surface(functions=(_spec("p::a"), _spec("p::b"))), "two": Surface(functions=(_spec("p::c"),))}
    completes: list[int] = []

    def load(name: str) -> Surface:
        loads.append(name)
        return surfaces[name]

    def complete() -> FunctionTable:
        completes.append(1)
        loads.append("*")
        return FunctionTable.merge([*surfaces.values(), Surface(functions=(_spec("p::new"),))])

    return FunctionTable.deferred({"p::a": "one", "p::b": "one", "p::c": "two"}, load, complete)


def test_a_deferred_table_loads_one_surface_per_first_lookup() -> None:
    loads: list[str] = []
    table = _counting_table(loads)
    assert list(table.functions) == ["p::a", "p::b", "p::c"] and len(table.functions) == 3
    assert "p::b" in table.functions and loads == []
    assert table.functions["p::a"].id == "p::a" and table.functions["p::b"].id == "p::b"
    assert loads == ["one"]
    assert table.functions["p::c"].id == "p::c"
    assert loads == ["one", "two"]


def test_an_id_the_index_lacks_is_looked_up_in_the_complete_table_once() -> None:
    loads: list[str] = []
    table = _counting_table(loads)
    assert table.functions["p::new"].id == "p::new"
    assert table.functions.get("p::missing") is None
    assert "p::missing" not in table.functions
    assert loads.count("*") == 1
    assert [spec.id for spec in build_table().functions.values()]  # the real one still merges


def test_an_index_naming_a_missing_surface_falls_back_to_the_complete_table() -> None:
    complete = FunctionTable.merge([Surface(functions=(_spec("p::a"),))])

    def load(name: str) -> Surface:
        raise KeyError(name)

    table = FunctionTable.deferred({"p::a": "gone"}, load, lambda: complete)
    assert table.functions["p::a"] is complete.functions["p::a"]


def test_a_deferred_table_builds_the_complete_table_for_its_bindings_and_hooks() -> None:
    loads: list[str] = []
    table = _counting_table(loads)
    assert table.trigger_types == () and table.bindings == () and table.on_start == ()
    assert loads == ["*"]


def test_the_real_deferred_table_matches_the_complete_one() -> None:
    deferred, complete = deferred_table(), build_table()
    assert list(deferred.functions) == list(complete.functions)
    for function_id, spec in complete.functions.items():
        assert deferred.functions[function_id] is spec
    assert deferred.bindings == complete.bindings and deferred.trigger_types == complete.trigger_types
    assert own_records(deferred.functions) == [spec.registration() for spec in complete.functions.values()]
    assert set(published().surfaces.values()) <= set(SURFACE_MODULES)


class _Recorder:
    """Stands in for `protocol.Connection`: keeps what `register_table` sends."""

    def __init__(self) -> None:
        self.functions: list[dict[str, Any]] = []
        self.trigger_types: list[dict[str, Any]] = []
        self.bound: list[str] = []

    def register_trigger_type(self, frame: dict[str, Any]) -> None:
        self.trigger_types.append(frame)

    def register_function(self, frame: dict[str, Any]) -> None:
        self.functions.append(frame)

    def bind(self, binding_id: str, trigger_type: str, function_id: str, config: dict[str, Any]) -> None:
        self.bound.append(function_id)

    def unbind(self, binding_id: str) -> None:
        raise AssertionError("nothing is unbound at registration")


def test_registering_the_table_sends_the_published_frames_without_generating_any(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from iii_directory import worker
    from iii_directory.config import Settings

    table = build_table()
    generated = {spec.id: spec.registration() for spec in table.functions.values()}
    monkeypatch.setattr(worker, "_GENERATED", {})
    monkeypatch.setattr(FunctionSpec, "registration", lambda self: pytest.fail(f"{self.id} was generated"))
    connection = _Recorder()
    worker.register_table(connection, worker.LiveEngine(connection), table, Settings())  # type: ignore[arg-type]
    assert {frame["id"]: frame for frame in connection.functions} == generated
    assert len(connection.trigger_types) == len(table.trigger_types) and connection.bound
