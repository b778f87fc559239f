"""The cross-validated choice of the static lane's fitted parts (issue 19,
`benchmarks/static_cv.py`): folds that never fit on what they score, inputs left out of a fit
(weight 0), and the L2 / backward-elimination choice."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))

np = pytest.importorskip("numpy")

import fit_answerability as fa  # noqa: E402
import fit_fusion  # noqa: E402
import static_cv  # noqa: E402


def _row(name: str, index: int, positive: bool, cosine: float) -> dict[str, Any]:
    signals = {"words": 4, "known_share": 1.0, "coverage": 0.5 + index % 3 / 10,
               "rare_matched": 1.0, "action": index % 2 == 0, "extra": cosine,
               "concepts": cosine / 2, "refused": ""}
    return {"set": name, "mode": "static", "case": f"{name}-{index}",
            "kind": "match" if positive else "no_match", "text": f"{name} {index}",
            "relevant": ["a::x"] if positive else [], "lane": ["a::x"],
            "signals": signals, "decision": positive}


def _rows() -> list[dict[str, Any]]:
    rows = []
    for name in ("dev", "extra", "extra2"):
        rows += [_row(name, i, True, 0.6 + i / 100) for i in range(6)]
        rows += [_row(name, 10 + i, False, 0.3 + i / 100) for i in range(2)]
    for name in ("chatter", "nearmiss"):
        rows += [_row(name, i, False, 0.2 + i / 100) for i in range(6)]
    return rows


def test_a_dropped_input_reads_zero_and_gets_no_weight() -> None:
    rows = _rows()
    signals = rows[0]["signals"]
    plain = fa.features(signals, "static")
    dropped = fa.features(signals, "static", ("coverage",))
    names = fa_names()
    assert dropped[names.index("coverage")] == 0.0 and plain[names.index("coverage")] > 0
    assert [v for n, v in zip(names, dropped) if n != "coverage"] == \
        [v for n, v in zip(names, plain) if n != "coverage"]
    model, _ = fa.fit_family(rows, "static", 0.1, 0.1, ("coverage", "static_cosine"))
    assert model[names.index("coverage")] == 0.0 and model[names.index("static_cosine")] == 0.0
    assert model[names.index("content")] == 0.0  # constant input: standardised to nothing
    assert model[names.index("concepts")] != 0.0


def fa_names() -> list[str]:
    from iii_directory.search.answerability import FEATURE_NAMES

    return list(FEATURE_NAMES["static"])


def test_calibration_folds_never_fit_on_the_set_or_the_seeded_third_they_score(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _rows()
    seen: list[tuple[set[str], set[str]]] = []

    def fake_fit(train: list[dict[str, Any]], family: str, l2: float, fp: float,
                 drop: tuple[str, ...] = ()) -> Any:
        seen.append(({r["case"] for r in train}, set()))
        return np.zeros(len(fa_names()) + 1), 0.0

    def fake_evaluate(model: Any, cut: float, part: list[dict[str, Any]], family: str,
                      drop: tuple[str, ...] = ()) -> Any:
        seen[-1][1].update(r["case"] for r in part)
        return {name: {"kept": 1.0, "positives": 6, "fp": 0.5, "no_match": 2}
                for name in {r["set"] for r in part}}

    monkeypatch.setattr(fa, "fit_family", fake_fit)
    monkeypatch.setattr(fa, "evaluate", fake_evaluate)
    assert static_cv.calibration_score(rows, 0.1, (), 0.1) == (18, 3, 3, 3)
    everything = {r["case"] for r in rows}
    for index, (name, (trained, scored)) in enumerate(zip(static_cv.TUNING, seen)):
        assert not trained & scored and trained | scored == everything
        assert {c for c in scored if not c.startswith(("chatter", "nearmiss"))} == \
            {r["case"] for r in rows if r["set"] == name}
        assert all(int(c.rsplit("-", 1)[1]) % 3 == index for c in scored
                   if c.startswith(("chatter", "nearmiss")))


def test_backward_elimination_drops_what_costs_nothing_and_stops() -> None:
    costs = {"a": 0, "b": 1, "c": 0, "d": 5}
    noise = {"c": 1}  # leaving c out answers one more no-match case

    def score(drop: tuple[str, ...]) -> static_cv.Score:
        return (10 - sum(costs[n] for n in drop), sum(noise.get(n, 0) for n in drop))

    dropped, final = static_cv.eliminate(list(costs), score, log=lambda _: None)
    assert dropped == ("a",) and final == (10, 0)


def test_the_l2_choice_ties_to_fewer_false_positives_then_the_larger_ridge() -> None:
    table = {0.01: (5, 2), 0.1: (5, 1), 1.0: (5, 1), 0.003: (4, 0)}
    chosen, seen = static_cv.best_l2(table.__getitem__, tuple(table))
    assert chosen == 1.0 and seen == table


def test_a_masked_fusion_input_keeps_weight_zero_and_the_samples_untouched() -> None:
    rng = np.random.default_rng(3)
    data = []
    for i in range(8):
        rows = rng.normal(size=(5, 4))
        names = [f"c{i}-{k}" for k in range(5)]
        data.append((names, rows, {names[int(np.argmax(rows[:, 0]))]: 3}))
    masked = static_cv.mask(data, [0])
    assert all((rows[:, 0] == 0).all() for _, rows, _ in masked)
    assert any((rows[:, 0] != 0).any() for _, rows, _ in data)
    weights = fit_fusion.fit(masked, 0.03)
    assert weights[0] == 0.0 and (weights[1:] != 0).any()
    assert fit_fusion.fit(data, 1.0)[0] < fit_fusion.fit(data, 0.001)[0]
