"""Judge a static table with the pipeline's static constants refitted on its cosines (issue 19).

    .venv/bin/python benchmarks/static_table_refit.py TABLE.bin [--fp 0.10] [--eval-dir ../shared/eval]

A table built by another recipe (`static_table_variants.py`, `static_table_learned.py`) puts
cosines on another scale than the shipped table, on which the static answerability family
(`answerability.CALIBRATION["static"]`), `static_lane.STATIC_WEIGHTS` and the cosine gates were
set. With TABLE in place of the packaged one (`_rank.static._default`), this script:

1. records the static-mode decisions (`fit_answerability.py record --mode static`) and fits the
   static family both ways — on the eval catalog's sets (dev, extra, extra2, chatter, near
   misses) and on the held-out catalog (its cases and chatter) — as `fit_answerability.py fit`;
2. fits `STATIC_WEIGHTS` both ways (`fit_static_fusion.py`: all eval-catalog sets; held-out);
3. runs `--mode static` through the bench's pipeline (`static_variants.all_sets`: dev, extra,
   extra2, the held-out catalog, chatter, held-out chatter, near misses; never `test`) with the
   tree's constants, the eval-catalog refit (and `ALONE_COSINE` / the expansion's cosine swept
   around it), and the held-out refit (the reverse direction).

Prints one line per setting: R@12 / MRR@1 / FP per case set, answered / asked for the rest.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fit_answerability  # noqa: E402
import fit_static_fusion  # noqa: E402
from static_failures import ROOT  # noqa: E402
from static_variants import all_sets, pipeline_row as pipeline  # noqa: E402

from _rank import static  # noqa: E402
from iii_directory.search import answerability, static_expansion, static_lane  # noqa: E402


def calibrations(eval_dir: Path, out: Path, fp: float) -> tuple[Any, Any]:
    """The static family fitted on the eval catalog's sets and on the held-out catalog, its
    threshold answering at most `fp` of the training side's no-match cases."""
    args = argparse.Namespace(eval_dir=eval_dir, out=out, mode=["static"], set=None)
    with contextlib.redirect_stdout(io.StringIO()):
        fit_answerability.record(args)
    rows = [r for r in json.loads(out.read_text()) if r["mode"] == "static"]
    eval_side = [r for r in rows if r["set"] in (*fit_answerability.EVAL_SIDE, "nearmiss")]
    held_side = [r for r in rows if r["set"] in fit_answerability.HELDOUT_SIDE]
    fitted = []
    for side in (eval_side, held_side):
        model, cut = fit_answerability.fit_family(side, "static", 0.1, fp)
        fitted.append((tuple(round(float(w), 4) for w in model[:-1]), round(float(model[-1]), 4),
                       round(cut, 4)))
    return fitted[0], fitted[1]


def fusion_weights(eval_dir: Path) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """`STATIC_WEIGHTS` fitted on the eval catalog's sets and on the held-out catalog."""
    buffer = io.StringIO()
    argv, sys.argv = sys.argv, [sys.argv[0], "--eval-dir", str(eval_dir)]
    try:
        with contextlib.redirect_stdout(buffer):
            fit_static_fusion.main()
    finally:
        sys.argv = argv
    text = buffer.getvalue()
    pick = lambda label: tuple(float(w) for w in re.search(label + r".*?\(([^)]*)\)", text)[1].split(","))  # noqa: E731
    return pick("STATIC_WEIGHTS"), pick("held-out fit:")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("table", type=Path)
    parser.add_argument("--eval-dir", type=Path, default=ROOT.parent / "shared" / "eval")
    parser.add_argument("--fp", type=float, default=0.10,
                        help="no-match false-positive budget of the family's threshold (as --fp-lexical)")
    parser.add_argument("--signals", type=Path, default=Path("/tmp/static_table_refit_signals.json"))
    args = parser.parse_args()
    static._default = static.StaticEncoder(static.StaticTable(args.table.read_bytes(),
                                                              source=str(args.table)))
    sets = all_sets(args.eval_dir)
    print(f"tree constants: {pipeline(sets)}", flush=True)
    ours, theirs = calibrations(args.eval_dir, args.signals, args.fp)
    weights, held_weights = fusion_weights(args.eval_dir)
    print(f"static family, eval-catalog fit: {ours}\n  held-out fit: {theirs}")
    print(f"STATIC_WEIGHTS, eval-catalog fit: {weights}\n  held-out fit: {held_weights}", flush=True)
    shipped = (answerability.CALIBRATION["static"], static_lane.STATIC_WEIGHTS,
               static_lane.ALONE_COSINE, static_expansion.NEIGHBOUR_COSINE)
    settings = [("eval-catalog refit", ours, weights, shipped[2], shipped[3])]
    settings += [(f"eval-catalog refit, alone {a}", ours, weights, a, shipped[3]) for a in (0.50, 0.65)]
    settings += [(f"eval-catalog refit, expansion {n}", ours, weights, shipped[2], n) for n in (0.60, 0.80)]
    settings += [("held-out refit", theirs, held_weights, shipped[2], shipped[3])]
    try:
        for label, calibration, fusion, alone, neighbour in settings:
            answerability.CALIBRATION["static"] = calibration
            static_lane.STATIC_WEIGHTS = fusion
            static_lane.ALONE_COSINE = alone
            static_expansion.NEIGHBOUR_COSINE = neighbour
            print(f"{label}: {pipeline(sets)}", flush=True)
    finally:
        (answerability.CALIBRATION["static"], static_lane.STATIC_WEIGHTS,
         static_lane.ALONE_COSINE, static_expansion.NEIGHBOUR_COSINE) = shipped


if __name__ == "__main__":
    sys.exit(main())
