"""The answerability calibration's L2 chosen by cross-validation (issue 18;
`benchmarks/fit_answerability.py fit --sweep L2 ...` prints it).

Per mode family and L2: leave one set out over dev, extra and extra2 — the calibration fitted
on the other eval-catalog sets (calibration chatter and near misses always in the fit), its
threshold by `fit_answerability.threshold`'s rule on that training side — summed over the three
folds: served capabilities kept, and no-match cases answered (the choice: more kept at no more
answered). The proof, not the choice (`transfer`): fitted on every eval-catalog set and scored on
the held-out catalog (kept, no-match cases answered, held-out chatter answered), and fitted on
the held-out catalog and scored on each eval-catalog set.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

Row = dict[str, Any]
Fitter = Callable[[list[Row], str, float, float], tuple[Any, float]]
Evaluator = Callable[[Any, float, list[Row], str], dict[str, dict[str, float]]]


@dataclass(frozen=True)
class Counts:
    """Served capabilities kept and no-match cases answered, of `positives` and `no_match`."""
    kept: float
    answered: float
    positives: int
    no_match: int

    def __add__(self, other: "Counts") -> "Counts":
        return Counts(self.kept + other.kept, self.answered + other.answered,
                      self.positives + other.positives, self.no_match + other.no_match)


def counts(measured: dict[str, float]) -> Counts:
    """`fit_answerability.evaluate`'s shares of one set as counts (a set with no served
    capability or no no-match case counts 0 there)."""
    positives, no_match = int(measured["positives"]), int(measured["no_match"])
    return Counts(measured["kept"] * positives if positives else 0.0,
                  measured["fp"] * no_match if no_match else 0.0, positives, no_match)


def leave_one_set_out(rows: list[Row], family: str, l2: float, fp: float, fitter: Fitter,
                      evaluator: Evaluator, eval_side: Sequence[str],
                      left_out: Sequence[str] = ("dev", "extra", "extra2")) -> dict[str, Counts]:
    """Each set of `left_out` scored with the calibration fitted on the other `eval_side` sets."""
    out = {}
    for name in left_out:
        model, cut = fitter([r for r in rows if r["set"] in eval_side and r["set"] != name],
                            family, l2, fp)
        out[name] = counts(evaluator(model, cut, [r for r in rows if r["set"] == name],
                                     family)[name])
    return out


def transfer(rows: list[Row], family: str, l2: float, fp: float, fitter: Fitter,
             evaluator: Evaluator, eval_side: Sequence[str], heldout_side: Sequence[str],
             scored: Sequence[str] = ("dev", "extra", "extra2")) -> dict[str, Counts]:
    """`eval->NAME` for each held-out-side set, fitted on `eval_side`; `heldout->NAME` for each
    set of `scored`, fitted on `heldout_side`."""
    out = {}
    model, cut = fitter([r for r in rows if r["set"] in eval_side], family, l2, fp)
    measured = evaluator(model, cut, [r for r in rows if r["set"] in heldout_side], family)
    out.update({f"eval->{name}": counts(m) for name, m in measured.items()})
    back, back_cut = fitter([r for r in rows if r["set"] in heldout_side], family, l2, fp)
    measured = evaluator(back, back_cut, [r for r in rows if r["set"] in scored], family)
    out.update({f"heldout->{name}": counts(m) for name, m in measured.items()})
    return out


def describe(label: str, found: dict[str, Counts]) -> str:
    cells = "  ".join(f"{name} {c.kept:.0f}/{c.positives} ans {c.answered:.0f}/{c.no_match}"
                      for name, c in found.items())
    return f"{label}: {cells}"


def sweep(rows: list[Row], family: str, l2s: Sequence[float], fp: float, fitter: Fitter,
          evaluator: Evaluator, eval_side: Sequence[str], heldout_side: Sequence[str]) -> None:
    """Print, per L2, the leave-one-set-out folds with their sum and the transfer."""
    for l2 in l2s:
        folds = leave_one_set_out(rows, family, l2, fp, fitter, evaluator, eval_side)
        summed = sum(folds.values(), Counts(0.0, 0.0, 0, 0))
        print(f"  L2 {l2:<6g} " + describe("left out", folds)
              + f"  [sum kept {summed.kept:.0f}/{summed.positives}, answered "
                f"{summed.answered:.0f}/{summed.no_match}]", flush=True)
        print(f"  L2 {l2:<6g} " + describe("transfer", transfer(
            rows, family, l2, fp, fitter, evaluator, eval_side, heldout_side)), flush=True)
