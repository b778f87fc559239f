"""Fit the weights of the learned catalog fusion (`iii_directory.search.ranking.fusion.WEIGHTS`).

    python benchmarks/fit_fusion.py [--eval-dir ../shared/eval] [--extra PATH ...] \
        [--heldout] [--without FEATURE ...] [--bm25f W,B W,B W,B]
    python benchmarks/fit_fusion.py --write | --check

Uses the graded capabilities of the eval set's `dev` split and of our own case sets
(`benchmarks/data/extra*_cases.json`, each file one split) — never the eval's `test` split. For every capability: the request as `directory::search_functions` sees it
(`make_query`), its dense top 64 over the eval catalog with the packaged MiniLM, and the lane's
candidates with their features (`fusion.features`). Training is pairwise logistic regression:
each relevant candidate (grade ≥ 2) against each other candidate of the same capability, L2 0.01,
300 full-batch gradient steps of 0.5 from zero weights — deterministic for a given corpus.

It prints the dense-only baseline, the cross-check (each set scored with weights fitted on the
others: share of capabilities whose first candidate is relevant, share of relevant functions in
the first twelve; each without and with the lane's first `fusion.HEAD` re-sorted by the head
score), and the weights fitted on all sets: `WEIGHTS`, and
`HEAD_WEIGHTS`, fitted the same way over the rows with the head features (`fusion.head_rows`).
`--write` writes the four shipped tables (`WEIGHTS`, `HEAD_WEIGHTS`, `WEIGHTS_WITHOUT_SECOND`,
`WEIGHTS_WITHOUT_VIEWS`) to `src/iii_directory/search/ranking/data/fitted.json`; `--check` re-runs
those fits and exits 1 when the file no longer matches them (tests/unit/search/test_fitted.py).
Every lane gets the catalog's extra views (`views.py`) and the request's second embedding
(`second_query.py`), so the features are `fusion.SECOND_VIEWED_FEATURES`; `--without cos_second
--without second_max --without second_mean` gives `fusion.WEIGHTS_WITHOUT_SECOND` (its first
seventeen weights), and leaving out the four view features as well gives
`fusion.WEIGHTS_WITHOUT_VIEWS` (its first thirteen).

`--heldout` adds the transfer check across catalogs: our independent catalog
(`benchmarks/data/heldout_catalog.json`, its cases in `heldout_cases.json`) scored with weights
fitted on the eval catalog's sets, and each eval-catalog set scored with weights fitted on the
heldout catalog alone. The heldout cases never enter the weights printed for `fusion.py`.
`--without FEATURE` fits with that feature's column zeroed (an ablation). `--bm25f` scores the catalogs' lexical lane
by BM25F with these `weight,b` pairs for the id, description and argument fields
(`benchmarks/_bm25f.py`; the experiment that fitted them left the tree, docs/record/search-quality.md) instead of the shipped BM25
document. The leave-one-out comparison with both catalogs and the L2 / feature-set
cross-validation that chose `L2` are finished experiments (docs/record/search-quality.md,
"Fitting on both catalogs" and "Regularisation by cross-validation", with the commit that holds
them).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import _bm25f
import _fitted_file
from iii_directory.search.ranking.corpus import Corpus, tool_from_schema
from iii_directory.search.ranking.fusion import (HEAD, HEAD_SCORED_FEATURES,
                                                 SECOND_VIEWED_FEATURES as FEATURES, Request,
                                                 features, head_rows)
from iii_directory.search.ranking.lanes import lexical_ranking
from iii_directory.search.ranking.query import make_query
from iii_directory.search.ranking.views import Views, view_texts

DENSE_K = 64
L2 = 0.01
STEPS = 300
STEP_SIZE = 0.5

Sample = tuple[list[str], np.ndarray, dict[str, int]]


def graded_capabilities(path: Path, split: str | None) -> list[tuple[str, dict[str, int]]]:
    """`(capability, {function_id: grade})` for every capability that a grade-≥ 2 qrel covers
    (`split` None: every split)."""
    out = []
    for case in json.loads(path.read_text())["cases"]:
        if (split is not None and case["split"] != split) or case["kind"] == "no_match":
            continue
        for index, capability in enumerate(case["capabilities"]):
            grades = {q["function_id"]: q["grade"] for q in case["qrels"] if index in q["covers"]}
            if any(g >= 2 for g in grades.values()):
                out.append((capability, grades))
    return out


def load_corpus(path: Path) -> Corpus:
    records = json.loads(path.read_text())
    return Corpus.build(
        [tool_from_schema(r["function_id"], r.get("description"), r.get("request_schema"))
         for r in records if not (r.get("metadata") or {}).get("internal")])


_VIEWS: dict[int, Views] = {}


def corpus_views(corpus: Corpus, encoder: Any) -> Views:
    """The description and action views of a corpus (`views.py`), embedded once."""
    if id(corpus) not in _VIEWS:
        _VIEWS[id(corpus)] = Views.of(corpus.tools, np.asarray(
            encoder.encode(view_texts(corpus.tools)), dtype=np.float32))
    return _VIEWS[id(corpus)]


def dense_ranking(ids: list[str], cosines: np.ndarray) -> tuple[list[int], list[tuple[str, float]]]:
    """The dense top `DENSE_K` as the lane ranks it (cosine descending, then id): the rows and
    the `(id, cosine)` ranking."""
    order = sorted(range(len(ids)), key=lambda i: (-float(cosines[i]), ids[i]))[:DENSE_K]
    return order, [(ids[i], float(cosines[i])) for i in order]


def cross_checks(sets: dict[str, list[Sample]], heldout: list[Sample]
                 ) -> tuple[list[str], np.ndarray]:
    """The cross-check cells (`name first/recall`): each eval-catalog set scored with weights
    fitted on the others, the held-out catalog with weights fitted on them all, each set with
    weights fitted on the held-out catalog; and the weights fitted on every eval-catalog set."""
    cells = []
    for name in sets:
        weights = fit([s for other, data in sets.items() if other != name for s in data])
        cells.append("%s %.3f/%.3f" % (name, *quality(weights, sets[name])))
    weights = fit([s for data in sets.values() for s in data])
    cells.append("eval->heldout %.3f/%.3f" % quality(weights, heldout))
    back = fit(heldout)
    cells += ["heldout->%s %.3f/%.3f" % (name, *quality(back, data)) for name, data in sets.items()]
    return cells, weights


def probe_sets(eval_dir: Path,
               samples_of: Callable[[Corpus, list[tuple[str, dict[str, int]]]], list[Sample]]
               ) -> tuple[dict[str, list[Sample]], list[Sample]]:
    """A probe's samples (`samples_of(corpus, graded)`): the eval catalog's sets (dev, then each
    `benchmarks/data/extra*_cases.json` named by its file) and the held-out catalog's cases."""
    data_dir = Path(__file__).parent / "data"
    corpus = load_corpus(eval_dir / "catalog.json")
    sets = {"dev": samples_of(corpus, graded_capabilities(eval_dir / "cases.json", "dev"))}
    for path in sorted(data_dir.glob("extra*_cases.json")):
        name = path.stem.replace("_cases", "")
        sets[name] = samples_of(corpus, graded_capabilities(path, name))
    heldout = samples_of(load_corpus(data_dir / "heldout_catalog.json"),
                         graded_capabilities(data_dir / "heldout_cases.json", None))
    return sets, heldout


def print_groups(groups: dict[str, tuple[str, ...]], labels: list[str],
                 sets: dict[str, list[Sample]], heldout: list[Sample],
                 pick: Callable[[list[Sample], tuple[str, ...]], list[Sample]], base: int) -> None:
    """One line of `cross_checks` per feature group: its columns chosen by `pick`, and the
    weights the eval catalog's sets give the columns after the first `base`."""
    for label in labels:
        columns = groups[label]
        cells, weights = cross_checks({name: pick(data, columns) for name, data in sets.items()},
                                      pick(heldout, columns))
        added = " ".join(f"{c} {w:+.3f}" for c, w in zip(columns, weights[base:]))
        print(f"{label:12s} " + "  ".join(cells) + (f"  [{added}]" if added else ""), flush=True)


def index_cosines(ids: list[str], matrix: np.ndarray, vector: np.ndarray
                  ) -> Callable[[Sequence[str]], list[float]]:
    """`(names) → cosines` of `vector` to those rows of the index `matrix` (ids in row order),
    as `SearchCall.second_cosines` gives them from the dense lane's index."""
    position = {name: i for i, name in enumerate(ids)}
    return lambda names: (matrix[[position[n] for n in names]] @ vector).tolist()


def samples(corpus: Corpus, matrix: np.ndarray, encoder: Any,
            graded: list[tuple[str, dict[str, int]]]) -> list[Sample]:
    ids = [tool.name for tool in corpus.tools]
    views = corpus_views(corpus, encoder)
    out = []
    for capability, grades in graded:
        query = make_query(capability)
        if query is None:
            continue
        vector, second = np.asarray(encoder.encode([query.dense_text, query.second_text]),
                                    dtype=np.float32)
        _, dense = dense_ranking(ids, matrix @ vector)
        names, rows = features(Request.of(query.terms), corpus.documents,
                               lexical_ranking(corpus.documents, query.terms), dense,
                               corpus.descriptions.__getitem__,
                               lambda names, v=vector: views.cosines(names, v),
                               index_cosines(ids, matrix, second))
        out.append((names, np.asarray(rows, dtype=np.float64), grades))
    return out


def pair_differences(data: list[Sample]) -> np.ndarray:
    """Each relevant candidate's row (grade ≥ 2) minus each other candidate's row of the same
    capability: the training pairs of `fit`."""
    pairs = []
    for names, rows, grades in data:
        relevant = [i for i, n in enumerate(names) if grades.get(n, 0) >= 2]
        others = [i for i, n in enumerate(names) if grades.get(n, 0) < 2]
        pairs.extend(rows[r] - rows[o] for r in relevant for o in others)
    return np.asarray(pairs)


def fit_pairs(differences: np.ndarray, l2: float = L2) -> np.ndarray:
    """Pairwise logistic regression over `pair_differences` from zero weights (see the module
    docstring), L2 `l2`; a column of zeros keeps weight 0."""
    weights = np.zeros(differences.shape[1])
    for _ in range(STEPS):
        margin = differences @ weights
        gradient = -(differences * (1.0 / (1.0 + np.exp(margin)))[:, None]).mean(0) + l2 * weights
        weights -= STEP_SIZE * gradient
    return weights


def fit(data: list[Sample], l2: float = L2) -> np.ndarray:
    """Pairwise logistic regression from zero weights (see the module docstring), L2 `l2`."""
    return fit_pairs(pair_differences(data), l2)


def with_head(data: list[Sample]) -> list[Sample]:
    """Each sample's rows with the head features added (`fusion.head_rows`:
    `fusion.HEAD_SCORED_FEATURES`)."""
    return [(names, np.asarray(head_rows([tuple(row) for row in rows]), dtype=np.float64), grades)
            for names, rows, grades in data]


def head_quality(weights: np.ndarray, head_weights: np.ndarray, data: list[Sample]
                 ) -> tuple[float, float]:
    """`quality` of the lane as `fusion.learned_lane` ranks it: by `weights`, then its first
    `fusion.HEAD` re-sorted by `head_weights` (`data` with the head features, `with_head`)."""
    first, recall = [], []
    for names, rows, grades in data:
        order = list(np.argsort(-(rows[:, :len(weights)] @ weights), kind="stable"))
        head_scores = rows @ head_weights
        order = sorted(order[:HEAD], key=lambda i: -head_scores[i]) + order[HEAD:]
        relevant = [n for n, g in grades.items() if g >= 2]
        top = {names[i] for i in order[:12]}
        first.append(grades.get(names[order[0]], 0) >= 2)
        recall.append(sum(n in top for n in relevant) / len(relevant))
    return float(np.mean(first)), float(np.mean(recall))


def both_fits(train: list[Sample], l2: float = L2) -> tuple[np.ndarray, np.ndarray]:
    """`WEIGHTS` and `HEAD_WEIGHTS` fitted on the same samples, L2 `l2`."""
    return fit(train, l2), fit(with_head(train), l2)


def report(label: str, fitted: tuple[np.ndarray, np.ndarray], data: list[Sample]) -> None:
    """One cross-check line: the lane without and with its head re-sorted."""
    plain = quality(fitted[0], data)
    headed = head_quality(*fitted, with_head(data))
    print(f"{label:34s} first {plain[0]:.3f}  recall@12 {plain[1]:.3f}  |  head re-sorted: "
          f"first {headed[0]:.3f}  recall@12 {headed[1]:.3f}")


def quality(weights: np.ndarray, data: list[Sample]) -> tuple[float, float]:
    """Share of capabilities whose best-scored candidate is relevant; mean share of relevant
    functions among the best twelve."""
    first, recall = [], []
    for names, rows, grades in data:
        order = np.argsort(-(rows @ weights), kind="stable")
        relevant = [n for n, g in grades.items() if g >= 2]
        top = {names[i] for i in order[:12]}
        first.append(grades.get(names[order[0]], 0) >= 2)
        recall.append(sum(n in top for n in relevant) / len(relevant))
    return float(np.mean(first)), float(np.mean(recall))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval-dir", type=Path, default=Path("../shared/eval"))
    parser.add_argument("--extra", type=Path, action="append",
                        help="one of our case files (repeatable; default: every "
                             "benchmarks/data/extra*_cases.json)")
    parser.add_argument("--heldout", action="store_true",
                        help="also check transfer to and from benchmarks/data/heldout_catalog.json")
    parser.add_argument("--without", action="append", default=[], choices=FEATURES,
                        help="zero this feature's column (ablation; repeatable)")
    parser.add_argument("--bm25f", nargs=3, metavar="W,B",
                        help="BM25F weight,b of the id, description and argument fields")
    _fitted_file.add_arguments(parser, "the four fusion tables")
    args = parser.parse_args()
    if (args.write or args.check) and (args.without or args.bm25f or args.extra):
        parser.error("--write and --check fit what ships: no --without, --bm25f or --extra")
    if args.bm25f:
        _bm25f.use(_bm25f.parse(args.bm25f))
    from _rank import dense

    corpus = load_corpus(args.eval_dir / "catalog.json")
    encoder = dense.Encoder()
    matrix = np.asarray(encoder.encode([tool.dense_text for tool in corpus.tools]), dtype=np.float32)
    extras = args.extra or sorted(Path("benchmarks/data").glob("extra*_cases.json"))
    sets = {"dev": samples(corpus, matrix, encoder,
                           graded_capabilities(args.eval_dir / "cases.json", "dev"))}
    for path in extras:
        split = json.loads(path.read_text())["cases"][0]["split"]
        sets[split] = samples(corpus, matrix, encoder, graded_capabilities(path, split))
    if args.write or args.check:
        _fitted_file.apply(shipped_fits(sets), args)
        return
    sets = {name: zeroed(data, args.without) for name, data in sets.items()}
    dense_only = np.zeros(len(FEATURES))
    dense_only[FEATURES.index("cos")] = 1.0
    for name, data in sets.items():
        print(f"dense only   {name:5s}  first {quality(dense_only, data)[0]:.3f}  "
              f"recall@12 {quality(dense_only, data)[1]:.3f}")
    for held_out in sets:
        fitted = both_fits([sample for name, data in sets.items() if name != held_out
                            for sample in data])
        report(f"fit on the others -> {held_out}", fitted, sets[held_out])
    weights, head_weights = both_fits([sample for data in sets.values() for sample in data])
    heldout: list[Sample] = []
    if args.heldout:
        data_dir = Path(__file__).parent / "data"
        other = load_corpus(data_dir / "heldout_catalog.json")
        other_matrix = np.asarray(encoder.encode([tool.dense_text for tool in other.tools]),
                                  dtype=np.float32)
        heldout = zeroed(samples(other, other_matrix, encoder,
                                 graded_capabilities(data_dir / "heldout_cases.json", None)), args.without)
    if args.heldout:
        first, recall = quality(dense_only, heldout)
        print(f"dense only   heldout  first {first:.3f}  recall@12 {recall:.3f}")
        report("fit on the eval catalog -> heldout", (weights, head_weights), heldout)
        transferred = both_fits(heldout)
        print("weights fitted on heldout: " + ",".join(f"{w:.3f}" for w in transferred[0]))
        print("head weights fitted on heldout: " + ",".join(f"{w:.3f}" for w in transferred[1]))
        for name, data in sets.items():
            report(f"fit on heldout -> {name}", transferred, data)
    print_weights("", weights, head_weights)


def zeroed(data: list[Sample], names: Sequence[str]) -> list[Sample]:
    """`data` with the columns of features `names` set to 0 (`--without`)."""
    columns = [FEATURES.index(name) for name in names]
    out = []
    for sample_names, rows, grades in data:
        rows = rows.copy()
        rows[:, columns] = 0.0
        out.append((sample_names, rows, grades))
    return out


def shipped_fits(sets: dict[str, list[Sample]]) -> dict[str, dict[str, list[float]]]:
    """The four fusion tables fitted on every set, as `fitted.json` holds them (3 places): the
    full fit and its head fit, then the fits with the second-query columns and with the view and
    second-query columns zeroed, cut to the features such a lane has (a zeroed column keeps
    weight 0, so the remaining weights are that smaller fit's)."""
    from iii_directory.search.ranking.fusion import FEATURES as BASE, VIEWED_FEATURES

    everything = [sample for data in sets.values() for sample in data]
    weights, head_weights = both_fits(everything)
    without_second = fit(zeroed(everything, FEATURES[len(VIEWED_FEATURES):]))
    without_views = fit(zeroed(everything, FEATURES[len(BASE):]))
    return {"fusion.WEIGHTS": {"values": _fitted_file.rounded(weights, 3)},
            "fusion.HEAD_WEIGHTS": {"values": _fitted_file.rounded(head_weights, 3)},
            "fusion.WEIGHTS_WITHOUT_SECOND": {
                "values": _fitted_file.rounded(without_second[:len(VIEWED_FEATURES)], 3)},
            "fusion.WEIGHTS_WITHOUT_VIEWS": {
                "values": _fitted_file.rounded(without_views[:len(BASE)], 3)}}


def print_weights(label: str, weights: np.ndarray, head_weights: np.ndarray) -> None:
    """The weights as `fusion.py` holds them, and one line per feature."""
    print(label + "WEIGHTS: tuple[float, ...] = (" + ", ".join(f"{w:.3f}" for w in weights) + ")")
    for name, weight in zip(FEATURES, weights):
        print(f"  {name:15s} {weight:+.3f}")
    print(label + "HEAD_WEIGHTS: tuple[float, ...] = ("
          + ", ".join(f"{w:.3f}" for w in head_weights) + ")")
    for name, weight in zip(HEAD_SCORED_FEATURES, head_weights):
        print(f"  {name:15s} {weight:+.3f}")

if __name__ == "__main__":
    main()
