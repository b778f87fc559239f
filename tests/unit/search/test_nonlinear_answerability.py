"""The measurement of nonlinear answerability decisions (`benchmarks/nonlinear_answerability.py`,
issue 18): its boosted trees, pairwise products, operating point and frontier."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("numpy")  # the measurement script is numpy code; armv7 hosts have none


def measurement() -> ModuleType:
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
    import nonlinear_answerability

    return nonlinear_answerability


def band_data(copies: int) -> tuple:
    """y = 1 for the middle value of the first input only: no score monotone in it separates."""
    import numpy as np

    points = [(0.0, 0.0, 0.0), (0.5, 1.0, 1.0), (1.0, 0.0, 0.0), (0.5, 0.0, 1.0)]
    rows = np.array([point for point in points for _ in range(copies)])
    return rows[:, :2], rows[:, 2], np.ones(len(rows))


def test_boosted_stumps_learn_what_no_linear_score_can() -> None:
    measured = measurement()
    x, y, weight = band_data(40)
    trees = measured.fit_stumps(x, y, weight, depth=1, rounds=30)(x)
    assert trees[y == 1].min() > trees[y == 0].max()
    linear = measured.fit_linear(x, y, weight)(x)
    assert linear[y == 1].min() <= linear[y == 0].max()


def test_a_leaf_never_holds_fewer_rows_than_the_minimum() -> None:
    measured = measurement()
    x, y, weight = band_data(10)  # 40 rows: no split leaves 30 on both sides
    scores = measured.fit_stumps(x, y, weight, depth=2, rounds=10, min_leaf=30.0)(x)
    assert len(set(scores.round(9))) == 1


def test_pairwise_products_follow_the_standardised_inputs() -> None:
    import numpy as np

    measured = measurement()
    z = np.array([[1.0, 2.0], [3.0, -1.0]])
    assert measured.pair_expansion(z).tolist() == [[1.0, 2.0, 1.0, 2.0, 4.0],
                                                   [3.0, -1.0, 9.0, -3.0, 1.0]]


def row(case: str, kind: str, set_name: str = "s") -> dict:
    return {"set": set_name, "case": case, "kind": kind, "lane": ["x"],
            "relevant": ["x"] if kind == "match" else []}


def test_the_operating_point_answers_no_chatter_and_at_most_its_share_of_cases() -> None:
    measured = measurement()
    rows = [row("n1", "no_match"), row("n2", "no_match"), row("n3", "no_match"),
            row("n4", "no_match"), row("c1", "no_match", "chatter"), row("p1", "match")]
    values = [3.0, 1.0, 0.5, -math.inf, 0.0, 2.0]
    # a quarter of 4 cases: one may be answered (n1); n2 and the chatter sentence may not
    assert measured.operating_cut(values, rows, 0.25) == pytest.approx(1.0 + 1e-6)
    assert measured.operating_cut(values, rows, 0.0) == pytest.approx(3.0 + 1e-6)


def test_the_frontier_counts_kept_positives_at_each_false_positive_level() -> None:
    measured = measurement()
    rows = [row("p1", "match"), row("p2", "match"), row("p3", "match"),
            *(row(f"n{i}", "no_match") for i in range(10))]
    values = [3.0, 1.0, -math.inf, 2.0, 0.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0, -9.0]
    positives, negatives = measured.target_split(values, rows)
    assert sorted(negatives, reverse=True)[:2] == [2.0, 0.0]
    # FP .05 (0 of 10): above 2.0; .10 and .15 (1 of 10): above 0.0; .20 and up: above -2.0;
    # the undecided positive (−inf) is never kept
    assert measured.frontier(positives, negatives) == pytest.approx(
        [1 / 3, 2 / 3, 2 / 3, 2 / 3, 2 / 3, 2 / 3])
