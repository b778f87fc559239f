"""The cross-validated choice of the fusion's L2 and feature set (`benchmarks/fusion_cv.py`) and
of the answerability calibration's L2 (`benchmarks/answerability_cv.py`), issue 18: each fold
is fitted without the set it scores, a dropped feature keeps weight 0, and backward elimination
drops a feature only while the summed left-out first place does not fall."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))

np = pytest.importorskip("numpy")


def _sample(rng: Any, tag: str, i: int) -> Any:
    import fit_fusion

    rows = rng.normal(size=(6, len(fit_fusion.FEATURES)))
    names = [f"{tag}{i}-{k}" for k in range(6)]
    return names, rows, {names[int(rng.integers(6))]: 3}


def test_a_masked_feature_keeps_weight_zero_in_both_fits() -> None:
    import fusion_cv

    rng = np.random.default_rng(3)
    part = fusion_cv.Prepared.of([_sample(rng, "d", i) for i in range(8)])
    mask = np.ones(len(fusion_cv.HEAD_SCORED_FEATURES))
    mask[[0, 5, len(mask) - 1]] = 0.0
    weights, head_weights = fusion_cv.fit_masked([part], 0.01, mask)
    assert weights[0] == 0.0 and weights[5] == 0.0 and np.count_nonzero(weights) == len(weights) - 2
    assert head_weights[0] == head_weights[5] == head_weights[-1] == 0.0
    full = fusion_cv.fit_masked([part], 0.01, np.ones_like(mask))[0]
    assert full[0] != 0.0


def test_fusion_folds_never_fit_on_the_set_they_score(monkeypatch: pytest.MonkeyPatch) -> None:
    import fusion_cv

    rng = np.random.default_rng(5)
    sets = {name: fusion_cv.Prepared.of([_sample(rng, name, i) for i in range(4)])
            for name in ("dev", "extra", "extra2")}
    trained: list[set[int]] = []
    real = fusion_cv.fit_masked

    def recording(parts: Any, l2: float, mask: Any) -> Any:
        trained.append({id(p) for p in parts})
        return real(parts, l2, mask)

    monkeypatch.setattr(fusion_cv, "fit_masked", recording)
    folds = fusion_cv.leave_one_set_out(sets, 0.01, np.ones(len(fusion_cv.HEAD_SCORED_FEATURES)))
    assert trained == [{id(sets["extra"]), id(sets["extra2"])},
                       {id(sets["dev"]), id(sets["extra2"])},
                       {id(sets["dev"]), id(sets["extra"])}]
    for score in folds.values():
        assert 0 <= score.first <= 4 and score.first == round(score.first)
        assert 0 <= score.recall <= 4


def test_backward_elimination_drops_while_first_place_does_not_fall(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """a carries ten first places, dropping b gains one, c is neutral: b goes (gain), then c
    (tie), and a stays."""
    import fusion_cv

    def folds(sets: Any, l2: float, mask: Any) -> dict[str, Any]:
        return {"dev": fusion_cv.Scores(10 * mask[0] + (1 - mask[1]), 1.0)}

    monkeypatch.setattr(fusion_cv, "leave_one_set_out", folds)
    mask, dropped = fusion_cv.eliminate({}, 0.01, names=("a", "b", "c"))
    assert dropped == ["b", "c"] and list(mask) == [1.0, 0.0, 0.0]


def test_answerability_folds_and_transfer_fit_on_the_right_side() -> None:
    import answerability_cv as cv

    rows = [{"set": name} for name in ("dev", "extra", "extra2", "chatter", "nearmiss",
                                       "heldout", "heldout-chatter")]
    trained: list[set[str]] = []

    def fitter(train: list[Any], family: str, l2: float, fp: float) -> Any:
        trained.append({r["set"] for r in train})
        return l2, 0.0

    def evaluator(model: Any, cut: float, scored: list[Any], family: str) -> Any:
        return {r["set"]: {"kept": 0.5, "fp": 0.25, "positives": 10, "no_match": 4} for r in scored}

    eval_side = ("dev", "extra", "extra2", "chatter", "nearmiss")
    folds = cv.leave_one_set_out(rows, "hybrid", 0.1, 0.1, fitter, evaluator, eval_side)
    assert trained == [{"extra", "extra2", "chatter", "nearmiss"},
                       {"dev", "extra2", "chatter", "nearmiss"},
                       {"dev", "extra", "chatter", "nearmiss"}]
    assert folds["dev"] == cv.Counts(5.0, 1.0, 10, 4)
    trained.clear()
    moved = cv.transfer(rows, "hybrid", 0.1, 0.1, fitter, evaluator, eval_side,
                        ("heldout", "heldout-chatter"))
    assert trained == [set(eval_side), {"heldout", "heldout-chatter"}]
    assert sorted(moved) == ["eval->heldout", "eval->heldout-chatter", "heldout->dev",
                             "heldout->extra", "heldout->extra2"]
