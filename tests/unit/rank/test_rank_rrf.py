"""Weighted reciprocal-rank fusion and its tie order (search.md §5.4)."""

from __future__ import annotations

from types import ModuleType

import pytest


def test_two_list_fusion(impl: ModuleType) -> None:
    fused = impl.rrf([["x", "y", "z"], ["z", "x"]])
    assert [key for key, _ in fused] == ["x", "z", "y"]
    scores = dict(fused)
    assert scores["x"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["z"] == pytest.approx(1 / 63 + 1 / 61)
    assert scores["y"] == pytest.approx(1 / 62)


def test_ties_break_on_first_list_rank(impl: ModuleType) -> None:
    assert [k for k, _ in impl.rrf([["p", "q"], ["q", "p"]])] == ["p", "q"]
    assert [k for k, _ in impl.rrf([["q", "p"], ["p", "q"]])] == ["q", "p"]
    # missing from the first list counts as rank infinity
    assert [k for k, _ in impl.rrf([["a"], ["b"]])] == ["a", "b"]
    assert [k for k, _ in impl.rrf([["b"], ["a"]])] == ["b", "a"]


def test_ties_fall_through_to_later_lists(impl: ModuleType) -> None:
    # b and c tie on score and are both missing from list 0; list 1 decides
    fused = impl.rrf([["a"], ["b", "c"], ["c", "b"]])
    assert [k for k, _ in fused] == ["b", "c", "a"]
    assert fused[0][1] == fused[1][1]


def test_first_occurrence_counts(impl: ModuleType) -> None:
    fused = dict(impl.rrf([["x", "y", "x", "x"]]))
    assert fused == {"x": pytest.approx(1 / 61), "y": pytest.approx(1 / 62)}


def test_weights_and_k(impl: ModuleType) -> None:
    fused = impl.rrf([["a"], ["b"]], weights=[1.0, 0.0])
    assert fused == [("a", pytest.approx(1 / 61)), ("b", 0.0)]
    fused = impl.rrf([["a", "b"], ["b"]], weights=[1, 2.5], k=0)
    assert fused == [("b", pytest.approx(1 / 2 + 2.5)), ("a", pytest.approx(1.0))]


def test_keys_only_need_to_be_hashable(impl: ModuleType) -> None:
    fused = impl.rrf([[1, "one", (2, 3)], [(2, 3), None]])
    assert [k for k, _ in fused] == [(2, 3), 1, "one", None]


def test_empty_inputs(impl: ModuleType) -> None:
    assert impl.rrf([]) == []
    assert impl.rrf([[], []]) == []
    assert impl.rrf([[], ["a"]]) == [("a", pytest.approx(1 / 61))]


@pytest.mark.parametrize(
    ("args", "kwargs", "error"),
    [
        (("ab",), {}, TypeError),
        ((None,), {}, TypeError),
        ((["ab"],), {}, TypeError),
        (([[["unhashable"]]],), {}, TypeError),
        (([["a"], ["b"]],), {"weights": [1.0]}, ValueError),
        (([["a"]],), {"weights": [float("nan")]}, ValueError),
        (([["a"]],), {"weights": [-1.0]}, ValueError),
        (([["a"]],), {"weights": ["1"]}, TypeError),
        (([["a"]],), {"k": -1}, ValueError),
        (([["a"]],), {"k": float("nan")}, ValueError),
        (([["a"]],), {"k": None}, TypeError),
    ],
)
def test_bad_arguments(impl: ModuleType, args: tuple[object, ...], kwargs: dict[str, object], error: type) -> None:
    with pytest.raises(error):
        impl.rrf(*args, **kwargs)
