"""Fit the BM25F field weights of the catalog's lexical lane (an experiment: `_bm25f.py`).

    python benchmarks/fit_bm25f.py [--eval-dir ../shared/eval]
    python benchmarks/fit_bm25f.py --pipeline [--mode lexical] [--eval-dir ../shared/eval]
    python benchmarks/fit_bm25f.py --bench {W,B W,B W,B | repetition} [--fusion W1,…,W13] -- BENCH-ARGS

A function's lexical document has three fields — its id, its slim description, its argument
names (`_bm25f.lexical_fields`). Today's document weights them by repetition (the id three times,
one Okapi length normalisation over the whole text); BM25F (`_rank.BM25FIndex`) gives each field
a weight `w` and a length normalisation `b` of its own. This grid-searches `(w, b)` per field.

Measured at lane level on the graded capabilities (grade ≥ 2 qrels; never the eval's `test`
split): `first`, the share of capabilities whose lexical lane (`lanes.lexical_ranking`: the
two-term minimum, coverage pruning, the single-term fallback) puts a relevant function first,
and `recall`, the mean share of relevant functions in its first twelve. The objective is their
sum, averaged over the sets of one catalog. The cross-check fits on the eval catalog's sets
(`dev`, `extra`, `extra2`) and scores the held-out catalog, then fits on the held-out catalog and
scores each eval set; `repetition` is the BM25 document in use today.

`--pipeline` fits through the whole search instead of the lane: every configuration of a
smaller grid (`PIPELINE_GRID`) runs `iii_directory.bench` in one mode (default lexical) over dev,
extra, extra2 and the held-out catalog, and the objective is the mean of `MRR@1 + recall@12 −
no-match false-positive rate` over one catalog's sets; the same cross-check is printed.

`--bench` runs `python -m iii_directory.bench BENCH-ARGS` in this process with the catalog scored
by BM25F with those id / description / argument `weight,b` pairs (or by today's BM25 document:
`repetition`), and with `--fusion` the learned fusion's weights replaced (as printed by
`benchmarks/fit_fusion.py --bm25f …`), so every mode is measured end to end without changing the
shipped constants.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import _bm25f
from _bm25f import Fields
from fit_fusion import load_corpus
from iii_directory.search import corpus as corpus_module
from iii_directory.search.corpus import Corpus, DocumentSet
from iii_directory.search.lanes import lexical_ranking
from iii_directory.search.query import make_query

Graded = list[tuple[tuple[str, ...], dict[str, int]]]

ID_WEIGHTS = (1.0, 2.0, 3.0, 4.0, 6.0)
DESCRIPTION_WEIGHTS = (0.5, 1.0, 1.5)
ARGUMENT_WEIGHTS = (0.0, 0.25, 0.5, 1.0)
ID_B = (0.0, 0.5, 0.75, 1.0)
DESCRIPTION_B = (0.3, 0.75, 1.0)
ARGUMENT_B = (0.0, 0.75)


def graded(path: Path, split: str | None) -> Graded:
    """`(query terms, {function_id: grade})` of every capability a grade-≥ 2 qrel covers."""
    out: Graded = []
    for case in json.loads(path.read_text())["cases"]:
        if (split is not None and case["split"] != split) or case["kind"] == "no_match":
            continue
        for index, capability in enumerate(case["capabilities"]):
            grades = {q["function_id"]: q["grade"] for q in case["qrels"] if index in q["covers"]}
            query = make_query(capability)
            if query is not None and any(g >= 2 for g in grades.values()):
                out.append((query.terms, grades))
    return out


def quality(corpus: Corpus, fields: Fields, data: Graded) -> tuple[float, float]:
    """(first, recall@12) of the lexical lane over `data` with the catalog scored by `fields`."""
    _bm25f.use(fields)
    documents = DocumentSet(corpus_module.tool_documents(corpus.tools))
    first = recall = 0.0
    for terms, grades in data:
        ranking = [doc_id for doc_id, _ in lexical_ranking(documents, terms)[:12]]
        relevant = [n for n, g in grades.items() if g >= 2]
        first += bool(ranking) and grades.get(ranking[0], 0) >= 2
        recall += sum(n in ranking for n in relevant) / len(relevant)
    return first / len(data), recall / len(data)


def grid() -> list[Fields]:
    return [((wi, bi), (wd, bd), (wa, ba)) for wi, wd, wa, bi, bd, ba in itertools.product(
        ID_WEIGHTS, DESCRIPTION_WEIGHTS, ARGUMENT_WEIGHTS, ID_B, DESCRIPTION_B, ARGUMENT_B)]


def best(results: dict[Fields, list[tuple[float, float]]]) -> Fields:
    """The configuration with the highest mean `first + recall` (ties: first in grid order)."""
    return max(results, key=lambda f: sum(a + b for a, b in results[f]) / len(results[f]))


def describe(fields: Fields) -> str:
    if fields is None:
        return "repetition (BM25, id x3)"
    return "id {:g}/{:g}  description {:g}/{:g}  arguments {:g}/{:g} (w/b)".format(
        *itertools.chain.from_iterable(fields))


PIPELINE_GRID = [((wi, bi), (wd, bd), (wa, 0.0)) for wi, wd, wa, bi, bd in itertools.product(
    (1.0, 2.0, 3.0), (0.5, 1.0), (0.25, 0.5, 1.0), (0.0, 0.75, 1.0), (0.3, 0.75, 1.0))]
PIPELINE_KEYS = ("mrr_at_1", "recall_at_12", "false_positive_rate")


def pipeline(argv: list[str]) -> None:
    """`--pipeline` (see the module docstring)."""
    import contextlib
    import io
    import tempfile

    from iii_directory import bench as bench_module

    parser = argparse.ArgumentParser()
    parser.add_argument("--pipeline", action="store_true")
    parser.add_argument("--mode", default="lexical")
    parser.add_argument("--eval-dir", default="../shared/eval")
    args = parser.parse_args(argv)
    data_dir = Path(__file__).parent / "data"
    sets = {
        "dev": ["--eval-dir", args.eval_dir, "--split", "dev"],
        "extra": ["--catalog", f"{args.eval_dir}/catalog.json", "--cases",
                  str(data_dir / "extra_cases.json")],
        "extra2": ["--catalog", f"{args.eval_dir}/catalog.json", "--cases",
                   str(data_dir / "extra2_cases.json")],
        "heldout": ["--heldout"],
    }

    def measure(fields: Fields) -> dict[str, tuple[float, ...]]:
        _bm25f.use(fields)
        out = {}
        for name, set_args in sets.items():
            with tempfile.NamedTemporaryFile(suffix=".json") as metrics, \
                    contextlib.redirect_stdout(io.StringIO()):
                bench_module.main([*set_args, "--mode", args.mode, "--metrics-json", metrics.name])
                found = json.loads(Path(metrics.name).read_text())[args.mode]
            split = next(k for k in found if k != "reported_search_mode")
            out[name] = tuple(float(found[split][key]) for key in PIPELINE_KEYS)
        return out

    def objective(result: dict[str, tuple[float, ...]], names: list[str]) -> float:
        return sum(m + r - fp for m, r, fp in (result[n] for n in names)) / len(names)

    def show(label: str, fields: Fields, result: dict[str, tuple[float, ...]]) -> None:
        cells = "  ".join(f"{n} {m:.3f}/{r:.3f}/{fp:.3f}" for n, (m, r, fp) in result.items())
        print(f"{label:20s} {describe(fields)}\n{'':20s} {cells}", flush=True)

    print(f"{args.mode} pipeline, MRR@1 / recall@12 / no-match FP rate")
    results = {None: measure(None)}
    show("today", None, results[None])
    same: Fields = ((3.0, 0.75), (1.0, 0.75), (1.0, 0.75))
    results[same] = measure(same)
    show("BM25F, today's weights", same, results[same])
    for fields in PIPELINE_GRID:
        results[fields] = measure(fields)
    eval_names, held = ["dev", "extra", "extra2"], ["heldout"]
    fitted = max(PIPELINE_GRID, key=lambda f: objective(results[f], eval_names))
    show("fit on eval catalog", fitted, results[fitted])
    fitted = max(PIPELINE_GRID, key=lambda f: objective(results[f], held))
    show("fit on heldout", fitted, results[fitted])
    print("best five on the eval catalog:")
    for fields in sorted(PIPELINE_GRID, key=lambda f: -objective(results[f], eval_names))[:5]:
        show("", fields, results[fields])
    print("best five on heldout:")
    for fields in sorted(PIPELINE_GRID, key=lambda f: -objective(results[f], held))[:5]:
        show("", fields, results[fields])


def bench(argv: list[str]) -> int:
    """`--bench` (see the module docstring)."""
    from iii_directory import bench as bench_module
    from iii_directory.search import fusion

    split = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser()
    parser.add_argument("--bench", nargs="+", metavar="W,B", required=True)
    parser.add_argument("--fusion")
    args = parser.parse_args(argv[:split])
    _bm25f.use(_bm25f.parse(args.bench))
    if args.fusion:
        weights = tuple(float(w) for w in args.fusion.split(","))
        if len(weights) != len(fusion.FEATURES):
            raise SystemExit(f"--fusion needs {len(fusion.FEATURES)} weights")
        fusion.WEIGHTS = weights
        fusion.score.__defaults__ = (weights,)
    return bench_module.main(argv[split + 1:])


def main() -> None:
    if "--bench" in sys.argv:
        raise SystemExit(bench(sys.argv[1:]))
    if "--pipeline" in sys.argv:
        pipeline(sys.argv[1:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval-dir", type=Path, default=Path("../shared/eval"))
    args = parser.parse_args()
    data_dir = Path(__file__).parent / "data"
    eval_corpus = load_corpus(args.eval_dir / "catalog.json")
    heldout_corpus = load_corpus(data_dir / "heldout_catalog.json")
    eval_sets = {"dev": graded(args.eval_dir / "cases.json", "dev"),
                 "extra": graded(data_dir / "extra_cases.json", None),
                 "extra2": graded(data_dir / "extra2_cases.json", None)}
    heldout = graded(data_dir / "heldout_cases.json", None)
    configs: list[Fields] = [None, ((3.0, 0.75), (1.0, 0.75), (1.0, 0.75)), *grid()]
    on_eval: dict[Fields, list[tuple[float, float]]] = {}
    on_heldout: dict[Fields, list[tuple[float, float]]] = {}
    for fields in configs:
        on_eval[fields] = [quality(eval_corpus, fields, data) for data in eval_sets.values()]
        on_heldout[fields] = [quality(heldout_corpus, fields, heldout)]
    _bm25f.use(None)

    def row(label: str, fields: Fields) -> None:
        cells = [f"{name} {f:.3f}/{r:.3f}"
                 for name, (f, r) in zip([*eval_sets, "heldout"], on_eval[fields] + on_heldout[fields])]
        print(f"{label:22s} {describe(fields)}\n{'':22s} " + "  ".join(cells))

    print("lexical lane, first / recall@12")
    row("today", None)
    row("BM25F, today's weights", configs[1])
    fitted_eval = best({f: on_eval[f] for f in configs[1:]})
    row("fit on eval catalog", fitted_eval)
    print(f"  -> heldout: first/recall {on_heldout[None][0][0]:.3f}/{on_heldout[None][0][1]:.3f}"
          f" today, {on_heldout[fitted_eval][0][0]:.3f}/{on_heldout[fitted_eval][0][1]:.3f} fitted")
    fitted_heldout = best({f: on_heldout[f] for f in configs[1:]})
    row("fit on heldout", fitted_heldout)
    for name, today, fitted in zip(eval_sets, on_eval[None], on_eval[fitted_heldout]):
        print(f"  -> {name}: first/recall {today[0]:.3f}/{today[1]:.3f} today, "
              f"{fitted[0]:.3f}/{fitted[1]:.3f} fitted")
    ranked = sorted(configs[1:], key=lambda f: -sum(a + b for a, b in on_eval[f]))
    print("best ten on the eval catalog (with their heldout score):")
    for fields in ranked[:10]:
        row("", fields)


if __name__ == "__main__":
    main()
