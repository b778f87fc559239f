"""The real-world transfer set is well formed (benchmarks/data/REALWORLD.md).

Stdlib only: the checks run on hosts without numpy or the dense extra.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[3] / "benchmarks" / "data"
CATALOG = DATA / "realworld_catalog.json"
CONTROL_IDS = frozenset({"engine::functions::list", "engine::workers::list",
                         "engine::functions::invoke", "engine::workers::disconnect",
                         "engine::health", "directory::search_functions"})
RECORD_KEYS = {"function_id", "description", "request_schema", "metadata"}
NAMESPACE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def load(path: Path) -> Any:
    """Parse one data file; every file of the set is UTF-8 JSON."""
    return json.loads(path.read_text(encoding="utf-8"))


def catalog() -> list[dict[str, Any]]:
    return load(CATALOG)


def namespace(function_id: str) -> str:
    return function_id.split("::", 1)[0]


def returnable_ids() -> set[str]:
    """Ids a correct search may return: not the control plane, the search itself or internal."""
    return {r["function_id"] for r in catalog()
            if r["function_id"] not in CONTROL_IDS and not r["function_id"].startswith("engine::")
            and not r["metadata"].get("internal")}


def test_catalog_records_have_the_shared_format() -> None:
    records = catalog()
    assert isinstance(records, list)
    for record in records:
        assert set(record) == RECORD_KEYS, record.get("function_id")
        assert isinstance(record["description"], str) and record["description"].strip()
        schema = record["request_schema"]
        assert schema["type"] == "object" and isinstance(schema["properties"], dict)
        assert set(schema.get("required", [])) <= set(schema["properties"]), record["function_id"]
        assert isinstance(record["metadata"], dict)


def test_catalog_ids_are_unique_and_namespaced() -> None:
    ids = [r["function_id"] for r in catalog()]
    assert [i for i, n in Counter(ids).items() if n > 1] == []
    for function_id in ids:
        ns, _, name = function_id.partition("::")
        assert NAMESPACE.match(ns) and name, function_id


def test_catalog_carries_the_six_control_records() -> None:
    control = {r["function_id"]: r for r in catalog() if r["function_id"] in CONTROL_IDS}
    assert set(control) == CONTROL_IDS
    assert all(r["metadata"] == {} for r in control.values())
    assert [r for r in catalog() if r["function_id"].startswith("engine::")
            and r["function_id"] not in CONTROL_IDS] == []


def test_catalog_is_large_and_broad_enough() -> None:
    ids = returnable_ids()
    assert len(ids) >= 300
    assert len({namespace(i) for i in ids}) >= 30
    assert max(len(r["description"]) for r in catalog()) <= 1500
