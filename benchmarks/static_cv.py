"""Choose the static lane's fitted parts by leave-one-set-out cross-validation (issue 19).

    .venv/bin/python benchmarks/fit_answerability.py record --mode static --out SIGNALS.json
    .venv/bin/python benchmarks/static_cv.py calibration --signals SIGNALS.json
    .venv/bin/python benchmarks/static_cv.py fusion [--eval-dir ../shared/eval]

Both parts fold over the eval catalog's tuning sets (eval `dev`, `extra`, `extra2`; never
`test`): each fold fits on the other two and scores the one left out; the figures are summed
over the three folds. The held-out catalog is the proof, never a choice: the fit on all three
sets scored on it, and (the reverse) a fit on it scored on the three.

`calibration`: the static family of the answerability decision (`answerability.CALIBRATION
["static"]`, fitted by `fit_answerability.fit_family`: an L2-regularised logistic regression,
its threshold the lowest answering no chatter and at most `--fp` of the no-match cases). The
seeded chatter and near-miss sentences are split in thirds by case number; a fold also leaves
one third of each out, so its no-match, near-miss and chatter answers are counted on sentences
the fit never saw. A setting's score: positives kept (served capabilities whose lane holds a
relevant function, answered), summed over the folds; its false positives: left-out no-match
cases, near misses and chatter answered. First the L2 sweep (`L2_GRID`) with every input; then
backward elimination at the best L2 — an input is dropped when the summed kept count does not
fall and no false-positive count rises (the most kept first); then the L2 sweep again over the
inputs left.

`fusion`: `static_lane.STATIC_WEIGHTS` (`fit_static_fusion.py`: pairwise logistic regression
over `fusion.features` with the static cosine as the dense one). A setting's score: the
capabilities' recall@12 of the lane summed over the folds (the lane's first place is the rule's,
`static_lane.learned_order`, so recall is what the weights move), first hit relevant beside it.
The same L2 sweep (`fit_fusion.fit`'s `l2`, 0.01 as shipped) and backward elimination (an input
dropped is a column of zeros, so its weight stays 0).

`pipeline` (fusion) and `calibration-pipeline` score `--setting L2[:INPUT,...]` through the
bench's pipeline instead, each tuning set with constants fitted on the other two
(`pipeline_folds`). Figures: docs/search-quality.md, "Static lane", eighth round — nothing there beat the
shipped constants on the summed leave-one-set-out score without losing on the held-out catalog.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

L2_GRID = (0.003, 0.01, 0.03, 0.1, 0.3, 1.0)
TUNING = ("dev", "extra", "extra2")
SEEDED = ("chatter", "nearmiss")
HELDOUT_SIDE = ("heldout", "heldout-chatter")

Score = tuple[float, ...]
"""A setting's cross-validated figures: the first is maximised, the rest are false-positive
counts (calibration) that must not rise, or side figures (fusion, negated so none rises)."""


def fold_of(row: dict[str, Any]) -> int:
    """Which third of the seeded sentences a row is in (by its case number)."""
    return int(str(row["case"]).rsplit("-", 1)[-1]) % len(TUNING)


def calibration_score(rows: list[dict[str, Any]], l2: float, drop: tuple[str, ...],
                      fp: float) -> Score:
    """(kept, no-match answered, near misses answered, chatter answered), each summed over the
    leave-one-set-out folds (`fold_of` thirds of the seeded sentences left out with each set)."""
    import fit_answerability as fa

    kept = answered = near = chatter = 0.0
    for index, name in enumerate(TUNING):
        def left_out(row: dict[str, Any]) -> bool:
            return row["set"] == name or (row["set"] in SEEDED and fold_of(row) == index)

        train = [r for r in rows if r["set"] in TUNING + SEEDED and not left_out(r)]
        test = [r for r in rows if r["set"] in TUNING + SEEDED and left_out(r)]
        model, cut = fa.fit_family(train, "static", l2, fp, drop)
        result = fa.evaluate(model, cut, test, "static", drop)
        kept += result[name]["kept"] * result[name]["positives"]
        answered += result[name]["fp"] * result[name]["no_match"]
        near += result["nearmiss"]["fp"] * result["nearmiss"]["no_match"]
        chatter += result["chatter"]["fp"] * result["chatter"]["no_match"]
    return round(kept), round(answered), round(near), round(chatter)


def calibration_transfer(rows: list[dict[str, Any]], l2: float, drop: tuple[str, ...],
                         fp: float) -> tuple[Score, Score, Any]:
    """(fitted on the eval catalog's sets → held-out (kept, no-match answered, chatter
    answered)), (fitted on the held-out catalog → the tuning sets (kept, no-match answered)
    summed, near misses answered) and the eval-catalog fit `(model, threshold)`."""
    import fit_answerability as fa

    eval_side = [r for r in rows if r["set"] in TUNING + SEEDED]
    held_side = [r for r in rows if r["set"] in HELDOUT_SIDE]
    model, cut = fa.fit_family(eval_side, "static", l2, fp, drop)
    held = fa.evaluate(model, cut, held_side, "static", drop)
    forward = (round(held["heldout"]["kept"] * held["heldout"]["positives"]),
               round(held["heldout"]["fp"] * held["heldout"]["no_match"]),
               round(held["heldout-chatter"]["fp"] * held["heldout-chatter"]["no_match"]))
    back, back_cut = fa.fit_family(held_side, "static", l2, fp, drop)
    ours = fa.evaluate(back, back_cut, eval_side, "static", drop)
    reverse = (round(sum(ours[n]["kept"] * ours[n]["positives"] for n in TUNING)),
               round(sum(ours[n]["fp"] * ours[n]["no_match"] for n in TUNING)),
               round(ours["nearmiss"]["fp"] * ours["nearmiss"]["no_match"]))
    return forward, reverse, (model, cut)


def no_worse(candidate: Score, incumbent: Score) -> bool:
    """The first figure does not fall and none of the others rises."""
    return candidate[0] >= incumbent[0] - 1e-9 and all(
        c <= i + 1e-9 for c, i in zip(candidate[1:], incumbent[1:]))


def best_l2(score: Callable[[float], Score], grid: Sequence[float] = L2_GRID
            ) -> tuple[float, dict[float, Score]]:
    """The L2 of `grid` with the highest first figure, ties to the lowest false-positive sum,
    then to the larger L2 (the simpler fit)."""
    table = {l2: score(l2) for l2 in grid}
    chosen = max(grid, key=lambda l2: (table[l2][0], -sum(table[l2][1:]), l2))
    return chosen, table


def eliminate(inputs: Sequence[str], score: Callable[[tuple[str, ...]], Score],
              log: Callable[[str], None] = print) -> tuple[tuple[str, ...], Score]:
    """Backward elimination: repeatedly drop the input whose removal keeps `no_worse` against
    the current setting with the highest first figure; stop when none does. Returns the dropped
    inputs and the final score."""
    dropped: tuple[str, ...] = ()
    current = score(dropped)
    log(f"  all inputs: {current}")
    while len(dropped) < len(inputs) - 1:
        trials = {name: score(dropped + (name,)) for name in inputs if name not in dropped}
        for name, result in trials.items():
            log(f"    without {name:14s} {result}")
        allowed = [name for name, result in trials.items() if no_worse(result, current)]
        if not allowed:
            break
        name = max(allowed, key=lambda n: (trials[n][0], -sum(trials[n][1:])))
        dropped, current = dropped + (name,), trials[name]
        log(f"  dropped {name}: {current}")
    return dropped, current


def calibration(args: argparse.Namespace) -> None:
    from iii_directory.search.answerability import FEATURE_NAMES

    rows = [r for r in json.loads(args.signals.read_text()) if r["mode"] == "static"]
    inputs = FEATURE_NAMES["static"]

    def show(label: str, l2: float, drop: tuple[str, ...]) -> None:
        loso = calibration_score(rows, l2, drop, args.fp)
        forward, reverse, (model, cut) = calibration_transfer(rows, l2, drop, args.fp)
        print(f"{label}: L2 {l2}, without {list(drop)}: leave-one-set-out kept / no-match / "
              f"near misses / chatter {loso}; eval -> held-out kept / no-match / chatter "
              f"{forward}; held-out -> tuning sets kept / no-match / near misses {reverse}")
        print("  weights (" + ", ".join(f"{w:.4f}" for w in model[:-1])
              + f"), bias {model[-1]:.4f}, threshold {cut:.4f}", flush=True)

    print("== static answerability family: L2 sweep, every input "
          "(kept / no-match / near misses / chatter, summed over the folds) ==")
    chosen, table = best_l2(lambda l2: calibration_score(rows, l2, (), args.fp))
    for l2, result in table.items():
        print(f"  L2 {l2:<6}: {result}")
    print(f"== backward elimination at L2 {chosen} ==")
    dropped, _ = eliminate(inputs, lambda drop: calibration_score(rows, chosen, drop, args.fp))
    final, table = best_l2(lambda l2: calibration_score(rows, l2, dropped, args.fp))
    print(f"== L2 sweep without {list(dropped)} ==")
    for l2, result in table.items():
        print(f"  L2 {l2:<6}: {result}")
    show("shipped setting", 0.1, ())
    show("chosen", final, dropped)


def fusion_score(sets: dict[str, list[Any]], l2: float, drop: Sequence[int]) -> Score:
    """(recall@12, first hit relevant), capabilities summed over the leave-one-set-out folds."""
    import fit_fusion

    masked = {name: mask(data, drop) for name, data in sets.items()}
    folds = fit_fusion.leave_one_out(masked, [], lambda train: fit_fusion.fit(train, l2),
                                     lambda weights, data: fit_fusion.quality(weights, data))
    recall = sum(alone[1] for _, _, alone, _ in folds)
    first = sum(alone[0] for _, _, alone, _ in folds)
    return round(recall, 3), -round(first, 3)


def mask(data: list[Any], drop: Sequence[int]) -> list[Any]:
    """The samples with the columns `drop` zeroed (those inputs left out of the fit)."""
    out = []
    for names, rows, grades in data:
        rows = rows.copy()
        rows[:, list(drop)] = 0.0
        out.append((names, rows, grades))
    return out


def fusion(args: argparse.Namespace) -> None:
    import fit_fusion
    from fit_static_fusion import static_sets

    from iii_directory.search.fusion import FEATURES

    sets, held = static_sets(args.eval_dir)

    def columns(drop: tuple[str, ...]) -> list[int]:
        return [FEATURES.index(name) for name in drop]

    def score(l2: float, drop: tuple[str, ...]) -> Score:
        return fusion_score(sets, l2, columns(drop))

    print("== static fusion: L2 sweep, every input (recall@12, −first; capabilities summed "
          "over the folds) ==")
    chosen, table = best_l2(lambda l2: score(l2, ()), (0.001, 0.003) + L2_GRID)
    for l2, result in table.items():
        print(f"  L2 {l2:<6}: {result}")
    print(f"== backward elimination at L2 {chosen} ==")
    dropped, _ = eliminate(FEATURES, lambda drop: (score(chosen, drop)[0],))
    final, table = best_l2(lambda l2: score(l2, dropped), (0.001, 0.003) + L2_GRID)
    print(f"== L2 sweep without {list(dropped)} ==")
    for l2, result in table.items():
        print(f"  L2 {l2:<6}: {result}")
    for label, l2, drop in (("shipped setting", fit_fusion.L2, ()), ("chosen", final, dropped)):
        everything = [s for data in sets.values() for s in mask(data, columns(drop))]
        weights = fit_fusion.fit(everything, l2)
        forward = fit_fusion.quality(weights, mask(held, columns(drop)))
        back = fit_fusion.fit(mask(held, columns(drop)), l2)
        reverse = {name: fit_fusion.quality(back, mask(data, columns(drop)))
                   for name, data in sets.items()}
        print(f"{label}: L2 {l2}, without {list(drop)}: leave-one-set-out {score(l2, drop)}; "
              f"eval -> held-out first / recall@12 {forward[0]:.3f} / {forward[1]:.3f}; "
              "held-out -> " + ", ".join(f"{n} {f:.3f} / {r:.3f}" for n, (f, r) in reverse.items()))
        print("  STATIC_WEIGHTS: tuple[float, ...] = ("
              + ", ".join(f"{w:.3f}" for w in weights) + ")", flush=True)


def pipeline_folds(eval_dir: Path, apply: Callable[[str | None], None]
                   ) -> dict[str, dict[str, float]]:
    """`--mode static` through the bench's pipeline (`bench.run_mode`) on each set of
    `static_variants.all_sets` after `apply(name)` (a tuning set) or `apply(None)` (the held-out
    catalog and the seeded chatter and near misses) has set the constants under test — fitted
    on the other two tuning sets, or on all three. Per set the bench's R@12, MRR@1 and no-match
    FP rate; the shipped constants are restored after."""
    import anyio

    from iii_directory import bench
    from iii_directory.search import answerability, static_lane
    from static_variants import all_sets

    weights, calibration = static_lane.STATIC_WEIGHTS, dict(answerability.CALIBRATION)
    out = {}
    try:
        for name, catalog, cases in all_sets(eval_dir):
            apply(name if name in TUNING else None)
            result, _, _ = anyio.run(bench.run_mode, "static", catalog, cases, 1, None)
            metrics = bench.score_cases(
                cases, {case: bench.top_ids(ids) for case, ids in result.items()}, set())
            out[name] = {"recall": metrics["recall_at_12"] or 0.0, "mrr": metrics["mrr_at_1"] or 0.0,
                         "fp": metrics["false_positive_rate"] or 0.0}
    finally:
        static_lane.STATIC_WEIGHTS = weights
        answerability.CALIBRATION.clear()
        answerability.CALIBRATION.update(calibration)
    return out


def show_pipeline(setting: str, result: dict[str, dict[str, float]]) -> None:
    summed = sum(result[name]["recall"] for name in TUNING)
    print(f"{setting:40s} leave-one-set-out R@12 summed {summed:.3f}  " + "  ".join(
        f"{name} {m['recall']:.3f}/{m['mrr']:.3f}/{m['fp']:.3f}" if name in TUNING + ("heldout",)
        else f"{name} FP {m['fp']:.3f}" for name, m in result.items()), flush=True)


def settings(args: argparse.Namespace, default: str) -> list[tuple[str, float, tuple[str, ...]]]:
    """`--setting L2[:INPUT,...]` as (text, L2, inputs left out)."""
    out = []
    for setting in args.setting or [default]:
        l2_text, _, names = setting.partition(":")
        out.append((setting, float(l2_text), tuple(name for name in names.split(",") if name)))
    return out


def pipeline(args: argparse.Namespace) -> None:
    """The fusion settings `--setting L2[:INPUT,...]` through the pipeline, each tuning set with
    `STATIC_WEIGHTS` fitted on the other two (`pipeline_folds`)."""
    import fit_fusion
    from fit_static_fusion import static_sets

    from iii_directory.search import static_lane
    from iii_directory.search.fusion import FEATURES

    sets, _ = static_sets(args.eval_dir)
    for setting, l2, drop in settings(args, str(fit_fusion.L2)):
        columns = [FEATURES.index(name) for name in drop]

        def apply(left_out: str | None) -> None:
            train = [s for name, data in sets.items() if name != left_out
                     for s in mask(data, columns)]
            static_lane.STATIC_WEIGHTS = tuple(
                round(float(w), 3) for w in fit_fusion.fit(train, l2))

        show_pipeline(setting, pipeline_folds(args.eval_dir, apply))


def calibration_pipeline(args: argparse.Namespace) -> None:
    """The calibration settings `--setting L2[:INPUT,...]` through the pipeline, each tuning
    set with the static family fitted on the other two and two thirds of the seeded sentences
    (as `calibration_score`), the rest with the fit on every eval-catalog set."""
    import fit_answerability as fa

    from iii_directory.search import answerability

    rows = [r for r in json.loads(args.signals.read_text()) if r["mode"] == "static"]
    for setting, l2, drop in settings(args, "0.1"):
        def apply(left_out: str | None) -> None:
            index = TUNING.index(left_out) if left_out else -1
            train = [r for r in rows if r["set"] in TUNING + SEEDED and r["set"] != left_out
                     and not (r["set"] in SEEDED and fold_of(r) == index)]
            model, cut = fa.fit_family(train, "static", l2, args.fp, drop)
            answerability.CALIBRATION["static"] = (
                tuple(round(float(w), 4) for w in model[:-1]), round(float(model[-1]), 4),
                round(cut, 4))

        show_pipeline(setting, pipeline_folds(args.eval_dir, apply))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("part", choices=("calibration", "fusion", "pipeline",
                                         "calibration-pipeline"))
    parser.add_argument("--setting", action="append",
                        help="pipeline parts: L2[:INPUT,...] — the L2 and the inputs left out")
    parser.add_argument("--signals", type=Path, default=Path("/tmp/answerability_signals.json"))
    parser.add_argument("--eval-dir", type=Path, default=Path("../shared/eval"))
    parser.add_argument("--fp", type=float, default=0.10)
    args = parser.parse_args()
    {"calibration": calibration, "fusion": fusion, "pipeline": pipeline,
     "calibration-pipeline": calibration_pipeline}[args.part](args)


if __name__ == "__main__":
    main()
