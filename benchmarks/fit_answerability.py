"""Fit the answerability decision (`iii_directory.search.ranking.answerability`, issues 18 and 19).

    .venv/bin/python benchmarks/fit_answerability.py record   # run the searches, keep signals
    .venv/bin/python benchmarks/fit_answerability.py fit      # fit, cross-check, print constants
    .venv/bin/python benchmarks/fit_answerability.py fit --write | --check   # fitted.json

`record` runs every case of eval `dev` (never `test`), `benchmarks/data/extra_cases.json`,
`extra2_cases.json` and the held-out catalog's cases through the search handler, as the bench
does (`iii_directory.bench.run_mode`), in the modes `hybrid`, `lexical` and `static`, plus
`CHATTER` seeded calibration sentences (`calibration_chatter.py`: gardening, sport, pets,
chores, holidays) over each of the two catalogs and as many near-miss requests
(`fit_answerability_nearmiss.py`: services the eval catalog has no worker for) over the eval
catalog — none of them the property tests' generators or seeds. An observer
(`answerability.observe`) keeps the signals of every decision taken, the lane's and (hybrid)
the dense ranking's first 12 ids, and the decision the tree took then ("as run" below). A
capability whose lane was left empty and refilled by the single-term fallback
(`confidence.fallback_lanes`, lexical and static modes) is recorded as a lane left empty —
no signals, no lane, `"fallback": true` — as the calibration was fitted before that fallback
existed: such a lane is graded `low` at best, so the threshold, which draws the line of `high`,
does not decide it. Written to `--out` (JSON; `--set NAME` re-records one set).

`fit` labels each recorded capability: positive when its case serves it (a grade ≥ 2 function
that covers it) and its lane holds one of those functions in its first 12 — a "yes" there is
what recall needs; negative when nothing serves it (no-match cases, chatter, near misses); a
served capability whose lane holds no relevant function is left out (neither answer changes
recall). Only capabilities that meet `answerability.evidence_floor` are fitted and decided by
the score (below it the answer is no). Then, per mode family (`hybrid`: lexical features + best
cosine and its margin; `lexical`: + the concept coverage, `concept_coverage.coverage`; `static`:
lexical features + the best static cosine + the concept coverage), an
L2-regularised logistic regression over `answerability.features` (numpy, fit time only; L2
`--l2-hybrid` for the hybrid family, `--l2` for the others), its
threshold chosen on the training side: the lowest score that keeps the false-positive rate of
the training no-match cases (near misses included) within `--fp-hybrid` / `--fp-lexical` (0.10)
and answers no chatter sentence. Cross-checks, both directions: fitted on the eval catalog's sets
(dev, extra, extra2, chatter, near misses), scored on the held-out catalog; fitted on the
held-out catalog (its cases and chatter), scored on the eval catalog's sets. Prints the
constants of the eval-catalog fit, which is what ships (`answerability.CALIBRATION`): the
held-out catalog stays untouched by the shipped fit. `fit --write` writes them to
`src/iii_directory/search/ranking/data/fitted.json`; `fit --check` exits 1 when that file no longer
matches the fit (recording `--out` first when it does not exist).

The leave-one-out comparison with both catalogs and the L2 cross-validation that chose
`--l2` and `--l2-hybrid` are finished experiments (docs/record/search-quality.md, "Fitting on
both catalogs" and "Regularisation by cross-validation", with the commit that holds them).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

CHATTER = 300
CHATTER_SEED = "fit-answerability-chatter"
MODES = ("hybrid", "lexical", "static")
FAMILIES = {"hybrid": "hybrid", "lexical": "lexical", "static": "static"}


def _sets(eval_dir: Path) -> dict[str, tuple[Path, list[dict[str, Any]]]]:
    """set name → (catalog path, cases); eval cases of `dev` only."""
    from calibration_chatter import chatter
    from case_sets import tuning_sets

    from fit_answerability_nearmiss import nearmiss

    sets = tuning_sets(eval_dir)
    catalog, heldout_catalog = sets["dev"][0], sets["heldout"][0]
    for name, path, generate in (("chatter", catalog, chatter),
                                 ("heldout-chatter", heldout_catalog, chatter),
                                 ("nearmiss", catalog, nearmiss)):
        rng = random.Random(f"{CHATTER_SEED}-{name}")
        sentences = list(dict.fromkeys(generate(rng) for _ in range(CHATTER * 3)))[:CHATTER]
        sets[name] = (path, [{"id": f"{name}-{i}", "split": name, "kind": "no_match",
                              "capabilities": [text], "qrels": []}
                             for i, text in enumerate(sentences)])
    return sets


def record_cases(name: str, mode: str, catalog: list[dict[str, Any]],
                 cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per capability of `cases` run in `mode` over `catalog`: the signals, the lane's
    first 12 ids and the decision as run (`answerability.observe`), with its case's labels."""
    import anyio

    from iii_directory.bench import run_mode
    from iii_directory.search.ranking import answerability
    from iii_directory.search import service

    seen: dict[str, dict[str, Any]] = {}
    dense: dict[str, list[str]] = {}
    refilled: set[str] = set()
    product_signals = answerability.signals
    product_fallback = service.fallback_lanes

    def fallback_lanes(documents: Any, queries: Any, *args: Any) -> Any:
        lanes, flags = product_fallback(documents, queries, *args)
        refilled.update(query.text for query, flag in zip(queries, flags) if flag)
        return lanes, flags

    def signals(text: str, terms: Any, documents: Any, ranking: Any = None,
                *args: Any, **kwargs: Any) -> Any:
        dense[text] = [doc_id for doc_id, _ in (ranking or [])[:12]]
        return product_signals(text, terms, documents, ranking, *args, **kwargs)

    def observer(text: str, found: Any, lane: Any, decision: bool) -> None:
        seen[text] = {"signals": {k: getattr(found, k) for k in found.__dataclass_fields__},
                      "lane": [doc_id for doc_id, _ in lane[:12]],
                      "dense": dense.get(text, []), "decision": decision}

    answerability.observe(observer)
    answerability.signals = signals  # type: ignore[assignment]
    service.fallback_lanes = fallback_lanes  # type: ignore[assignment]
    try:
        anyio.run(run_mode, mode, catalog, cases, 1, None)
    finally:
        answerability.observe(None)
        answerability.signals = product_signals  # type: ignore[assignment]
        service.fallback_lanes = product_fallback  # type: ignore[assignment]
    for text in refilled:
        seen[text] = {"signals": None, "lane": [], "dense": [], "decision": False, "fallback": True}
    rows: list[dict[str, Any]] = []
    for case in cases:
        for position, text in enumerate(case["capabilities"]):
            relevant = sorted({q["function_id"] for q in case["qrels"] if q["grade"] >= 2
                               and position in q.get("covers", [position])})
            rows.append({"set": name, "mode": mode, "case": case["id"], "kind": case["kind"],
                         "text": text, "relevant": relevant,
                         **(seen.get(text) or {"signals": None, "lane": [], "dense": [],
                                                 "decision": False})})
    return rows


def record(args: argparse.Namespace) -> None:
    rows: list[dict[str, Any]] = []
    for name, (catalog_path, cases) in _sets(args.eval_dir).items():
        if args.set and name not in args.set:
            continue
        catalog = json.loads(catalog_path.read_text())
        for mode in args.mode or MODES:
            rows += record_cases(name, mode, catalog, cases)
            print(f"recorded {name} / {mode}: {len(cases)} cases", flush=True)
    if args.set and args.out.exists():  # keep the other sets' rows
        rows = [r for r in json.loads(args.out.read_text()) if r["set"] not in args.set] + rows
    args.out.write_text(json.dumps(rows) + "\n")


# -- fitting ------------------------------------------------------------------------------------


def features(signals: dict[str, Any], family: str, drop: tuple[str, ...] = ()) -> list[float]:
    """The decision's inputs (`answerability.features` computes the same in the product); the
    inputs named in `drop` read 0, so a fit gives them weight 0 (an input left out)."""
    from iii_directory.search.ranking.answerability import (FEATURE_NAMES, Signals,
                                                            features as product_features)

    found = Signals(**signals)
    return [0.0 if name in drop else value
            for name, value in zip(FEATURE_NAMES[family], product_features(found, family))]


def label(row: dict[str, Any]) -> int | None:
    """1: served and the lane holds a relevant function; 0: nothing serves it; None: left out."""
    if row["kind"] == "no_match" or not row["relevant"]:
        return 0
    return 1 if set(row["lane"]) & set(row["relevant"]) else None


def fit_logistic(x: Any, y: Any, l2: float, weight: Any) -> Any:
    import numpy as np

    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-9
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    for _ in range(4000):
        p = 1.0 / (1.0 + np.exp(-z @ w))
        grad = z.T @ ((p - y) * weight) / weight.sum() + l2 * np.r_[w[:-1], 0.0]
        w -= 0.5 * grad
    coef = w[:-1] / scale
    return np.r_[coef, w[-1] - (coef * mean).sum()]


def scores(model: Any, x: Any) -> Any:
    return x @ model[:-1] + model[-1]


def scored(signals: dict[str, Any] | None) -> bool:
    """The score decides: a non-empty lane, no hard refusal, in hybrid an admitted or
    corroborating dense ranking (`answerability.supported`), the evidence floor met (each of
    those says no on its own)."""
    from iii_directory.search.ranking.answerability import Signals, evidence_floor, supported

    if signals is None or signals["refused"]:
        return False
    found = Signals(**signals)
    return supported(found) and evidence_floor(found)


def decided(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows whose answer the score decides (`scored`)."""
    return [r for r in rows if scored(r["signals"])]


def threshold(model: Any, rows: list[dict[str, Any]], family: str, fp: float,
              drop: tuple[str, ...] = ()) -> float:
    """The lowest threshold at which no chatter sentence and at most `fp` of the no-match cases
    (each over its catalog's whole no-match count) are answered."""
    import numpy as np

    cases = [r for r in rows if r["kind"] == "no_match" and "chatter" not in r["set"]]
    total = len({(r["set"], r["case"]) for r in cases}) or 1
    negatives = [r for r in decided(rows) if r["kind"] == "no_match"]
    s = scores(model, np.array([features(r["signals"], family, drop) for r in negatives])) \
        if negatives else np.array([])
    chatter_max = max([v for v, r in zip(s, negatives) if "chatter" in r["set"]], default=-1e9)
    case_scores = defaultdict(lambda: -1e9)
    for v, r in zip(s, negatives):
        if "chatter" not in r["set"]:
            key = (r["set"], r["case"])
            case_scores[key] = max(case_scores[key], v)
    ordered = sorted(case_scores.values(), reverse=True)
    allowed = int(math.floor(fp * total + 1e-9))
    case_floor = ordered[allowed] if allowed < len(ordered) else -1e9
    return float(max(chatter_max, case_floor) + 1e-6)


def evaluate(model: Any, cut: float, rows: list[dict[str, Any]], family: str,
             drop: tuple[str, ...] = ()) -> dict[str, float]:
    """Per set: share of positives kept, of left-out-or-positive served capabilities refused,
    no-match case FP rate, chatter answered."""
    import numpy as np

    out: dict[str, Any] = {}
    for name in sorted({r["set"] for r in rows}):
        part = [r for r in rows if r["set"] == name]
        yes = {}
        for r in part:
            ok = False
            if scored(r["signals"]):
                ok = bool(scores(model, np.array([features(r["signals"], family, drop)]))[0]
                          >= cut)
            yes[(r["case"], r["text"])] = ok
        pos = [r for r in part if label(r) == 1]
        kept = sum(yes[(r["case"], r["text"])] for r in pos) / len(pos) if pos else float("nan")
        now = sum(r["decision"] for r in pos) / len(pos) if pos else float("nan")
        neg_cases = defaultdict(bool)
        neg_now = defaultdict(bool)
        for r in part:
            if r["kind"] == "no_match":
                neg_cases[r["case"]] |= yes[(r["case"], r["text"])]
                neg_now[r["case"]] |= r["decision"]
        fp = sum(neg_cases.values()) / len(neg_cases) if neg_cases else float("nan")
        fp_now = sum(neg_now.values()) / len(neg_now) if neg_now else float("nan")
        out[name] = {"kept": kept, "kept_rules": now, "fp": fp, "fp_rules": fp_now,
                     "positives": len(pos), "no_match": len(neg_cases)}
    return out


def fit_family(rows: list[dict[str, Any]], family: str, l2: float, fp: float,
               drop: tuple[str, ...] = ()) -> tuple[Any, float]:
    import numpy as np

    train = [r for r in decided(rows) if label(r) is not None]
    x = np.array([features(r["signals"], family, drop) for r in train])
    y = np.array([label(r) for r in train], dtype=float)
    # chatter sentences are many; weigh them as one no-match set of the size of the others
    cases = sum(1 for r in train if "chatter" not in r["set"])
    chatter = sum(1 for r in train if "chatter" in r["set"]) or 1
    weight = np.array([cases / chatter / 4 if "chatter" in r["set"] else 1.0 for r in train])
    model = fit_logistic(x, y, l2, weight)
    return model, threshold(model, rows, family, fp, drop)


def show(title: str, results: dict[str, Any]) -> None:
    print(title)
    for name, m in results.items():
        print(f"  {name:16s} served kept {m['kept']:.3f} (as run {m['kept_rules']:.3f}, "
              f"n={m['positives']})  no-match FP {m['fp']:.3f} (as run {m['fp_rules']:.3f}, "
              f"n={m['no_match']})")


EVAL_SIDE = ("dev", "extra", "extra2", "chatter")
HELDOUT_SIDE = ("heldout", "heldout-chatter")


def fit(args: argparse.Namespace) -> None:
    from iii_directory.search.ranking.answerability import FEATURE_NAMES

    global EVAL_SIDE
    if args.nearmiss:
        EVAL_SIDE = (*EVAL_SIDE, "nearmiss")
    rows = json.loads(args.out.read_text())
    shipped: dict[str, Any] = {}
    for mode in args.mode or MODES:
        family = FAMILIES[mode]
        drop = tuple(name for name in args.drop or () if name in FEATURE_NAMES[family])
        fp = {"hybrid": args.fp_hybrid}.get(family, args.fp_lexical)
        part = [r for r in rows if r["mode"] == mode]
        l2 = args.l2_hybrid if family == "hybrid" and args.l2_hybrid is not None else args.l2
        eval_side = [r for r in part if r["set"] in EVAL_SIDE]
        held_side = [r for r in part if r["set"] in HELDOUT_SIDE]
        model, cut = fit_family(eval_side, family, l2, fp, drop)
        print(f"\n== {mode}: fitted on {', '.join(EVAL_SIDE)} ==")
        print("  " + ", ".join(f"{n} {w:+.4f}" for n, w in zip(FEATURE_NAMES[family], model[:-1]))
              + f", bias {model[-1]:+.4f}, threshold {cut:+.4f}")
        show("  training sets:", evaluate(model, cut, eval_side, family, drop))
        show("  scored on the held-out catalog:", evaluate(model, cut, held_side, family, drop))
        shipped[family] = (tuple(round(float(w), 4) for w in model[:-1]),
                           round(float(model[-1]), 4), round(cut, 4))
        back, back_cut = fit_family(held_side, family, l2, fp, drop)
        print(f"== {mode}: fitted on {', '.join(HELDOUT_SIDE)} ==")
        print("  " + ", ".join(f"{n} {w:+.4f}" for n, w in zip(FEATURE_NAMES[family], back[:-1]))
              + f", bias {back[-1]:+.4f}, threshold {back_cut:+.4f}")
        show("  scored on the eval catalog's sets:",
             evaluate(back, back_cut, eval_side, family, drop))
    if args.write or args.check:
        import _fitted_file

        _fitted_file.apply({f"answerability.CALIBRATION.{family}": {
            "values": list(weights), "bias": bias, "threshold": cut}
            for family, (weights, bias, cut) in shipped.items()}, args)
        return
    print("\nCALIBRATION = {  # (weights in FEATURE_NAMES order, bias, threshold), eval-catalog fit")
    for family, (weights, bias, cut) in shipped.items():
        print(f"    {family!r}: ({weights!r}, {bias!r}, {cut!r}),")
    print("}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("record", "fit"))
    parser.add_argument("--eval-dir", type=Path, default=ROOT.parent / "shared" / "eval")
    parser.add_argument("--out", type=Path, default=Path("/tmp/answerability_signals.json"))
    parser.add_argument("--mode", action="append", choices=MODES)
    parser.add_argument("--set", action="append", help="record only these sets (repeatable)")
    parser.add_argument("--no-nearmiss", dest="nearmiss", action="store_false",
                        help="fit the eval side without the near-miss negatives (tried, not shipped)")
    parser.add_argument("--l2", type=float, default=0.1,
                        help="the L2 of the lexical and static families (and hybrid's without "
                             "--l2-hybrid)")
    parser.add_argument("--l2-hybrid", type=float, default=1.0,
                        help="the L2 of the hybrid family (1.0: chosen by cross-validation, "
                             "docs/record/search-quality.md \"Regularisation by cross-validation\")")
    parser.add_argument("--drop", action="append",
                        help="fit: leave this input out (weight 0; repeatable; "
                             "chosen by cross-validation: docs/record/search-quality.md)")
    parser.add_argument("--fp-hybrid", type=float, default=0.10)
    parser.add_argument("--fp-lexical", type=float, default=0.10)
    import _fitted_file

    _fitted_file.add_arguments(parser, "CALIBRATION (with `fit`; --check records --out first "
                                       "when it does not exist)")
    args = parser.parse_args()
    shipped = (args.mode, args.drop, args.nearmiss, args.l2, args.l2_hybrid, args.fp_hybrid,
               args.fp_lexical) == (None, None, True, 0.1, 1.0, 0.10, 0.10)
    if (args.write or args.check) and (args.action != "fit" or not shipped):
        parser.error("--write and --check go with `fit` and fit what ships: no other option")
    if args.check and not args.out.exists():
        print(f"recording {args.out} first", flush=True)
        record(args)
    record(args) if args.action == "record" else fit(args)


if __name__ == "__main__":
    main()
