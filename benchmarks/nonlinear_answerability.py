"""Nonlinear models of the answerability decision, measured against the linear one (issue 18):
does a model that is not linear in the recorded signals move the kept / false-positive frontier?

    .venv/bin/python benchmarks/fit_answerability.py record --out /tmp/signals.json
    .venv/bin/python benchmarks/nonlinear_answerability.py --signals /tmp/signals.json
    .venv/bin/python benchmarks/nonlinear_answerability.py --record-probe /tmp/probe.json
    .venv/bin/python benchmarks/nonlinear_answerability.py --signals /tmp/signals.json \
        --probe /tmp/probe.json

Every model scores the same recorded capabilities (`fit_answerability.py record`) with the same
labels, training rows and weights as `fit_answerability.fit_family` (chatter weighed as one
no-match set), per mode family, fitted on the eval catalog's sets (dev, extra, extra2, chatter,
near misses) and scored on the held-out catalog, and the reverse (fitted on the held-out catalog
and its chatter, scored on dev + extra + extra2). Models, over the family's inputs
`answerability.features` (`x`, standardised on the training rows to `z`):

- `linear`: the shipped L2 logistic regression, `w · z + b` (`fit_answerability.fit_logistic`).
- `pairs(λ)`: logistic regression over `z`, every product `z_i · z_j` (i ≤ j) and a bias, L2 λ.
- `stumps(depth, rounds[, leafN])`: gradient-boosted trees of depth 1 (stumps) or 2 on the
  logistic loss, Newton leaves `−Σg / (Σh + 1)` (g, h: the loss's weighted gradient and
  Hessian), shrinkage `SHRINK`, split points at the training deciles, at least `MIN_LEAF` (or N)
  weighted training rows in every leaf (so it cannot carve out single cases).

`+gates` (hybrid): the lane gates (`answerability.supported`: dense ranking admitted, lexical
lane corroborated) become two 0/1 inputs instead of a hard condition, so a gate-refused
capability that meets the evidence floor reaches the score. `+gates+floor` (every family): the
evidence floor is a 0/1 input as well, so only the hard refusals stay in front of the model.

`--record-probe OUT` records the property tests' generators with their seeds
(tests/unit/search/unrelated_requests.py, 1,000 random-letter strings and 1,000 cooking /
weather sentences) over the eval, example and held-out catalogs, in every mode, through
`fit_answerability.record_cases`; `--probe OUT` then prints how many of each set every
eval-fitted model answers at its operating point (the property tests need 0 over eval and
example).

Printed per family and direction: the *frontier* — the best kept share of served capabilities
(label 1: the lane holds a relevant function; undecided rows count as no) at each no-match
case FP level in `FP_LEVELS`, over every threshold of the model's score — and the operating
point the shipped rule picks on the training side (`fit_answerability.threshold`: no chatter
sentence and at most a tenth of the no-match cases answered), as kept / FP on the target.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

import fit_answerability as fa  # noqa: E402

FP_LEVELS = (0.05, 0.10, 0.15, 0.20, 0.25, 0.30)
MIN_LEAF = 30.0
SHRINK = 0.1
Model = Callable[[Any], Any]


def decided(signals: dict[str, Any] | None, gates: int) -> bool:
    """The model decides: no hard refusal, and with `gates` 0 the evidence floor met and the
    hybrid lane gates passed; 1: the floor met (the gates are inputs); 2: neither (both are
    inputs)."""
    from iii_directory.search.answerability import Signals, evidence_floor, supported

    if signals is None or signals["refused"]:
        return False
    found = Signals(**signals)
    return (gates >= 2 or evidence_floor(found)) and (gates >= 1 or supported(found))


def inputs(signals: dict[str, Any], family: str, gates: int) -> list[float]:
    from iii_directory.search.answerability import Signals, evidence_floor

    values = fa.features(signals, family)
    if gates and family == "hybrid":
        values += [1.0 if signals.get("admitted") else 0.0,
                   1.0 if signals.get("corroborated") else 0.0]
    if gates >= 2:
        values.append(1.0 if evidence_floor(Signals(**signals)) else 0.0)
    return values


def standardiser(x: Any) -> Callable[[Any], Any]:
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-9
    return lambda v: (v - mean) / scale


def pair_expansion(z: Any) -> Any:
    d = z.shape[1]
    products = [z[:, i] * z[:, j] for i in range(d) for j in range(i, d)]
    return np.hstack([z, np.array(products).T])


def fit_linear(x: Any, y: Any, weight: Any, l2: float = 0.1) -> Model:
    model = fa.fit_logistic(x, y, l2, weight)
    return lambda v: v @ model[:-1] + model[-1]


def fit_pairs(x: Any, y: Any, weight: Any, l2: float) -> Model:
    scale = standardiser(x)
    expanded = pair_expansion(scale(x))
    model = fa.fit_logistic(expanded, y, l2, weight)
    return lambda v: pair_expansion(scale(v)) @ model[:-1] + model[-1]


def _best_split(x: Any, g: Any, h: Any, w: Any, rows: Any, cuts: list[Any],
                min_leaf: float) -> tuple[float, int, float] | None:
    """The split of `rows` with the largest Newton gain whose both sides weigh ≥ min_leaf."""
    G, H = g[rows].sum(), h[rows].sum()
    base = G * G / (H + 1.0)
    best: tuple[float, int, float] | None = None
    for j, points in enumerate(cuts):
        column = x[rows, j]
        for point in points:
            left = column <= point
            wl = w[rows][left].sum()
            if wl < min_leaf or w[rows].sum() - wl < min_leaf:
                continue
            gl, hl = g[rows][left].sum(), h[rows][left].sum()
            gain = gl * gl / (hl + 1.0) + (G - gl) ** 2 / (H - hl + 1.0) - base
            if best is None or gain > best[0]:
                best = (gain, j, float(point))
    return best


def _tree(x: Any, g: Any, h: Any, w: Any, rows: Any, cuts: list[Any], depth: int,
          min_leaf: float) -> Any:
    """A tree as nested tuples: ("leaf", value) or ("split", j, point, left, right)."""
    split = _best_split(x, g, h, w, rows, cuts, min_leaf) if depth > 0 else None
    if split is None or split[0] <= 1e-9:
        return ("leaf", float(-g[rows].sum() / (h[rows].sum() + 1.0)))
    _, j, point = split
    left = rows[x[rows, j] <= point]
    right = rows[x[rows, j] > point]
    return ("split", j, point, _tree(x, g, h, w, left, cuts, depth - 1, min_leaf),
            _tree(x, g, h, w, right, cuts, depth - 1, min_leaf))


def _predict(tree: Any, v: Any) -> Any:
    if tree[0] == "leaf":
        return np.full(len(v), tree[1])
    _, j, point, left, right = tree
    return np.where(v[:, j] <= point, _predict(left, v), _predict(right, v))


def fit_stumps(x: Any, y: Any, weight: Any, depth: int, rounds: int,
               min_leaf: float = MIN_LEAF) -> Model:
    cuts = [np.unique(np.quantile(x[:, j], np.linspace(0.1, 0.9, 9))) for j in range(x.shape[1])]
    prior = float(np.clip((y * weight).sum() / weight.sum(), 1e-3, 1 - 1e-3))
    start = math.log(prior / (1 - prior))
    f = np.full(len(y), start)
    trees = []
    rows = np.arange(len(y))
    for _ in range(rounds):
        p = 1.0 / (1.0 + np.exp(-f))
        g, h = (p - y) * weight, p * (1 - p) * weight
        tree = _tree(x, g, h, weight, rows, cuts, depth, min_leaf)
        trees.append(tree)
        f += SHRINK * _predict(tree, x)
    return lambda v: start + SHRINK * sum(_predict(t, v) for t in trees)


def training(rows: list[dict[str, Any]], family: str, gates: int) -> tuple[Any, Any, Any]:
    train = [r for r in rows if decided(r["signals"], gates) and fa.label(r) is not None]
    x = np.array([inputs(r["signals"], family, gates) for r in train])
    y = np.array([fa.label(r) for r in train], dtype=float)
    cases = sum(1 for r in train if "chatter" not in r["set"])
    chatter = sum(1 for r in train if "chatter" in r["set"]) or 1
    weight = np.array([cases / chatter / 4 if "chatter" in r["set"] else 1.0 for r in train])
    return x, y, weight


def row_scores(model: Model, rows: list[dict[str, Any]], family: str, gates: int) -> list[float]:
    """The model's score of each row, −inf where it does not decide."""
    out = [-math.inf] * len(rows)
    index = [i for i, r in enumerate(rows) if decided(r["signals"], gates)]
    if index:
        values = model(np.array([inputs(rows[i]["signals"], family, gates) for i in index]))
        for i, v in zip(index, values):
            out[i] = float(v)
    return out


def operating_cut(values: list[float], rows: list[dict[str, Any]], fp: float) -> float:
    """`fit_answerability.threshold` over precomputed scores."""
    total = len({(r["set"], r["case"]) for r in rows
                 if r["kind"] == "no_match" and "chatter" not in r["set"]}) or 1
    chatter_max, cases = -1e9, defaultdict(lambda: -1e9)
    for v, r in zip(values, rows):
        if r["kind"] != "no_match" or v == -math.inf:
            continue
        if "chatter" in r["set"]:
            chatter_max = max(chatter_max, v)
        else:
            cases[(r["set"], r["case"])] = max(cases[(r["set"], r["case"])], v)
    ordered = sorted(cases.values(), reverse=True)
    allowed = int(math.floor(fp * total + 1e-9))
    case_floor = ordered[allowed] if allowed < len(ordered) else -1e9
    return max(chatter_max, case_floor) + 1e-6


def target_split(values: list[float],
                 rows: list[dict[str, Any]]) -> tuple[list[float], list[float]]:
    """Scores of the target's positives, and each no-match case's highest score."""
    positives, cases = [], {}
    for v, r in zip(values, rows):
        if r["kind"] == "no_match" and "chatter" not in r["set"]:
            key = (r["set"], r["case"])
            cases[key] = max(cases.get(key, -math.inf), v)
        elif fa.label(r) == 1:
            positives.append(v)
    return positives, list(cases.values())


def frontier(positives: list[float], negatives: list[float]) -> list[float]:
    pos, neg = np.array(positives), np.sort(np.array(negatives))[::-1]
    out = []
    for level in FP_LEVELS:
        allowed = int(math.floor(level * len(neg) + 1e-9))
        cut = neg[allowed] if allowed < len(neg) else -math.inf
        out.append(float((pos > cut).mean()))
    return out


def at_cut(positives: list[float], negatives: list[float], cut: float) -> tuple[float, float]:
    return (float(np.mean([v >= cut for v in positives])),
            float(np.mean([v >= cut for v in negatives])))


MODELS: dict[str, tuple[int, Callable[[Any, Any, Any], Model]]] = {
    "linear": (0, fit_linear),
    "pairs(1.0)": (0, lambda x, y, w: fit_pairs(x, y, w, 1.0)),
    "pairs(0.3)": (0, lambda x, y, w: fit_pairs(x, y, w, 0.3)),
    "pairs(0.1)": (0, lambda x, y, w: fit_pairs(x, y, w, 0.1)),
    "stumps(1,50)": (0, lambda x, y, w: fit_stumps(x, y, w, 1, 50)),
    "stumps(2,50)": (0, lambda x, y, w: fit_stumps(x, y, w, 2, 50)),
    "stumps(2,100)": (0, lambda x, y, w: fit_stumps(x, y, w, 2, 100)),
    "stumps(1,20)": (0, lambda x, y, w: fit_stumps(x, y, w, 1, 20)),
    "stumps(2,20)": (0, lambda x, y, w: fit_stumps(x, y, w, 2, 20)),
    "stumps(2,50,leaf60)": (0, lambda x, y, w: fit_stumps(x, y, w, 2, 50, 60.0)),
    "pairs(3.0)": (0, lambda x, y, w: fit_pairs(x, y, w, 3.0)),
    "linear+gates": (1, fit_linear),
    "pairs(0.3)+gates": (1, lambda x, y, w: fit_pairs(x, y, w, 0.3)),
    "stumps(1,50)+gates": (1, lambda x, y, w: fit_stumps(x, y, w, 1, 50)),
    "stumps(2,50)+gates": (1, lambda x, y, w: fit_stumps(x, y, w, 2, 50)),
    "linear+gates+floor": (2, fit_linear),
    "pairs(0.3)+gates+floor": (2, lambda x, y, w: fit_pairs(x, y, w, 0.3)),
    "stumps(1,50)+gates+floor": (2, lambda x, y, w: fit_stumps(x, y, w, 1, 50)),
    "stumps(2,50)+gates+floor": (2, lambda x, y, w: fit_stumps(x, y, w, 2, 50)),
}


def probe(rows: list[dict[str, Any]], extra: list[dict[str, Any]], modes: Sequence[str],
          names: Sequence[str], fp: float) -> None:
    """Each model fitted on the eval catalog's sets at its operating point: how many rows of
    each set of `extra` (recorded no-match requests, e.g. the property tests' generators) it
    answers, against the decision as run."""
    for mode in modes:
        side = [r for r in rows if r["mode"] == mode and r["set"] in fa.EVAL_SIDE]
        part = [r for r in extra if r["mode"] == mode]
        names_of_sets = sorted({r["set"] for r in part})
        print(f"\n== {mode}: answered of each probe set, " + ", ".join(names_of_sets) + " ==")
        print(f"  {'as run':26s} " + " ".join(
            f"{sum(r['decision'] for r in part if r['set'] == n):4d}" for n in names_of_sets))
        for name in names:
            gates, fitter = MODELS[name]
            if gates == 1 and mode != "hybrid":
                continue
            model = fitter(*training(side, mode, gates))
            cut = operating_cut(row_scores(model, side, mode, gates), side, fp)
            values = row_scores(model, part, mode, gates)
            print(f"  {name:26s} " + " ".join(
                f"{sum(v >= cut for v, r in zip(values, part) if r['set'] == n):4d}"
                for n in names_of_sets), flush=True)


def measure(rows: list[dict[str, Any]], modes: Sequence[str], names: Sequence[str],
            fp: float) -> None:
    levels = "/".join(f"{v:.2f}" for v in FP_LEVELS)
    for mode in modes:
        part = [r for r in rows if r["mode"] == mode]
        sides = {"eval": [r for r in part if r["set"] in fa.EVAL_SIDE],
                 "held": [r for r in part if r["set"] in fa.HELDOUT_SIDE]}
        targets = {"eval": [r for r in sides["held"] if r["set"] == "heldout"],
                   "held": [r for r in sides["eval"] if r["set"] in ("dev", "extra", "extra2")]}
        print(f"\n== {mode}: kept at no-match FP {levels}; operating point kept / FP ==")
        for name in names:
            gates, fitter = MODELS[name]
            if gates == 1 and mode != "hybrid":
                continue
            cells = []
            for source, label in (("eval", "eval→held-out"), ("held", "held-out→dev+x+x2")):
                model = fitter(*training(sides[source], mode, gates))
                cut = operating_cut(row_scores(model, sides[source], mode, gates),
                                    sides[source], fp)
                positives, negatives = target_split(
                    row_scores(model, targets[source], mode, gates), targets[source])
                kept, rate = at_cut(positives, negatives, cut)
                line = frontier(positives, negatives)
                cells.append(f"{label} " + "/".join(f"{v:.3f}" for v in line)
                             + f" mean {np.mean(line):.3f} op {kept:.3f}/{rate:.3f}"
                             + f" (n={len(positives)},{len(negatives)})")
            print(f"  {name:20s} " + "  |  ".join(cells), flush=True)


PROBE_COUNT = 1000


def record_probe(out: Path) -> None:
    """Rows (as `fit_answerability.record`) of the property tests' generators and seeds."""
    from importlib import resources

    sys.path.insert(0, str(ROOT / "tests" / "unit" / "search"))
    from unrelated_requests import random_letters, unrelated_sentence

    catalogs = {"eval": ROOT.parent / "shared" / "eval" / "catalog.json",
                "example": resources.files("iii_directory") / "data" / "example_catalog.json",
                "heldout": ROOT / "benchmarks" / "data" / "heldout_catalog.json"}
    rows: list[dict[str, Any]] = []
    for kind, generate in (("letters", random_letters), ("sentences", unrelated_sentence)):
        rng = random.Random(f"issue-18-{kind}")
        cases = [{"id": f"{kind}-{i}", "split": "probe", "kind": "no_match",
                  "capabilities": [generate(rng)], "qrels": []} for i in range(PROBE_COUNT)]
        for name, path in catalogs.items():
            catalog = json.loads(path.read_text("utf-8"))
            for mode in fa.MODES:
                rows += fa.record_cases(f"probe-{name}-{kind}", mode, catalog, cases)
                print(f"recorded {name} / {kind} / {mode}", flush=True)
    out.write_text(json.dumps(rows) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--signals", type=Path, default=Path("/tmp/answerability_signals.json"))
    parser.add_argument("--mode", action="append", choices=fa.MODES)
    parser.add_argument("--model", action="append", choices=tuple(MODELS))
    parser.add_argument("--fp", type=float, default=0.10)
    parser.add_argument("--probe", type=Path,
                        help="recorded no-match rows to count answers on (eval-side fits)")
    parser.add_argument("--record-probe", type=Path,
                        help="record the property tests' generators here, then stop")
    args = parser.parse_args()
    if args.record_probe:
        record_probe(args.record_probe)
        return
    rows = json.loads(args.signals.read_text())
    fa.EVAL_SIDE = (*fa.EVAL_SIDE, "nearmiss")
    modes, names = args.mode or fa.MODES, args.model or tuple(MODELS)
    if args.probe:
        probe(rows, json.loads(args.probe.read_text()), modes, names, args.fp)
    else:
        measure(rows, modes, names, args.fp)


if __name__ == "__main__":
    main()
