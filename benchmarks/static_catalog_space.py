"""A catalog-adapted static space (issue 19): the static lane alone with the word-piece weights
and the vector space adapted to each catalog, label-free.

    .venv/bin/python benchmarks/static_catalog_space.py [--variant NAME ...] [--eval-dir ../shared/eval]

For each variant, per set (eval `dev`, `extra`, `extra2`, the held-out catalog; never `test`):
the static ranking alone — recall@12 and first hit relevant per capability with a relevant
function (grade ≥ 2), as `static_table_variants.lane_scores` — and the separation of answerable
from no-match by the best cosine: the AUC (ties count ½) of the best cosine of a capability
with a relevant function against that of a no-match case's capability; `nm` beside the eval
catalog's sets is the same AUC against 200 seeded near misses (`static_variants`' seeds).

Everything a variant adds is computed from the catalog's documents only (`Tool.dense_text`),
never from requests or labels, so it transfers by construction:

* **catalog IDF** — each piece's document frequency `df` over the catalog's documents,
  `idf = ln(1 + (N − df + 0.5) / (df + 0.5))` (BM25's); a text's vector is
  `Σ_t row(t) · g(idf_t)` (the row carries its SIF weight already), on the document side and the
  query side alike. `g`: `idf^α` (`idf1`, `idf0.5`), or `min(1, idf / median idf)` over the
  catalog's distinct pieces (`idfmed`: only pieces more common than the median lose weight;
  `idfmed0.5` its square root).
  A request piece no document holds has `df` 0, the highest idf.
* **centring** — the catalog's mean unit document vector `μ` subtracted from every document and
  query vector, then renormalised (`centre`; `centre0.5` subtracts `0.5 μ`); `abtt1` / `abtt2` also remove the projections on
  the first 1 / 2 principal directions of the centred document vectors ("all but the top").

`--pipeline SHIFT` (`centre`, `centre0.5`, `abtt1` …) runs `--mode static` through the bench's
pipeline instead (`static_variants.pipeline_row`: R@12 / MRR@1 / no-match FP per set, chatter
and near misses answered) with the static ranking *ordered* by the catalog-shifted cosine while
every hit keeps its raw cosine, which the gates, the learned fusion and the answerability
decision read (the shifted cosine separates no-match requests worse). A probe with the tree's
constants, no refit; `--pipeline none` is the tree.

Numpy here (measurement only); a kept variant would run in `_rank.static` without it.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from case_sets import relevant_functions  # noqa: E402
from catalog_space import CatalogSpace, unit  # noqa: E402
from catalog_space import auc as _auc  # noqa: E402
from static_failures import ROOT  # noqa: E402

from _rank import static  # noqa: E402
from iii_directory.search.corpus import Corpus  # noqa: E402
from iii_directory.search.query import make_query  # noqa: E402


def bm25_idf(df: np.ndarray, n: int) -> np.ndarray:
    """`ln(1 + (N − df + 0.5) / (df + 0.5))` per piece (BM25's idf, never negative)."""
    return np.log1p((n - df + 0.5) / (df + 0.5))


def document_frequency(docs: Sequence[Sequence[int]], rows: int) -> np.ndarray:
    """How many documents hold each piece (a piece counted once per document)."""
    df = np.zeros(rows, dtype=np.float64)
    for ids in docs:
        for piece in set(ids):
            df[piece] += 1
    return df


def piece_weights(docs: Sequence[Sequence[int]], rows: int, kind: str) -> np.ndarray | None:
    """`g(idf)` per piece for weighting `kind` (`none`, `idf1`, `idf0.5`, `idfmed`); None for none."""
    if kind in ("none", ""):
        return None
    df = document_frequency(docs, rows)
    idf = bm25_idf(df, len(docs))
    if kind.startswith("idfmed"):
        median = float(np.median(idf[df > 0]))
        return np.minimum(1.0, idf / median) ** float(kind[6:] or 1)
    if kind.startswith("idf"):
        return idf ** float(kind[3:])
    raise ValueError(f"unknown weighting {kind!r}")


def vectors(table: np.ndarray, texts: Sequence[Sequence[int]], weights: np.ndarray | None) -> np.ndarray:
    """Unit vectors: `Σ_t row(t) · w(t)` per text, L2-normalised (zero when empty)."""
    out = np.zeros((len(texts), table.shape[1]), dtype=np.float64)
    for i, ids in enumerate(texts):
        if not ids:
            continue
        pieces = np.asarray(ids)
        rows = table[pieces]
        out[i] = (rows * weights[pieces][:, None]).sum(axis=0) if weights is not None else rows.sum(axis=0)
    return normalised(out)


normalised = unit
"""Rows scaled to length 1, zero rows staying zero (`catalog_space.unit`)."""


@dataclass(frozen=True)
class Space:
    """What a catalog's documents give a variant: the piece weights, the mean `mean` and the
    principal directions `top` (rows) removed from every vector."""

    weights: np.ndarray | None
    mean: np.ndarray | None
    top: np.ndarray | None

    def apply(self, m: np.ndarray) -> np.ndarray:
        """`catalog_space.CatalogSpace` with this mean and these directions; `m` itself when
        nothing is removed."""
        if self.mean is None:
            return m
        top = self.top if self.top is not None else np.zeros((0, m.shape[1]), dtype=m.dtype)
        return CatalogSpace(self.mean, top)(m)


def fit_space(table: np.ndarray, docs: Sequence[Sequence[int]], variant: str) -> Space:
    """`variant` is `weighting[+centre|+centreF|+abtt1|+abtt2]` (module docstring)."""
    weighting, _, shift = variant.partition("+")
    weights = piece_weights(docs, table.shape[0], weighting)
    shifted = shifted_space(vectors(table, docs, weights), shift or "none")
    return Space(weights, shifted.mean, shifted.top)


def shifted_space(unit_documents: np.ndarray, shift: str) -> Space:
    """Centring (`centre`, `centreF`: `F` times the mean) or all-but-the-top (`abttK`: the mean
    and the first `K` principal directions) of unit document vectors; `none` changes nothing."""
    if shift == "none":
        return Space(None, None, None)
    if shift.startswith("abtt"):
        space = CatalogSpace.of(unit_documents, int(shift[4:]))
        return Space(None, space.mean, space.directions)
    if shift.startswith("centre"):
        return Space(None, CatalogSpace.of(unit_documents, 0, float(shift[6:] or 1)).mean, None)
    raise ValueError(f"unknown shift {shift!r}")


def auc(positives: Iterable[float], negatives: Iterable[float]) -> float | None:
    """`catalog_space.auc` (P(a positive's score > a negative's), ties ½); None when a side is
    empty, which this script prints as a blank."""
    value = _auc(list(positives), list(negatives))
    return None if math.isnan(value) else value


@dataclass
class CaseSet:
    name: str
    corpus: Corpus
    cases: list[dict[str, Any]]
    nearmiss: list[str]


def load_sets(eval_dir: Path, names: Sequence[str]) -> list[CaseSet]:
    """dev / extra / extra2 over the eval catalog (with the seeded near misses) and the held-out
    catalog's cases (no near misses: they are written against the eval catalog)."""
    from case_sets import tuning_sets
    from fit_answerability_nearmiss import nearmiss
    from fit_fusion import load_corpus
    from static_variants import negatives

    available = tuning_sets(eval_dir)
    misses = [c["capabilities"][0] for c in negatives("nearmiss", nearmiss)]
    corpora: dict[Path, Corpus] = {}
    out = []
    for name in names:
        if name not in available:
            raise ValueError(f"unknown set {name!r}")
        path, cases = available[name]
        if path not in corpora:
            corpora[path] = load_corpus(path)
        out.append(CaseSet(name, corpora[path], cases, [] if name == "heldout" else misses))
    return out


def query_text(capability: str) -> str | None:
    """What the static lane encodes for a capability (`Query.dense_text`), None when no lane."""
    query = make_query(capability)
    return None if query is None else query.dense_text


def measure(table: np.ndarray, tokenizer: static.WordPiece, case_set: CaseSet,
            variant: str) -> dict[str, float | None]:
    """recall@12, first hit relevant, AUC against no-match cases and against near misses."""
    ids, texts = case_set.corpus.index_inputs()
    docs = [tokenizer.ids(t) for t in texts]
    space = fit_space(table, docs, variant)
    d = space.apply(vectors(table, docs, space.weights))

    def ranked(text: str) -> tuple[list[str], float]:
        q = space.apply(vectors(table, [tokenizer.ids(text)], space.weights))[0]
        scores = d @ q
        order = sorted(range(len(ids)), key=lambda i: (-scores[i], i))[:12]
        return [ids[i] for i in order], float(scores[order[0]])

    recall = first = count = 0.0
    answerable: list[float] = []
    no_match: list[float] = []
    for case in case_set.cases:
        for index, capability in enumerate(case["capabilities"]):
            text = query_text(capability)
            if text is None:
                continue
            top, best = ranked(text)
            if case["kind"] == "no_match":
                no_match.append(best)
                continue
            relevant = relevant_functions(case, index)
            if not relevant:
                continue
            count += 1
            recall += len(relevant & set(top)) / len(relevant)
            first += top[0] in relevant
            answerable.append(best)
    misses = [ranked(t)[1] for t in (query_text(c) for c in case_set.nearmiss) if t is not None]
    return {"recall": recall / max(count, 1), "first": first / max(count, 1),
            "auc": auc(answerable, no_match), "auc_nm": auc(answerable, misses)}


VARIANTS = ("none", "idf1", "idf0.5", "idfmed", "none+centre", "none+abtt1", "none+abtt2",
            "idf1+centre", "idf0.5+centre", "idfmed+centre", "idf0.5+abtt1", "idfmed+abtt1",
            "idfmed0.5", "idf0.25", "none+centre0.25", "none+centre0.5", "none+centre0.75",
            "idfmed0.5+centre0.5")
SETS = ("dev", "extra", "extra2", "heldout")


def dequantised(table: static.StaticTable) -> np.ndarray:
    data = np.frombuffer(table.data.tobytes(), dtype=np.int8).reshape(table.rows, table.dims)
    return data.astype(np.float64) * np.asarray(table.scales, dtype=np.float64)[:, None]


def row_text(variant: str, figures: dict[str, dict[str, float | None]]) -> str:
    def f(value: float | None) -> str:
        return "  –  " if value is None else f"{value:.3f}"

    cells = []
    for name, m in figures.items():
        nm = f" nm {f(m['auc_nm'])}" if m["auc_nm"] is not None else ""
        cells.append(f"{name} {f(m['recall'])}/{f(m['first'])} auc {f(m['auc'])}{nm}")
    return f"{variant:15} " + "  ".join(cells)


class ShiftedIndex:
    """A built `StaticIndex` whose `search(query, k)` orders rows by the shifted cosine
    (`shifted_space(…, shift)` of its unit vectors) and gives each row its raw cosine."""

    def __init__(self, index: Any, shift: str) -> None:
        self.index = index
        raw = np.asarray(index._matrix, dtype=np.float64).reshape(len(index), index.dim)
        self.space = shifted_space(raw, shift)
        self.shifted = self.space.apply(raw)

    def __len__(self) -> int:
        return len(self.index)

    def search(self, query: Sequence[float], k: int) -> list[tuple[int, float]]:
        cosine = dict(self.index.search(query, len(self.index)))
        q = np.asarray(query, dtype=np.float64)
        if not q.any():
            return sorted(cosine.items(), key=lambda hit: (-hit[1], hit[0]))[:k]
        scores = self.shifted @ self.space.apply(q[None, :])[0]
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:k]
        return [(row, cosine[row]) for row in order]


def install_shifted_order(shift: str) -> None:
    """Patch `StaticLane._build` so that the lane's index is a `ShiftedIndex`."""
    from iii_directory.search.static_lane import StaticLane

    build = StaticLane._build

    def shifted_build(self: StaticLane, corpus: Any) -> Any:
        fingerprint, ids, index, words = build(self, corpus)
        return fingerprint, ids, ShiftedIndex(index, shift), words

    StaticLane._build = shifted_build  # type: ignore[method-assign]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval-dir", type=Path, default=ROOT.parent / "shared" / "eval")
    parser.add_argument("--variant", action="append")
    parser.add_argument("--set", action="append")
    parser.add_argument("--pipeline", help="a shift (centre, centre0.5, abtt1, none) through the bench")
    args = parser.parse_args(argv)
    if args.pipeline:
        from static_variants import all_sets, pipeline_row

        if args.pipeline != "none":
            install_shifted_order(args.pipeline)
        chosen = [s for s in all_sets(args.eval_dir) if not args.set or s[0] in args.set]
        print(f"pipeline {args.pipeline}: " + pipeline_row(chosen, "static"), flush=True)
        return 0
    encoder = static.default_encoder()
    table = dequantised(encoder.table)
    sets = load_sets(args.eval_dir, args.set or SETS)
    for variant in args.variant or VARIANTS:
        figures = {s.name: measure(table, encoder.tokenizer, s, variant) for s in sets}
        print(row_text(variant, figures), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
