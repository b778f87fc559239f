"""The leave-one-set-out comparisons of `benchmarks/fit_fusion.py` and
`benchmarks/fit_answerability.py` (issue 18: do weights fitted on both catalogs generalise
better?): each fold scores one eval-catalog set, fitted on the other eval-catalog sets without
and with the held-out catalog, never on the set it scores."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))

np = pytest.importorskip("numpy")


def _samples(tag: str, count: int) -> list[Any]:
    return [([f"{tag}{i}"], np.zeros((1, 1)), {f"{tag}{i}": 3}) for i in range(count)]


def test_fusion_folds_fit_on_the_other_sets_then_add_the_heldout_catalog() -> None:
    import fit_fusion

    sets = {"dev": _samples("d", 4), "extra": _samples("e", 2), "extra2": _samples("x", 5)}
    heldout = _samples("h", 3)
    trained: list[set[str]] = []

    def fitter(train: list[Any]) -> tuple[Any, Any]:
        trained.append({names[0][0] for names, _, _ in train})
        return np.array([len(train)]), np.array([0.0])

    def scorer(fitted: tuple[Any, Any], data: list[Any]) -> tuple[float, float]:
        return 1.0 / float(fitted[0][0]), 0.5  # shares; the fold turns them into counts

    folds = fit_fusion.leave_one_out(sets, heldout, fitter, scorer)
    assert trained == [{"e", "x"}, {"e", "x", "h"}, {"d", "x"}, {"d", "x", "h"},
                       {"d", "e"}, {"d", "e", "h"}]
    assert [(name, size) for name, size, _, _ in folds] == [("dev", 4), ("extra", 2), ("extra2", 5)]
    dev = folds[0]
    assert dev[2] == pytest.approx((4 / 7, 2.0)) and dev[3] == pytest.approx((4 / 10, 2.0))


def test_fusion_leave_one_out_on_real_fits_is_reproducible() -> None:
    """Through `both_fits` and `head_quality`: the figures are capability counts within the
    set's size, and the same data gives the same folds."""
    import fit_fusion

    rng = np.random.default_rng(7)

    def sample(tag: str, i: int) -> Any:
        rows = rng.normal(size=(6, len(fit_fusion.FEATURES)))
        names = [f"{tag}{i}-{k}" for k in range(6)]
        return names, rows, {names[int(rng.integers(6))]: 3}

    sets = {name: [sample(name, i) for i in range(5)] for name in ("dev", "extra", "extra2")}
    heldout = [sample("h", i) for i in range(5)]
    scorer = lambda fitted, data: fit_fusion.head_quality(*fitted, fit_fusion.with_head(data))
    folds = fit_fusion.leave_one_out(sets, heldout, fit_fusion.both_fits, scorer)
    assert folds == fit_fusion.leave_one_out(sets, heldout, fit_fusion.both_fits, scorer)
    for _, size, alone, both in folds:
        for first, recall in (alone, both):
            assert 0 <= first <= size and 0 <= recall <= size
            assert first == pytest.approx(round(first))


def test_answerability_folds_keep_chatter_and_add_the_heldout_side(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import fit_answerability as fa

    rows = [{"set": name} for name in ("dev", "extra", "extra2", "chatter", "nearmiss",
                                       "heldout", "heldout-chatter")]
    trained: list[set[str]] = []

    def fake_fit(train: list[dict[str, Any]], family: str, l2: float, fp: float,
                 drop: tuple[str, ...] = ()) -> Any:
        trained.append({r["set"] for r in train})
        return len(train), 0.0

    def fake_evaluate(model: int, cut: float, part: list[dict[str, Any]], family: str,
                      drop: tuple[str, ...] = ()) -> Any:
        (name,) = {r["set"] for r in part}
        return {name: {"kept": model / 10, "positives": 10, "fp": 0.5, "no_match": 4}}

    monkeypatch.setattr(fa, "fit_family", fake_fit)
    monkeypatch.setattr(fa, "evaluate", fake_evaluate)
    monkeypatch.setattr(fa, "EVAL_SIDE", ("dev", "extra", "extra2", "chatter", "nearmiss"))
    folds = fa.leave_one_out(rows, "hybrid", 0.1, 0.1)
    eval_side = {"dev", "extra", "extra2", "chatter", "nearmiss"}
    held = {"heldout", "heldout-chatter"}
    assert trained == [eval_side - {"dev"}, (eval_side - {"dev"}) | held,
                       eval_side - {"extra"}, (eval_side - {"extra"}) | held,
                       eval_side - {"extra2"}, (eval_side - {"extra2"}) | held]
    assert folds[0] == ("dev", 10, 4, (4.0, 2.0), (6.0, 2.0))
