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


CASES = DATA / "realworld_cases.json"
MULTINEED = DATA / "realworld_multineed_cases.json"
CASE_KEYS = {"id", "split", "kind", "capabilities", "qrels", "forbidden_prefixes", "forbidden_ids"}
CASE_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def cases(path: Path) -> list[dict[str, Any]]:
    document = load(path)
    assert document["version"] == 1
    return document["cases"]


def check_case_shape(case: dict[str, Any], returnable: set[str]) -> None:
    """One case's fields, its capability count and every qrel's id, grade and covers."""
    assert CASE_ID.match(case["id"]), case["id"]
    assert case["split"] == "test"
    assert case["forbidden_prefixes"] == ["engine::"]
    assert case["forbidden_ids"] == ["directory::search_functions"]
    capabilities = case["capabilities"]
    assert capabilities and all(isinstance(c, str) and c.strip() for c in capabilities)
    for qrel in case["qrels"]:
        assert qrel["function_id"] in returnable, (case["id"], qrel["function_id"])
        assert qrel["grade"] in (1, 2, 3)
        assert qrel["covers"] and all(0 <= i < len(capabilities) for i in qrel["covers"])
    ids = [q["function_id"] for q in case["qrels"]]
    assert len(ids) == len(set(ids)), case["id"]


def test_cases_are_well_formed_and_grade_returnable_tools() -> None:
    returnable = returnable_ids()
    for case in cases(CASES):
        assert set(case) == CASE_KEYS, case["id"]
        check_case_shape(case, returnable)
        if case["kind"] == "no_match":
            assert case["qrels"] == [] and len(case["capabilities"]) >= 1
        elif case["kind"] == "match":
            assert len(case["capabilities"]) == 1
            assert any(q["grade"] == 3 for q in case["qrels"])
        else:
            assert case["kind"] == "multi" and 2 <= len(case["capabilities"]) <= 4
            assert any(q["grade"] == 3 for q in case["qrels"])
            covered = {i for q in case["qrels"] if q["grade"] >= 2 for i in q["covers"]}
            assert len(covered) >= len(case["capabilities"]) - 1, case["id"]


def test_case_ids_are_unique_across_both_case_files() -> None:
    ids = [c["id"] for c in cases(CASES)] + [c["id"] for c in cases(MULTINEED)]
    assert [i for i, n in Counter(ids).items() if n > 1] == []


def test_cases_have_every_kind_and_a_fifth_need_no_tool() -> None:
    all_cases = cases(CASES)
    kinds = Counter(c["kind"] for c in all_cases)
    assert len(all_cases) >= 200 and set(kinds) == {"match", "multi", "no_match"}
    assert 0.20 <= kinds["no_match"] / len(all_cases) <= 0.25


def test_several_needs_cases_list_two_to_five_returnable_needs() -> None:
    returnable = returnable_ids()
    all_cases = cases(MULTINEED)
    assert len(all_cases) >= 60
    for case in all_cases:
        assert set(case) == CASE_KEYS | {"needs"}, case["id"]
        check_case_shape(case, returnable)
        assert case["kind"] == "multi" and len(case["capabilities"]) == 1
        assert all(q["covers"] == [0] for q in case["qrels"])
        needs = case["needs"]
        assert 2 <= len(needs) <= 5, case["id"]
        relevant = {q["function_id"] for q in case["qrels"] if q["grade"] >= 2}
        for need in needs:
            assert need and set(need) <= relevant, (case["id"], need)


def test_most_several_needs_cases_span_servers() -> None:
    spanning = [c for c in cases(MULTINEED)
                if len({namespace(need[0]) for need in c["needs"]}) >= 2]
    assert len(spanning) * 3 >= len(cases(MULTINEED)) * 2
