"""The evaluation harness (`python -m iii_directory.bench`) on a hand-made fixture (search.md §14.2)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from iii_directory.bench import (first_and_repeated, joined_multi, latency_metrics, main, nearest_rank,
                                  plain_bm25_run, relevant_functions, response_ids, score_cases,
                                  side_by_side, text_key, top_ids)

CASES: list[dict[str, Any]] = [
    {"id": "m1", "split": "dev", "kind": "match", "capabilities": ["a"],
     "qrels": [{"function_id": "x::a", "grade": 3, "covers": [0]}, {"function_id": "y::b", "grade": 2, "covers": [0]},
               {"function_id": "x::c", "grade": 1, "covers": [0]}],
     "forbidden_prefixes": ["engine::"], "forbidden_ids": ["directory::search_functions"]},
    {"id": "multi", "split": "dev", "kind": "multi", "capabilities": ["a", "b", "c"],
     "qrels": [{"function_id": "x::a", "grade": 3, "covers": [0]}, {"function_id": "z::d", "grade": 3, "covers": [1]},
               {"function_id": "w::e", "grade": 1, "covers": [2]}],
     "forbidden_prefixes": ["engine::"], "forbidden_ids": ["directory::search_functions"]},
    {"id": "none", "split": "dev", "kind": "no_match", "capabilities": ["q"], "qrels": [],
     "forbidden_prefixes": ["engine::"], "forbidden_ids": ["directory::search_functions"]},
    {"id": "none2", "split": "dev", "kind": "no_match", "capabilities": ["q"], "qrels": [],
     "forbidden_prefixes": ["engine::"], "forbidden_ids": ["directory::search_functions"]},
]

RUN = {
    "m1": ["y::b", "q::zz", "x::a"],
    "multi": ["x::a", "engine::health", {"function_id": "secret::gc"}],
    "none": [],
    "none2": ["directory::search_functions"],
}


def test_top_ids_dedupes_and_cuts() -> None:
    assert top_ids(["a", {"function_id": "b"}, "a", 3, "c"], 2) == ["a", "b"]


def test_metrics_on_known_answers() -> None:
    m = score_cases(CASES, RUN, internal={"secret::gc"})
    assert m["recall_at_1"] == pytest.approx((0.5 + 0.5) / 2)
    assert m["recall_at_3"] == pytest.approx((1.0 + 0.5) / 2)
    assert m["mrr_at_1"] == pytest.approx(1.0)
    dcg_m1 = (2**2 - 1) / math.log2(2) + (2**3 - 1) / math.log2(4)
    idcg_m1 = (2**3 - 1) / math.log2(2) + (2**2 - 1) / math.log2(3) + (2**1 - 1) / math.log2(4)
    dcg_multi = (2**3 - 1) / math.log2(2)
    idcg_multi = (2**3 - 1) / math.log2(2) + (2**3 - 1) / math.log2(3) + (2**1 - 1) / math.log2(4)
    assert m["ndcg_at_12"] == pytest.approx((dcg_m1 / idcg_m1 + dcg_multi / idcg_multi) / 2)
    assert m["worker_recall_at_12"] == pytest.approx((1.0 + 0.5) / 2)
    assert m["multi_coverage_at_12"] == pytest.approx(1 / 2)  # capability 2 is not coverable
    assert m["forbidden_contamination"] == 3  # engine::health, the internal id, the search itself
    assert m["false_positive_rate"] == pytest.approx(0.5)


def test_nearest_rank_percentiles_and_latency() -> None:
    values = [float(v) for v in range(1, 101)]
    assert nearest_rank(values, 50) == 50.0
    assert nearest_rank(values, 95) == 95.0
    assert nearest_rank([], 50) is None
    m = latency_metrics([(1, 2.0), (1, 4.0), (6, 10.0)])
    assert m["latency_p50_ms"] == 4.0 and m["latency_max_ms"] == 10.0
    assert m["latency_by_capabilities"]["6"] == {"samples": 1, "p50_ms": 10.0, "p95_ms": 10.0}


def test_first_calls_are_reported_apart_from_repeated_ones() -> None:
    samples = [{"capabilities": 1, "latency_ms": 30.0, "first": True},
               {"capabilities": 1, "latency_ms": 40.0, "first": True},
               {"capabilities": 1, "latency_ms": 5.0, "first": False}]
    split = first_and_repeated(samples)
    assert split["latency_first_call"]["samples"] == 2 and split["latency_first_call"]["p95_ms"] == 40.0
    assert split["latency_repeated_call"] == {"samples": 1, "p50_ms": 5.0, "p95_ms": 5.0,
                                              "by_capabilities": {"1": {"samples": 1, "p50_ms": 5.0,
                                                                        "p95_ms": 5.0}}}
    assert text_key("  Send an\tEMAIL ") == "send an email"


def test_bench_runs_the_handler_and_writes_run_and_metrics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    catalog = [
        {"function_id": "mail::send", "description": "Send an email message.", "request_schema": {"type": "object", "properties": {"to": {}}}, "metadata": {}},
        {"function_id": "sms::send", "description": "Send an SMS text message.", "request_schema": {"type": "object", "properties": {"to": {}}}, "metadata": {}},
        {"function_id": "engine::functions::list", "description": "List functions.", "request_schema": {"type": "object", "properties": {}}, "metadata": {}},
    ]
    cases = {"version": 1, "cases": [
        {"id": "mail", "split": "dev", "kind": "match", "capabilities": ["send an email message"],
         "qrels": [{"function_id": "mail::send", "grade": 3, "covers": [0]}],
         "forbidden_prefixes": ["engine::"], "forbidden_ids": ["directory::search_functions"]},
        {"id": "pizza", "split": "test", "kind": "no_match", "capabilities": ["order a pizza"], "qrels": [],
         "forbidden_prefixes": ["engine::"], "forbidden_ids": ["directory::search_functions"]},
    ]}
    (tmp_path / "catalog.json").write_text(json.dumps(catalog))
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    run, metrics = tmp_path / "run.json", tmp_path / "metrics.json"
    assert main(["--eval-dir", str(tmp_path), "--mode", "lexical", "--json", str(run),
                 "--metrics-json", str(metrics)]) == 0
    # an answered capability's list is filled from its BM25 hits (lanes.bm25_tail)
    assert json.loads(run.read_text()) == {"mail": ["mail::send", "sms::send"], "pizza": []}
    written = json.loads(metrics.read_text())["lexical"]
    assert written["dev"]["recall_at_12"] == 1.0 and written["dev"]["mrr_at_1"] == 1.0
    assert written["test"]["false_positive_rate"] == 0.0
    for key in ("recall_at_1", "recall_at_3", "recall_at_6", "recall_at_12", "mrr_at_1", "ndcg_at_12",
                "worker_recall_at_12", "multi_coverage_at_12", "forbidden_contamination",
                "false_positive_rate", "latency_p50_ms", "latency_p95_ms"):
        assert key in written["dev"]
    assert written["dev"]["latency_first_call"]["samples"] == 1
    assert written["dev"]["latency_repeated_call"]["samples"] == 0
    out = capsys.readouterr().out
    assert "mode=lexical" in out and "split=dev" in out and "split=test" in out
    assert "first calls (texts not seen before)" in out
    assert main(["--eval-dir", str(tmp_path), "--mode", "lexical", "--label", "heldout",
                 "--metrics-json", str(metrics)]) == 0
    relabelled = json.loads(metrics.read_text())["lexical"]
    assert set(relabelled) == {"reported_search_mode", "heldout"}
    assert relabelled["heldout"]["ranked_cases"] == 1 and relabelled["heldout"]["no_match_cases"] == 1
    assert "split=heldout" in capsys.readouterr().out


def test_answered_nothing_and_all_needs() -> None:
    cases = [
        {"id": "a", "split": "s", "kind": "match", "capabilities": ["x"],
         "qrels": [{"function_id": "p::a", "grade": 3, "covers": [0]}],
         "needs": [["p::a"], ["q::b", "q::c"]]},
        {"id": "b", "split": "s", "kind": "match", "capabilities": ["y"],
         "qrels": [{"function_id": "p::a", "grade": 3, "covers": [0]}],
         "needs": [["p::a"], ["q::b"]]},
        {"id": "c", "split": "s", "kind": "match", "capabilities": ["z"],
         "qrels": [{"function_id": "p::a", "grade": 3, "covers": [0]}]},
    ]
    m = score_cases(cases, {"a": ["p::a", "q::c"], "b": ["p::a"], "c": []}, set())
    assert m["answered_nothing_rate"] == pytest.approx(1 / 3)
    assert m["all_needs_at_12"] == pytest.approx(1 / 2)
    # answer length over the answered cases (2 and 1 ids), both shorter than 12
    assert m["answer_length"] == pytest.approx(1.5)
    assert m["short_answer_rate"] == pytest.approx(1.0)
    assert score_cases(cases[2:], {"c": []}, set())["answer_length"] is None
    assert score_cases(cases[2:], {"c": ["p::a"]}, set())["all_needs_at_12"] is None


def test_high_only_ids_and_the_side_by_side_rows() -> None:
    response = {"workers": [{"namespace": "p", "functions": [
        {"function_id": "p::a", "confidence": "high"}, {"function_id": "p::b", "confidence": "low"}]}]}
    assert response_ids(response) == ["p::a", "p::b"]
    assert response_ids(response, high_only=True) == ["p::a"]
    rows = side_by_side({"recall_at_12": 0.5, "all_needs_at_12": None}, {"recall_at_12": 0.75},
                        {"recall_at_12": 0.25}).splitlines()
    assert rows[0].split() == ["high", "all", "bm25"]
    assert rows[1].split() == ["R@12", "0.500", "0.750", "0.250"]
    assert rows[-1].split()[-3:] == ["n/a", "n/a", "n/a"]


def test_plain_bm25_merges_capabilities_round_robin_and_skips_excluded_ids() -> None:
    catalog = [
        {"function_id": "mail::send", "description": "Send an email message.",
         "request_schema": {"properties": {"to": {}}}},
        {"function_id": "sms::send", "description": "Send an SMS text message.",
         "request_schema": {"properties": {"phone": {}}}},
        {"function_id": "engine::functions::list", "description": "List email functions."},
        {"function_id": "mail::hook", "description": "email bounce hook",
         "metadata": {"internal": True}},
    ]
    cases = [{"id": "x", "capabilities": ["email message", "sms phone"]}]
    assert plain_bm25_run(catalog, cases) == {"x": ["mail::send", "sms::send"]}


def test_join_multi_makes_one_capability_with_needs() -> None:
    joined = joined_multi(CASES)
    assert [case["id"] for case in joined] == []  # capability 2 of "multi" has no grade ≥ 2
    case = {**CASES[1], "qrels": CASES[1]["qrels"] + [{"function_id": "w::f", "grade": 2,
                                                         "covers": [2]}]}
    (made,) = joined_multi([CASES[0], case])
    assert made["capabilities"] == ["a, b and c"] and made["id"] == "multi-joined"
    assert made["needs"] == [["x::a"], ["z::d"], ["w::f"]]
    assert {q["covers"][0] for q in made["qrels"]} == {0}


def test_relevant_functions_read_grades_and_covers() -> None:
    case = {"capabilities": ["send mail", "store a file"],
            "qrels": [{"function_id": "mail::send", "grade": 3, "covers": [0]},
                      {"function_id": "mail::draft", "grade": 1, "covers": [0]},
                      {"function_id": "drive::put", "grade": 2, "covers": [1]},
                      {"function_id": "drive::share", "grade": 2}]}
    assert relevant_functions(case, 0) == {"mail::send", "drive::share"}
    assert relevant_functions(case, 1) == {"drive::put", "drive::share"}
    assert relevant_functions(case, 0, min_grade=1) == {"mail::send", "mail::draft", "drive::share"}
