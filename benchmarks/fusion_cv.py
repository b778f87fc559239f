"""The learned fusion's L2 and feature set chosen by cross-validation (issue 18;
`benchmarks/fit_fusion.py --sweep` / `--eliminate` prints it).

Criterion, eval catalog only: leave one set out over dev, extra and extra2 — `WEIGHTS` and
`HEAD_WEIGHTS` fitted on the other two sets (`fit_fusion.fit_pairs`), the left-out set's lane
ranked by them with its first `fusion.HEAD` re-sorted as shipped (`fit_fusion.head_quality`) —
summed over the three folds in capabilities: relevant first, and recall@12. The held-out
catalog is the proof, never the choice: `transfer` fits on every eval-catalog set and scores the
held-out catalog, and fits on the held-out catalog and scores each eval-catalog set.

A feature set is a column mask over `fusion.HEAD_SCORED_FEATURES` (the lane uses its first
`len(SECOND_VIEWED_FEATURES)` entries): a masked column is zeroed in every training pair, so its
weight stays 0 in both fits. `eliminate` is greedy backward elimination: each round drops the
feature whose removal gives the highest summed left-out first place, while that is not below the
current set's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fit_fusion import Sample, fit_pairs, head_quality, pair_differences, with_head
from iii_directory.search.fusion import HEAD_SCORED_FEATURES, SECOND_VIEWED_FEATURES

LANE_COLUMNS = len(SECOND_VIEWED_FEATURES)


@dataclass(frozen=True)
class Scores:
    """Capabilities (counts): relevant first and recall@12 summed, lane with its head re-sorted."""
    first: float
    recall: float


@dataclass
class Prepared:
    """One set's samples with the head features (`with_head`) and its training pairs."""
    data: list[Sample]
    pairs: np.ndarray

    @classmethod
    def of(cls, samples: list[Sample]) -> "Prepared":
        headed = with_head(samples)
        return cls(headed, pair_differences(headed))


def fit_masked(parts: Sequence[Prepared], l2: float, mask: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """`WEIGHTS` and `HEAD_WEIGHTS` fitted on `parts` with the columns where `mask` is 0 zeroed."""
    pairs = np.vstack([part.pairs for part in parts]) * mask
    return fit_pairs(pairs[:, :LANE_COLUMNS], l2), fit_pairs(pairs, l2)


def score(fitted: tuple[np.ndarray, np.ndarray], part: Prepared) -> Scores:
    first, recall = head_quality(*fitted, part.data)
    return Scores(first * len(part.data), recall * len(part.data))


def leave_one_set_out(sets: dict[str, Prepared], l2: float, mask: np.ndarray) -> dict[str, Scores]:
    """Each set scored with the weights fitted on the others."""
    return {name: score(fit_masked([p for other, p in sets.items() if other != name], l2, mask),
                        part)
            for name, part in sets.items()}


def transfer(sets: dict[str, Prepared], heldout: Prepared, l2: float, mask: np.ndarray
             ) -> dict[str, Scores]:
    """`eval->heldout`: fitted on every eval-catalog set, scored on the held-out catalog;
    `heldout->NAME`: fitted on the held-out catalog, scored on that eval-catalog set."""
    out = {"eval->heldout": score(fit_masked(list(sets.values()), l2, mask), heldout)}
    back = fit_masked([heldout], l2, mask)
    out.update({f"heldout->{name}": score(back, part) for name, part in sets.items()})
    return out


def total(scores: dict[str, Scores]) -> Scores:
    return Scores(sum(s.first for s in scores.values()), sum(s.recall for s in scores.values()))


def eliminate(sets: dict[str, Prepared], l2: float, mask: np.ndarray | None = None,
              names: Sequence[str] = HEAD_SCORED_FEATURES) -> tuple[np.ndarray, list[str]]:
    """Greedy backward elimination (module docstring): the final mask and the features dropped,
    in order. Ties between candidates go to the higher summed recall, then the earlier name."""
    mask = np.ones(len(names)) if mask is None else mask.copy()
    current = total(leave_one_set_out(sets, l2, mask))
    dropped: list[str] = []
    while True:
        best: tuple[float, float, int] | None = None
        for column in np.flatnonzero(mask):
            trial = mask.copy()
            trial[column] = 0.0
            found = total(leave_one_set_out(sets, l2, trial))
            key = (found.first, found.recall, -int(column))
            if best is None or key > best:
                best = key
        if best is None or best[0] < current.first:
            return mask, dropped
        mask[-best[2]] = 0.0
        dropped.append(names[-best[2]])
        current = Scores(best[0], best[1])
        print(f"  drop {names[-best[2]]:15s} -> left-out first {best[0]:.0f}, "
              f"recall@12 {best[1]:.2f}", flush=True)


def describe(label: str, scores: dict[str, Scores], summed: bool = True) -> str:
    """`name first/recall@12` cells in capabilities, and their sum when `summed`."""
    cells = "  ".join(f"{name} {s.first:.0f}/{s.recall:.2f}" for name, s in scores.items())
    both = total(scores)
    return f"{label}: {cells}" + (f"  [sum {both.first:.0f}/{both.recall:.2f}]" if summed else "")


def sweep(sets: dict[str, list[Sample]], heldout: list[Sample], l2s: Sequence[float],
          eliminate_at: float | None) -> None:
    """Print, per L2, the leave-one-set-out folds and the transfer (first/recall@12 in
    capabilities); with `eliminate_at`, greedy backward elimination at that L2 and the same
    figures for the feature set it ends with."""
    prepared = {name: Prepared.of(data) for name, data in sets.items()}
    held = Prepared.of(heldout)
    full = np.ones(len(HEAD_SCORED_FEATURES))
    for l2 in l2s:
        print(f"L2 {l2:<6g} " + describe("left out", leave_one_set_out(prepared, l2, full)),
              flush=True)
        print(f"L2 {l2:<6g} " + describe("transfer", transfer(prepared, held, l2, full), False),
              flush=True)
    if eliminate_at is None:
        return
    print(f"backward elimination at L2 {eliminate_at:g}:", flush=True)
    mask, dropped = eliminate(prepared, eliminate_at)
    print("dropped: " + (", ".join(dropped) or "nothing"))
    print(describe("left out", leave_one_set_out(prepared, eliminate_at, mask)))
    print(describe("transfer", transfer(prepared, held, eliminate_at, mask), False))
