"""Batching, selection and grouping (search.md §7)."""

from __future__ import annotations

from iii_directory.search.ranking.select import (SELECTION_BUDGET, batches, concatenate,
                                                 group_by_namespace, namespace_floor, needs_first,
                                                 padding,
                                                 round_robin,
                                                 select_batch, worker_cap)


def test_batches_of_six() -> None:
    assert [len(b) for b in batches(list(range(14)))] == [6, 6, 2]
    assert batches([]) == []


def test_namespace_floor_at_040() -> None:
    lane = [("a::x", 10.0), ("b::y", 4.0), ("c::z", 3.99), ("a::w", 1.0), ("plain", 9.0)]
    kept = [i for i, _ in namespace_floor(lane)]
    assert kept == ["a::x", "b::y", "a::w"]


def test_namespace_floor_keeps_exact_lane_with_zero_score() -> None:
    assert namespace_floor([("a::x", 0.0)]) == [("a::x", 0.0)]


def test_round_robin_gives_every_lane_a_candidate_first() -> None:
    lanes = [["a1", "a2", "a3"], ["b1", "a1", "b2"], ["c1"]]
    assert round_robin(lanes, 12) == ["a1", "b1", "c1", "a2", "a3", "b2"]
    assert round_robin(lanes, 2) == ["a1", "b1"]


def test_round_robin_budget_12() -> None:
    lanes = [[f"n{i}::f{j}" for j in range(10)] for i in range(3)]
    merged = round_robin(lanes, 12)
    assert len(merged) == 12
    assert merged[:3] == ["n0::f0", "n1::f0", "n2::f0"]


def test_worker_cap() -> None:
    ids = [f"ns{i}::f" for i in range(8)] + ["ns0::g", "plain"]
    assert worker_cap(ids, 1) == [f"ns{i}::f" for i in range(6)] + ["ns0::g"]
    assert worker_cap(ids, 4) == ids[:-1]  # cap 8


def test_select_batch_skips_floor_when_judged() -> None:
    lane = [("a::x", 1.0), ("b::y", 0.1)]
    assert select_batch([lane]) == ["a::x"]
    assert select_batch([lane], judged=True) == ["a::x", "b::y"]


def test_concatenate_dedupes_in_batch_order() -> None:
    assert concatenate([["a::1", "b::1"], ["b::1", "c::1"]]) == ["a::1", "b::1", "c::1"]


def test_grouping_in_first_seen_order() -> None:
    descriptions = {"a::1": "A1.", "b::1": "B1.", "a::2": "A2."}
    groups = group_by_namespace(["a::1", "b::1", "unknown::x", "a::2", "plain"], descriptions | {"plain": ""})
    assert groups == [
        {"namespace": "a", "functions": [{"function_id": "a::1", "description": "A1."},
                                         {"function_id": "a::2", "description": "A2."}]},
        {"namespace": "b", "functions": [{"function_id": "b::1", "description": "B1."}]},
    ]


def test_tails_fill_only_the_budget_the_lanes_leave() -> None:
    lanes = [[("a::1", 3.0), ("a::2", 2.5)], [("b::1", 1.0)]]
    tails = [[("t::1", 0.3), ("a::2", 0.29), ("t::2", 0.25)], [("u::1", 0.22)]]
    # lanes first (round robin), then the tails round robin, ids already taken skipped
    assert select_batch(lanes, tails=tails) == ["a::1", "b::1", "a::2", "t::1", "u::1", "t::2"]
    full = [[(f"x::{i}", 1.0 - i / 100) for i in range(12)]]
    assert select_batch(full, tails=[[("t::1", 0.3)]]) == [f"x::{i}" for i in range(12)]
    assert select_batch(lanes) == ["a::1", "b::1", "a::2"]


def test_a_capped_workers_slot_goes_to_the_next_candidate() -> None:
    """The worker cap (max(6, 2 × lanes) workers) walks the whole merged order and the budget
    of 12 is counted after it: a 7th and 8th worker's entries are replaced by later entries of
    admitted workers, not dropped from a shorter list."""
    lane = [(f"w{i}::a", 1.0 - i / 100) for i in range(8)]
    lane += [(f"w{i}::b", 0.5 - i / 100) for i in range(8)]
    selected = select_batch([lane], learned=[True])
    assert len(selected) == SELECTION_BUDGET
    assert {doc_id.split("::")[0] for doc_id in selected} == {f"w{i}" for i in range(6)}
    assert selected[:6] == [f"w{i}::a" for i in range(6)]
    assert selected[6:] == [f"w{i}::b" for i in range(6)]
    # a tail still only spends what the lanes leave, after the cap
    tail = [("t::1", 0.3), ("w0::c", 0.2)]
    assert select_batch([lane[:3]], learned=[True], tails=[tail]) == [
        "w0::a", "w1::a", "w2::a", "t::1", "w0::c"]


def test_padding_fills_the_budget_from_what_the_floor_and_the_cap_left_out() -> None:
    """Padding takes the lanes' entries the selection left out (round robin across lanes),
    then the tails', never an id without a namespace, and only up to the budget."""
    lanes = [[("a::1", 10.0), ("c::1", 2.0), ("a::2", 1.0)], [("b::1", 5.0), ("plain", 4.0)]]
    tails = [[("t::1", 0.3)], [("b::1", 0.2), ("u::1", 0.1)]]
    selection = select_batch(lanes, tails=tails)
    assert "c::1" not in selection  # below the namespace floor of its lane
    fill = padding(selection, lanes, tails)
    assert fill == ["c::1"]
    assert padding(["a::1"], lanes, tails) == ["b::1", "c::1", "a::2", "t::1", "u::1"]
    assert padding(["a::1"], lanes, tails, budget=3) == ["b::1", "c::1"]


def test_padding_never_fills_an_empty_or_full_selection() -> None:
    lanes = [[("a::1", 1.0)]]
    assert padding([], lanes, [[("t::1", 0.3)]]) == []
    full = [f"x::{i}" for i in range(SELECTION_BUDGET)]
    assert padding(full, lanes + [[("b::1", 1.0)]]) == []


def test_padding_ignores_the_worker_cap() -> None:
    """A 7th worker's entry, left out by the worker cap, pads a selection the cap made short."""
    lane = [(f"w{i}::a", 1.0 - i / 100) for i in range(8)]
    selection = select_batch([lane], learned=[True])
    assert len(selection) == 6
    assert padding(selection, [lane]) == ["w6::a", "w7::a"]


def test_needs_first_moves_a_capabilitys_lane_behind_its_needs_after_its_head() -> None:
    lanes = [["w1", "w2", "w3"], ["a1", "a2"], ["b1", "b2"], ["x1", "x2"]]
    # lanes 1 and 2 are needs of lane 0; lane 3 is another capability without needs
    assert needs_first(lanes, [False, True, True, False]) == [
        ["w1"], ["a1", "a2"], ["b1", "b2"], [None, "w2", "w3"], ["x1", "x2"]]
    assert needs_first(lanes, []) == lanes
    # a need whose capability sits in an earlier batch stays where it is
    assert needs_first([["a1"], ["w1", "w2"]], [True, False]) == [["a1"], ["w1", "w2"]]


def test_select_batch_gives_a_needs_lane_the_last_slot_of_a_round() -> None:
    """Round 0 starts with the capability's own head; from round 1 on its needs' lanes go
    first, so a budget that ends inside a round is spent on the needs."""
    whole = [(f"w::{i}", 1.0) for i in range(8)]
    need_a = [(f"a::{i}", 1.0) for i in range(8)]
    need_b = [(f"b::{i}", 1.0) for i in range(8)]
    plain = select_batch([whole, need_a, need_b], learned=[True] * 3)
    assert plain[:3] == ["w::0", "a::0", "b::0"] and plain[3] == "w::1"
    ordered = select_batch([whole, need_a, need_b], learned=[True] * 3,
                           needs=[False, True, True])
    assert ordered[:5] == ["w::0", "a::0", "b::0", "a::1", "b::1"]
    assert ordered[5] == "w::1" and len(ordered) == SELECTION_BUDGET
    assert sorted(ordered) == sorted(plain)  # 12 = 4 rounds of 3 lanes: the same ids


def test_interleave_skips_a_passed_turn() -> None:
    assert round_robin([["a1", "a2"], [None, "b1"]], 12) == ["a1", "a2", "b1"]
