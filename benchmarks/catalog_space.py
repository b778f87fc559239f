"""A catalog-adapted MiniLM space, measured on the dense lane alone (issue 18).

    .venv/bin/python benchmarks/catalog_space.py [--eval-dir ../shared/eval] [--cache PATH] \
        [--no-adapter] [--base raw|centred ...]

Every ranking so far read MiniLM's raw cosines. Two transforms of that space are measured here:

* **The catalog's own geometry, label-free.** Sentence-embedding spaces are anisotropic (every
  text shares a large common component), so unrelated texts sit at cosines of .3–.4. With `μ`
  the mean of the catalog's document vectors and `P` the top `k` principal directions of the
  centred documents ("all-but-the-top"), `T(x) = unit((x − μ) − P P^T (x − μ))` is applied to
  documents and queries alike (`CatalogSpace`); it is computed per catalog from its documents
  only, so it transfers to any catalog by construction.
  Two more label-free readings are printed beside: a share (.25, .5, .75) of the mean removed,
  and the documents centred with the query left raw.
* **A learned query adapter**: `q' = unit(q + A q)`, `A` diagonal or `U V^T` of rank `r`
  (`Adapter`), fitted contrastively — softmax at temperature `tau` over the catalog's documents,
  the relevant functions (grade ≥ 2) as positives, loss `−log Σ_pos p`, plus `l2 ‖A‖²` (towards
  the identity) — by full-batch Adam (`fit_adapter`), in the raw space (`--base centred`: in the
  centred one). Its rank, L2 and temperature (`ADAPTER_GRID`) are chosen on the eval catalog
  alone, by two criteria (`CRITERIA`): leave one set out over dev, extra and extra2, and leave
  workers out (`leave_workers_out`: capabilities scored by an adapter never fitted towards their
  workers' functions) — summed first places. The chosen adapter is fitted on every eval-catalog
  set and scored on the held-out catalog, and fitted on the held-out catalog and scored on each
  eval-catalog set; every grid setting's transfer is printed too, never read by the choice.

Per set (dev, extra, extra2 over the eval catalog, the held-out catalog's cases) and variant it
prints, over the capabilities a grade-≥ 2 function covers, the dense ranking's recall@12 (share
of relevant functions in its first twelve, mean over capabilities) and first place (share whose
first function is relevant); and the separation of those *answerable* capabilities from the set's
no-match capabilities and from the property tests' 1,000 off-domain sentences over that catalog
(`tests/unit/search/unrelated_requests.py`, seed `issue-18-sentences`) — the AUC of the best
cosine and of the best cosine minus the background (`answerability.background`: the median
cosine of the dense top 64). Vectors of every text are embedded once and kept in `--cache`.
The eval `test` split is never read. Figures and verdict (measured, not kept): README, "A
catalog-adapted MiniLM space".
"""

from __future__ import annotations

import argparse
import pickle
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data"
TOP = 12
BACKGROUND_K = 64
TAU = 0.05
STEPS = 300
LEARNING_RATE = 0.01
SENTENCES = 1000
SENTENCE_SEED = "issue-18-sentences"


def unit(rows: np.ndarray) -> np.ndarray:
    """Each row scaled to length 1 (a zero row stays zero)."""
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    return rows / np.where(norms > 0, norms, 1.0)


@dataclass(frozen=True)
class CatalogSpace:
    """`T(x) = unit((x − mean) − (x − mean) Pᵀ P)`: the catalog's mean removed and its `k` top
    principal directions (rows of `directions`) projected out."""

    mean: np.ndarray
    directions: np.ndarray

    @classmethod
    def of(cls, documents: np.ndarray, k: int, share: float = 1.0) -> CatalogSpace:
        """The space of a catalog from its document vectors alone (no labels); `share` of the
        mean is removed (1: centred)."""
        mean = share * documents.mean(axis=0)
        centred = documents - mean
        if k == 0:
            return cls(mean, np.zeros((0, documents.shape[1]), dtype=documents.dtype))
        _, _, vt = np.linalg.svd(centred, full_matrices=False)
        return cls(mean, vt[:k])

    def __call__(self, vectors: np.ndarray) -> np.ndarray:
        centred = vectors - self.mean
        return unit(centred - (centred @ self.directions.T) @ self.directions)


def identity(vectors: np.ndarray) -> np.ndarray:
    return vectors


@dataclass
class Adapter:
    """`q' = unit(q + A q)`: `A = diag(scale)` (rank 0) or `U Vᵀ` (rank r)."""

    rank: int
    dimension: int
    scale: np.ndarray = field(init=False)
    u: np.ndarray = field(init=False)
    v: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        rng = np.random.default_rng(18)
        self.scale = np.zeros(self.dimension)
        self.u = np.zeros((self.dimension, self.rank))
        self.v = rng.normal(0.0, 1.0 / np.sqrt(self.dimension), (self.dimension, self.rank))

    def shifted(self, queries: np.ndarray) -> np.ndarray:
        """`q + A q` (before the renormalisation)."""
        if self.rank == 0:
            return queries * (1.0 + self.scale)
        return queries + (queries @ self.v) @ self.u.T

    def __call__(self, queries: np.ndarray) -> np.ndarray:
        return unit(self.shifted(queries))

    def parameters(self) -> list[np.ndarray]:
        return [self.scale] if self.rank == 0 else [self.u, self.v]

    def penalty_gradients(self) -> list[np.ndarray]:
        """Gradients of `‖A‖²_F`."""
        if self.rank == 0:
            return [2 * self.scale]
        a = self.u @ self.v.T
        return [2 * a @ self.v, 2 * a.T @ self.u]


@dataclass(frozen=True)
class Capability:
    """One graded capability: its query vector and the rows of its relevant functions."""

    vector: np.ndarray
    relevant: tuple[int, ...]


def adapter_loss(adapter: Adapter, documents: np.ndarray, capabilities: Sequence[Capability],
                 l2: float, tau: float = TAU) -> tuple[float, list[np.ndarray]]:
    """Mean of `−log Σ_relevant softmax(cos / tau)` plus `l2 ‖A‖²`, and its gradients."""
    queries = np.stack([c.vector for c in capabilities])
    shifted = adapter.shifted(queries)
    norms = np.linalg.norm(shifted, axis=1, keepdims=True)
    moved = shifted / norms
    logits = moved @ documents.T / tau
    logits -= logits.max(axis=1, keepdims=True)
    weights = np.exp(logits)
    every = weights / weights.sum(axis=1, keepdims=True)
    mask = np.zeros_like(every)
    for row, capability in enumerate(capabilities):
        mask[row, list(capability.relevant)] = 1.0
    positive = weights * mask
    positive_share = positive.sum(axis=1)
    loss = float(np.mean(np.log(weights.sum(axis=1)) - np.log(positive_share)))
    by_cosine = (every - positive / positive_share[:, None]) / tau / len(capabilities)
    by_moved = by_cosine @ documents
    by_shifted = (by_moved - moved * (by_moved * moved).sum(axis=1, keepdims=True)) / norms
    if adapter.rank == 0:
        grads = [(by_shifted * queries).sum(axis=0)]
    else:
        projected = queries @ adapter.v
        grads = [by_shifted.T @ projected, queries.T @ (by_shifted @ adapter.u)]
    penalty = sum(float((p ** 2).sum()) for p in ([adapter.scale] if adapter.rank == 0
                                                  else [adapter.u @ adapter.v.T]))
    grads = [g + l2 * p for g, p in zip(grads, adapter.penalty_gradients())]
    return loss + l2 * penalty, grads


def fit_adapter(parts: Sequence[tuple[np.ndarray, Sequence[Capability]]], rank: int, l2: float,
                steps: int = STEPS, tau: float = TAU) -> Adapter:
    """An adapter fitted by full-batch Adam over `(documents, capabilities)` parts (one per
    catalog-and-set; the loss is their mean weighted by capabilities)."""
    adapter = Adapter(rank, parts[0][0].shape[1])
    params = adapter.parameters()
    first = [np.zeros_like(p) for p in params]
    second = [np.zeros_like(p) for p in params]
    total = sum(len(caps) for _, caps in parts)
    for step in range(1, steps + 1):
        grads = [np.zeros_like(p) for p in params]
        for documents, capabilities in parts:
            _, part = adapter_loss(adapter, documents, capabilities, l2, tau)
            for g, p in zip(grads, part):
                g += p * len(capabilities) / total
        for p, g, m, s in zip(params, grads, first, second):
            m *= 0.9
            m += 0.1 * g
            s *= 0.999
            s += 0.001 * g * g
            p -= LEARNING_RATE * (m / (1 - 0.9 ** step)) / (np.sqrt(s / (1 - 0.999 ** step)) + 1e-8)
    return adapter


def ranking(documents: np.ndarray, ids: Sequence[str], vector: np.ndarray
            ) -> tuple[list[int], np.ndarray]:
    """Rows by cosine descending, then id ascending (as the dense lane ranks), and the cosines."""
    cosines = documents @ vector
    order = sorted(range(len(ids)), key=lambda i: (-float(cosines[i]), ids[i]))
    return order, cosines


def background(cosines: np.ndarray, order: Sequence[int]) -> float:
    """The median cosine of the dense top `BACKGROUND_K` (`answerability.background`)."""
    values = sorted(float(cosines[i]) for i in order[:BACKGROUND_K])
    return values[len(values) // 2]


def auc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """P(positive > negative), ties counting half."""
    if not positives or not negatives:
        return float("nan")
    pos = np.asarray(positives)[:, None]
    neg = np.asarray(negatives)[None, :]
    return float(((pos > neg).sum() + 0.5 * (pos == neg).sum()) / (pos.size * neg.size))


@dataclass(frozen=True)
class SetFigures:
    recall: float
    first: float
    auc_nomatch: float
    auc_offdomain: float
    auc_nomatch_margin: float
    auc_offdomain_margin: float


def best_and_margin(documents: np.ndarray, ids: Sequence[str], vector: np.ndarray
                    ) -> tuple[float, float]:
    order, cosines = ranking(documents, ids, vector)
    best = float(cosines[order[0]])
    return best, best - background(cosines, order)


def figures(documents: np.ndarray, ids: Sequence[str], graded: Sequence[tuple[np.ndarray, dict[str, int]]],
            nomatch: Sequence[np.ndarray], offdomain: Sequence[np.ndarray]) -> SetFigures:
    """One set's figures in one space (vectors already transformed, documents unit rows)."""
    recall, first, answerable = [], [], []
    for vector, grades in graded:
        order, cosines = ranking(documents, ids, vector)
        relevant = {n for n, g in grades.items() if g >= 2}
        top = {ids[i] for i in order[:TOP]}
        recall.append(len(relevant & top) / len(relevant))
        first.append(ids[order[0]] in relevant)
        answerable.append(best_and_margin(documents, ids, vector))
    refused = [best_and_margin(documents, ids, v) for v in nomatch]
    unrelated = [best_and_margin(documents, ids, v) for v in offdomain]
    return SetFigures(
        float(np.mean(recall)), float(np.mean(first)),
        auc([a for a, _ in answerable], [a for a, _ in refused]),
        auc([a for a, _ in answerable], [a for a, _ in unrelated]),
        auc([m for _, m in answerable], [m for _, m in refused]),
        auc([m for _, m in answerable], [m for _, m in unrelated]))


# -- data --------------------------------------------------------------------------------------


@dataclass
class Catalog:
    ids: list[str]
    vectors: np.ndarray
    offdomain: np.ndarray


@dataclass
class CaseSet:
    catalog: str
    graded: list[tuple[np.ndarray, dict[str, int]]]
    nomatch: list[np.ndarray]


class Embeddings:
    """Vectors of texts, embedded once and kept in a pickle keyed by text."""

    def __init__(self, path: Path, encode: Callable[[list[str]], Any] | None = None) -> None:
        self.path = path
        self.known: dict[str, np.ndarray] = (pickle.loads(path.read_bytes())
                                             if path.is_file() else {})
        self._encode = encode

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        missing = sorted({t for t in texts if t not in self.known})
        if missing:
            if self._encode is None:
                from _rank import dense

                encoder = dense.Encoder()
                self._encode = encoder.encode
            for start in range(0, len(missing), 64):
                chunk = missing[start:start + 64]
                for text, vector in zip(chunk, np.asarray(self._encode(chunk), dtype=np.float32)):
                    self.known[text] = vector
            self.path.write_bytes(pickle.dumps(self.known))
        return np.stack([self.known[t] for t in texts]) if texts else np.zeros((0, 384))


def offdomain_sentences(count: int = SENTENCES) -> list[str]:
    """The property tests' unrelated sentences, with their seed."""
    sys.path.insert(0, str(ROOT / "tests" / "unit" / "search"))
    from unrelated_requests import unrelated_sentence

    rng = random.Random(SENTENCE_SEED)
    return [unrelated_sentence(rng) for _ in range(count)]


def load(eval_dir: Path, embed: Embeddings) -> tuple[dict[str, Catalog], dict[str, CaseSet]]:
    """The two catalogs (documents, off-domain sentences) and the four tuning sets."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from case_sets import tuning_sets
    from fit_fusion import load_corpus

    from iii_directory.search.query import make_query

    sentences = [q.dense_text for q in map(make_query, offdomain_sentences()) if q is not None]
    catalogs: dict[str, Catalog] = {}
    sets: dict[str, CaseSet] = {}
    for name, (path, cases) in tuning_sets(eval_dir).items():
        key = "heldout" if name == "heldout" else "eval"
        if key not in catalogs:
            corpus = load_corpus(path)
            catalogs[key] = Catalog([t.name for t in corpus.tools],
                                    unit(embed([t.dense_text for t in corpus.tools])),
                                    unit(embed(sentences)))
        graded, nomatch = [], []
        for case in cases:
            for index, capability in enumerate(case["capabilities"]):
                query = make_query(capability)
                if query is None:
                    continue
                if case["kind"] == "no_match":
                    nomatch.append(query.dense_text)
                    continue
                grades = {q["function_id"]: q["grade"] for q in case["qrels"]
                          if index in q["covers"]}
                if any(g >= 2 for g in grades.values()):
                    graded.append((query.dense_text, grades))
        vectors = unit(embed([t for t, _ in graded])) if graded else np.zeros((0, 384))
        sets[name] = CaseSet(key, [(v, g) for v, (_, g) in zip(vectors, graded)],
                             list(unit(embed(nomatch))) if nomatch else [])
    return catalogs, sets


# -- the measurement ---------------------------------------------------------------------------

Transform = tuple[Callable[[np.ndarray], np.ndarray], Callable[[np.ndarray], np.ndarray]]
"""(documents → documents, queries → queries), both in one catalog's space."""


def score(catalog: Catalog, cases: CaseSet, transform: Transform) -> SetFigures:
    documents, queries = transform
    docs = unit(documents(catalog.vectors))
    move = (lambda rows: unit(queries(np.stack(rows))) if len(rows) else rows)
    graded = list(zip(move([v for v, _ in cases.graded]), [g for _, g in cases.graded]))
    return figures(docs, catalog.ids, graded, list(move(cases.nomatch)),
                   list(move(list(catalog.offdomain))))


def capabilities(catalog: Catalog, cases: CaseSet, space: Callable[[np.ndarray], np.ndarray]
                 ) -> tuple[np.ndarray, list[Capability]]:
    """An adapter's training part: the catalog's documents and the set's graded capabilities,
    both in `space`."""
    rows = {name: i for i, name in enumerate(catalog.ids)}
    docs = unit(space(catalog.vectors))
    caps = []
    for vector, grades in cases.graded:
        relevant = tuple(rows[n] for n, g in grades.items() if g >= 2 and n in rows)
        if relevant:
            caps.append(Capability(unit(space(vector[None, :]))[0], relevant))
    return docs, caps


def spaces(catalog: Catalog) -> dict[str, Callable[[np.ndarray], np.ndarray]]:
    """The label-free variants of one catalog."""
    out: dict[str, Callable[[np.ndarray], np.ndarray]] = {"raw": identity}
    for k in (0, 1, 2, 3):
        out["centred" if k == 0 else f"centred+abtt{k}"] = CatalogSpace.of(catalog.vectors, k)
    for share in (0.25, 0.5, 0.75):
        out[f"centred x{share}"] = CatalogSpace.of(catalog.vectors, 0, share)
    return out


def line(label: str, name: str, f: SetFigures) -> str:
    return (f"{label:24s} {name:8s} R@12 {f.recall:.3f}  first {f.first:.3f}  "
            f"AUC cos nomatch {f.auc_nomatch:.3f} offdomain {f.auc_offdomain:.3f}  "
            f"AUC margin nomatch {f.auc_nomatch_margin:.3f} offdomain {f.auc_offdomain_margin:.3f}")


Setting = tuple[int, float, float]
"""An adapter's rank (0: diagonal), L2 and softmax temperature."""

ADAPTER_GRID: tuple[Setting, ...] = tuple(
    (rank, l2, tau) for tau in (0.02, 0.05, 0.1) for rank in (0, 4, 16, 32) for l2 in (0.01, 0.1))
EVAL_SETS = ("dev", "extra", "extra2")
WORKER_FOLDS = 3


def adapted(base: Callable[[np.ndarray], np.ndarray], adapter: Adapter) -> Transform:
    """Documents in `base`; queries in `base`, then moved by `adapter`."""
    return base, lambda q: adapter(base(q))


def transferred(catalogs: dict[str, Catalog], sets: dict[str, CaseSet], base: str,
                setting: Setting) -> dict[str, SetFigures]:
    """Per set: the held-out catalog scored with the adapter fitted on every eval-catalog set,
    each eval-catalog set with the adapter fitted on the held-out catalog."""
    rank, l2, tau = setting
    eval_space = spaces(catalogs["eval"])[base]
    held_space = spaces(catalogs["heldout"])[base]
    forward = fit_adapter([capabilities(catalogs["eval"], sets[s], eval_space)
                           for s in EVAL_SETS], rank, l2, tau=tau)
    backward = fit_adapter([capabilities(catalogs["heldout"], sets["heldout"], held_space)],
                           rank, l2, tau=tau)
    out = {}
    for name, cases in sets.items():
        adapter, space = (forward, held_space) if name == "heldout" else (backward, eval_space)
        out[name] = score(catalogs[cases.catalog], cases, adapted(space, adapter))
    return out


def transfer_cells(figures_of: dict[str, SetFigures]) -> str:
    return "  ".join(f"{'eval->' if name == 'heldout' else 'heldout->'}{name} "
                     f"{got.first:.3f}/{got.recall:.3f}" for name, got in figures_of.items())


def leave_sets_out(catalogs: dict[str, Catalog], sets: dict[str, CaseSet], base: str,
                   setting: Setting, steps: int = STEPS) -> float:
    """First places summed over dev, extra and extra2, each scored with the adapter fitted on
    the other two (`steps` 0: no adapter, the baseline)."""
    rank, l2, tau = setting
    catalog = catalogs["eval"]
    space = spaces(catalog)[base]
    firsts = 0.0
    for left in EVAL_SETS:
        parts = [capabilities(catalog, sets[s], space) for s in EVAL_SETS if s != left]
        adapter = fit_adapter(parts, rank, l2, steps, tau)
        firsts += score(catalog, sets[left], adapted(space, adapter)).first * len(sets[left].graded)
    return firsts


def worker(function_id: str) -> str:
    return function_id.split("::", 1)[0]


def leave_workers_out(catalogs: dict[str, Catalog], sets: dict[str, CaseSet], base: str,
                      setting: Setting, steps: int = STEPS) -> float:
    """First places over the eval catalog's capabilities (dev, extra, extra2 pooled) when the
    adapter never saw a capability served by the same workers: the catalog's workers (sorted)
    dealt into `WORKER_FOLDS` folds; a fold's capabilities (a relevant function of one of its
    workers) are scored with the adapter fitted on the capabilities with none — functions the
    adapter was not fitted towards, as in a catalog it was not fitted on. A capability served by
    workers of several folds is scored in each. `steps` 0: no adapter, the baseline."""
    rank, l2, tau = setting
    catalog = catalogs["eval"]
    space = spaces(catalog)[base]
    workers = sorted({worker(i) for i in catalog.ids})
    fold_of = {w: n % WORKER_FOLDS for n, w in enumerate(workers)}
    pooled = [g for s in EVAL_SETS for g in sets[s].graded]
    firsts = 0.0
    for fold in range(WORKER_FOLDS):
        inside = [g for g in pooled
                  if any(fold_of.get(worker(n)) == fold for n, v in g[1].items() if v >= 2)]
        outside = [g for g in pooled if all(fold_of.get(worker(n)) != fold
                                            for n, v in g[1].items() if v >= 2)]
        adapter = fit_adapter([capabilities(catalog, CaseSet("eval", outside, []), space)],
                              rank, l2, steps, tau)
        firsts += score(catalog, CaseSet("eval", inside, []),
                        adapted(space, adapter)).first * len(inside)
    return firsts


Criterion = Callable[[dict[str, Catalog], dict[str, CaseSet], str, Setting, int], float]
CRITERIA: dict[str, Criterion] = {"sets": leave_sets_out, "workers": leave_workers_out}


def choose_adapters(catalogs: dict[str, Catalog], sets: dict[str, CaseSet], base: str
                    ) -> dict[str, Setting]:
    """Per criterion (`CRITERIA`, eval catalog only), the setting of `ADAPTER_GRID` with the most
    left-out first places (then the larger L2, the smaller rank, the temperature nearest
    `TAU`). Each setting's transfer is printed beside, never read by the choice."""
    results: dict[str, list[tuple[float, float, int, float, Setting]]] = {c: [] for c in CRITERIA}
    print(f"  no adapter on {base}: left-out first places " + ", ".join(
        f"{name} {criterion(catalogs, sets, base, (0, 0.0, TAU), 0):.0f}"
        for name, criterion in CRITERIA.items()))
    for setting in ADAPTER_GRID:
        rank, l2, tau = setting
        cells = []
        for name, criterion in CRITERIA.items():
            firsts = criterion(catalogs, sets, base, setting)
            results[name].append((firsts, l2, -rank, -abs(tau - TAU), setting))
            cells.append(f"{name} {firsts:.0f}")
        print(f"  adapter on {base}: rank {rank:2d} l2 {l2:<4} tau {tau:<4}  left-out first places "
              + ", ".join(cells) + "  (transfer, not read by the choice: "
              + transfer_cells(transferred(catalogs, sets, base, setting)) + ")", flush=True)
    return {name: max(rows)[-1] for name, rows in results.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval-dir", type=Path, default=ROOT.parent / "shared" / "eval")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/catalog_space_vectors.pkl"))
    parser.add_argument("--no-adapter", action="store_true")
    parser.add_argument("--base", action="append", choices=("raw", "centred"),
                        help="spaces the adapter is fitted in (default: raw)")
    args = parser.parse_args()
    catalogs, sets = load(args.eval_dir, Embeddings(args.cache))
    for name, cases in sets.items():
        print(f"{name}: {len(cases.graded)} answerable, {len(cases.nomatch)} no-match capabilities")
    for label in spaces(catalogs["eval"]):
        for name, cases in sets.items():
            space = spaces(catalogs[cases.catalog])[label]
            print(line(label, name, score(catalogs[cases.catalog], cases, (space, space))),
                  flush=True)
    for name, cases in sets.items():
        space = spaces(catalogs[cases.catalog])["centred"]
        print(line("documents centred", name, score(catalogs[cases.catalog], cases,
                                                    (space, identity))), flush=True)
    if args.no_adapter:
        return
    for base in args.base or ["raw"]:
        for criterion, setting in choose_adapters(catalogs, sets, base).items():
            rank, l2, tau = setting
            label = f"{base}+adapter r{rank} l2 {l2} tau {tau}"
            print(f"chosen by leave-{criterion}-out: {label}")
            for name, got in transferred(catalogs, sets, base, setting).items():
                print(line(label, name, got) + ("  [fitted on eval sets]" if name == "heldout"
                                               else "  [fitted on heldout]"), flush=True)


if __name__ == "__main__":
    main()
