"""The failure classes of `benchmarks/miss_analysis.py` (issue 18): each relevant function the
response missed goes to the first class that applies."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

pytest.importorskip("numpy")
from miss_analysis import classify_miss, rank_of  # noqa: E402


def ranks(dense: list[str], bm25: list[str], admitted: bool = True) -> dict[str, object]:
    return {"dense": dense, "bm25": bm25, "learned": [], "admitted": admitted, "lexical": []}


def test_no_observed_lane_is_no_lane() -> None:
    assert classify_miss("a::x", None, ranks(["a::x"], [])) == "no-lane"


def test_refused_lane_holding_the_function() -> None:
    observed = {"lane": ["b::y", "a::x"], "decision": False}
    assert classify_miss("a::x", observed, ranks(["a::x"], [])) == "refused"


def test_outside_both_candidate_pools() -> None:
    observed = {"lane": ["b::y"], "decision": True}
    far = [f"w::f{i}" for i in range(30)] + ["a::x"]
    assert classify_miss("a::x", observed, ranks(far, far)) == "pool"


def test_refused_for_want_of_an_admitted_or_corroborating_dense_ranking() -> None:
    observed = {"lane": ["b::y", "a::x"], "decision": False, "supported": False}
    assert classify_miss("a::x", observed, ranks(["a::x"], [], admitted=False)) == "unsupported"
    kept_lexical = {"lane": ["b::y"], "decision": False, "supported": False}
    assert classify_miss("a::x", kept_lexical, ranks(["a::x"], [], admitted=False)) == "unsupported"


def test_a_candidate_the_answered_lane_does_not_hold_is_fusion() -> None:
    # every hybrid lane is the learned fusion now, admitted or not
    observed = {"lane": ["b::y"], "decision": True}
    assert classify_miss("a::x", observed, ranks(["a::x"], [], admitted=False)) == "fusion"


def test_candidate_ranked_below_twelfth_is_fusion() -> None:
    observed = {"lane": [f"w::f{i}" for i in range(12)] + ["a::x"], "decision": True}
    assert classify_miss("a::x", observed, ranks(["a::x"], [])) == "fusion"


def test_in_the_lane_head_and_answered_is_selection() -> None:
    observed = {"lane": ["b::y", "a::x"], "decision": True}
    assert classify_miss("a::x", observed, ranks(["a::x"], [])) == "selection"


def test_rank_of_is_one_based() -> None:
    assert rank_of("b", ["a", "b"]) == 2
    assert rank_of("c", ["a", "b"]) is None
