"""Static-table variants measured at lane level and through the pipeline (issue 19): for each
recipe variant of `build_static_table.py`, the static lane alone (recall@12 and first hit
relevant of the static ranking, per capability) and `--mode static` through the bench
(recall@12 / MRR@1 / no-match false-positive rate), plus answered chatter and near misses.

    .venv/bin/python benchmarks/static_table_variants.py [--raw /tmp/raw.npy] [--variant NAME ...]
        [--set dev --set heldout ...]

The piece vectors (step 1 of the recipe, the only slow step) are computed once and cached in
`--raw`; every variant then rebuilds steps 2-4 from them in memory, and the pipeline runs with
that table in place of the packaged one (`_rank.static._default`). The `shipped` variant is the
recipe as it is and must reproduce the pinned digest. Never `test`. The pipeline's static
constants (alone cosine, expansion cosine, the static answerability family) were fitted on the
shipped table's cosines: the lane-level figures compare tables, the pipeline figures show what
a table does to the tree as it is.

Variants: the recipe's knobs (PCA width or none, SIF `a`, rows normalised before / after PCA);
`context-w*`, per-piece contextual averaging over the standard library's docstrings;
`mapped-*`, the shipped rows times a ridge-fitted map onto MiniLM's sentence embeddings of
those docstrings (the `dense` extra computes them once, cached like the piece vectors);
`learned-l*-a*[-site]`, rows fitted so that sentences predict MiniLM's embeddings
(`static_table_learned.py`; λ, SIF `a`, `-site` adds the venv's docstrings to the corpus). Their
cosines are on another scale than the shipped table's: judge them whole with
`static_table_refit.py`, which refits the pipeline's static constants on them.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import build_static_table as recipe  # noqa: E402
import static_table_learned as learned  # noqa: E402
from case_sets import relevant_functions  # noqa: E402
from static_failures import ROOT, Recorder  # noqa: E402
from static_variants import all_sets, pipeline_row  # noqa: E402

from _rank import _assets, static  # noqa: E402
from iii_directory import bench  # noqa: E402

Variant = Callable[[np.ndarray, list[str]], bytes]


def table(rows: np.ndarray, pieces: list[str], *, a: float = recipe.SIF_A,
          dims: int | None = recipe.DIMS, normalise: str = "none") -> bytes:
    """Steps 2-4 of the recipe with its knobs: `dims` None keeps all 384 (centred, no
    projection); `normalise` "before" / "after" L2-normalises rows before / after PCA."""
    x = rows.astype(np.float64)
    if normalise == "before":
        x = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    projected = recipe.pca(x, dims) if dims is not None else x - x.mean(axis=0)
    if normalise == "after":
        projected = projected / np.maximum(np.linalg.norm(projected, axis=1, keepdims=True), 1e-12)
    weighted = projected * recipe.sif_weights(pieces, a)[:, None]
    q, scales = recipe.quantise(weighted)
    return recipe.encode_table(q, scales, recipe.FLAG_WEIGHTED | recipe.FLAG_CENTRED)


VARIANTS: dict[str, Variant] = {
    "shipped": lambda rows, pieces: table(rows, pieces),
    "nopca384": lambda rows, pieces: table(rows, pieces, dims=None),
    "pca128": lambda rows, pieces: table(rows, pieces, dims=128),
    "a3e-4": lambda rows, pieces: table(rows, pieces, a=3e-4),
    "a3e-3": lambda rows, pieces: table(rows, pieces, a=3e-3),
    "norm-before": lambda rows, pieces: table(rows, pieces, normalise="before"),
    "norm-after": lambda rows, pieces: table(rows, pieces, normalise="after"),
    "nopca384-norm": lambda rows, pieces: table(rows, pieces, dims=None, normalise="after"),
}


def raw_rows(path: Path, pieces: list[str]) -> np.ndarray:
    if path.is_file():
        return np.load(path)
    rows = recipe.piece_vectors(pieces)
    np.save(path, rows)
    return rows


def lane_scores(cases: list[dict[str, Any]], seen: dict[str, dict[str, Any]]) -> tuple[float, float, int]:
    """Static ranking alone, per capability with a relevant function (grade ≥ 2): mean
    recall@12, share whose first hit is relevant, capability count."""
    recall, first, count = 0.0, 0, 0
    for case in cases:
        for index, text in enumerate(case["capabilities"]):
            relevant = relevant_functions(case, index)
            if not relevant:
                continue
            ranking = seen.get(text, {}).get("static", [])
            count += 1
            recall += len(relevant & set(ranking[:12])) / len(relevant)
            first += bool(ranking) and ranking[0] in relevant
    return recall / max(count, 1), first / max(count, 1), count


def measure(name: str, blob: bytes, sets: list[Any], recorder: Recorder) -> str:
    static._default = static.StaticEncoder(static.StaticTable(blob, source=name))

    def lane(cases: list[dict[str, Any]]) -> str:
        recall, first, _ = lane_scores(cases, recorder.seen)
        recorder.seen.clear()
        return f"{recall:.3f}/{first:.3f}"

    recorder.seen.clear()
    return f"{name:14} {len(blob) / 1e6:5.1f}MB  " + pipeline_row(sets, "static", lane)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval-dir", type=Path, default=ROOT.parent / "shared" / "eval")
    parser.add_argument("--raw", type=Path, default=Path("/tmp/static-piece-vectors.npy"))
    parser.add_argument("--variant", action="append")
    parser.add_argument("--set", action="append")
    args = parser.parse_args()
    pieces = recipe.vocabulary()
    rows = raw_rows(args.raw, pieces)
    sets = [s for s in all_sets(args.eval_dir) if not args.set or s[0] in args.set]
    recorder = Recorder()
    recorder.install()
    for name in args.variant or list(VARIANTS):
        started = time.perf_counter()
        blob = VARIANTS[name](rows, pieces)
        digest = hashlib.sha256(blob).hexdigest()
        if name == "shipped" and digest != _assets.STATIC_TABLE_SHA256:
            print(f"shipped recipe differs from the pinned digest: {digest}", file=sys.stderr)
        print(measure(name, blob, sets, recorder), f"({time.perf_counter() - started:.0f} s)",
              flush=True)


# --------------------------------------------------------------------------- contextual variant
# Per-piece contextual averaging over a text corpus that is not an eval catalog: the Python
# standard library's docstrings (technical English about files, mail, HTTP, dates, processes).


def docstring_corpus(limit: int = 40_000) -> list[str]:
    """Sentences of 5-60 words from the standard library's docstrings (tests excluded), in a
    stable order: sorted by their SHA-1, the first `limit`."""
    found = learned.docstrings(learned.STDLIB, learned.STDLIB_SKIP, shortest=5)
    ordered = sorted(found, key=lambda s: hashlib.sha1(s.encode()).hexdigest())
    return ordered[:limit]


def contextual_sums(texts: list[str], rows: int, max_pieces: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """(sums (rows, 384), counts (rows,)): each text through the model once, the output at every
    piece's position added to that piece's sum."""
    import onnxruntime as ort

    from _rank.dense import _packaged_model

    tokenizer = static.WordPiece.load()
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(str(_packaged_model()), sess_options=options,
                                   providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}
    sums = np.zeros((rows, _assets.DIMENSION), dtype=np.float64)
    counts = np.zeros(rows, dtype=np.int64)
    encoded = sorted((tokenizer.ids(t)[:max_pieces] for t in texts), key=len)
    for start in range(0, len(encoded), 64):
        batch = [ids for ids in encoded[start:start + 64] if ids]
        if not batch:
            continue
        width = max(len(ids) for ids in batch) + 2
        input_ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros_like(input_ids)
        for i, ids in enumerate(batch):
            input_ids[i, :len(ids) + 2] = [101, *ids, 102]
            mask[i, :len(ids) + 2] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in names:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        (hidden,) = session.run(["last_hidden_state"], feeds)
        for i, ids in enumerate(batch):
            np.add.at(sums, np.asarray(ids), hidden[i, 1:len(ids) + 1].astype(np.float64))
            np.add.at(counts, np.asarray(ids), 1)
    return sums, counts


def contextual_rows(rows: np.ndarray, cache: Path, isolated_weight: float) -> np.ndarray:
    """Each seen piece's row: `(isolated_weight · isolated + Σ contextual) / (isolated_weight + n)`."""
    if cache.is_file():
        loaded = np.load(cache)
        sums, counts = loaded["sums"], loaded["counts"]
    else:
        sums, counts = contextual_sums(docstring_corpus(), rows.shape[0])
        np.savez(cache, sums=sums, counts=counts)
    out = (isolated_weight * rows.astype(np.float64) + sums) / (isolated_weight + counts)[:, None]
    return out.astype(np.float32)


CONTEXT_CACHE = Path("/tmp/static-contextual-sums.npz")
for _weight in (1.0, 4.0, 16.0):
    VARIANTS[f"context-w{_weight:g}"] = (
        lambda rows, pieces, w=_weight: table(contextual_rows(rows, CONTEXT_CACHE, w), pieces))


# --------------------------------------------------------------------------- mapped variant
# A linear map fitted so that the static sentence vector of a corpus text points where MiniLM's
# sentence embedding of it does (least squares, ridge `lam`); since a text's vector is the sum of
# its pieces' rows, mapping every row by `W` maps the sentence vector by `W`. Same corpus as the
# contextual variant (the standard library's docstrings, no eval text).

MINILM_CACHE = Path("/tmp/static-minilm-corpus.npy")


def minilm_corpus(texts: list[str]) -> np.ndarray:
    """MiniLM sentence embeddings of `texts` (cached in `MINILM_CACHE`)."""
    return learned.teacher(texts, cache=MINILM_CACHE)


def mapped_table(rows: np.ndarray, pieces: list[str], lam: float, dims: int | None = None,
                 centre: bool = False, blend: float = 0.0) -> bytes:
    """The shipped rows (PCA 256 × SIF) mapped by the ridge fit `W` (256 → 384), then PCA to
    `dims` when given; `centre` fits to the embeddings minus their corpus mean; `blend` > 0
    keeps the shipped rows and appends the mapped ones (PCA to `dims`) at that relative norm."""
    base = recipe.pca(rows) * recipe.sif_weights(pieces)[:, None]
    texts = docstring_corpus()
    target = minilm_corpus(texts).astype(np.float64)
    if centre:
        target = target - target.mean(axis=0)
    tokenizer = static.WordPiece.load()
    x = np.stack([base[tokenizer.ids(t)].sum(axis=0) if tokenizer.ids(t) else np.zeros(base.shape[1])
                  for t in texts])
    x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    w = np.linalg.solve(x.T @ x + lam * np.eye(x.shape[1]), x.T @ target)
    mapped = base @ w
    if blend:
        # the shipped rows beside the mapped ones (PCA to `dims`), scaled to the same median norm
        # times `blend`: a text's cosine mixes both spaces
        mapped = recipe.pca(mapped, dims)
        mapped[[i for i, piece in enumerate(pieces) if recipe.is_special(piece)]] = 0.0
        norm = lambda m: float(np.median(np.linalg.norm(m[recipe.FIRST_WORD_ID:], axis=1)))
        mapped = np.hstack([base, mapped * (blend * norm(base) / norm(mapped))])
        q, scales = recipe.quantise(mapped)
        return recipe.encode_table(q, scales, recipe.FLAG_WEIGHTED | recipe.FLAG_CENTRED)
    if dims is not None:
        mapped = recipe.pca(mapped, dims) + 0.0
        mapped[[i for i, piece in enumerate(pieces) if recipe.is_special(piece)]] = 0.0
    q, scales = recipe.quantise(mapped)
    return recipe.encode_table(q, scales, recipe.FLAG_WEIGHTED | recipe.FLAG_CENTRED)


for _lam in (0.1, 1.0, 10.0):
    VARIANTS[f"mapped-l{_lam:g}"] = lambda rows, pieces, lam=_lam: mapped_table(rows, pieces, lam)
VARIANTS["mapped-l1-pca256"] = lambda rows, pieces: mapped_table(rows, pieces, 1.0, 256)
VARIANTS["mapped-centred-l1"] = lambda rows, pieces: mapped_table(rows, pieces, 1.0, centre=True)
for _blend in (0.5, 1.0):
    VARIANTS[f"blend{_blend:g}-mapped64"] = (
        lambda rows, pieces, b=_blend: mapped_table(rows, pieces, 1.0, 64, blend=b))



# --------------------------------------------------------------------------- learned variant
# The rows themselves fitted so that a sentence's SIF-weighted mean predicts MiniLM's embedding
# of it (`static_table_learned.py`: ridge-mapped prior, then the rows; λ the pull to the prior).


SITE_PACKAGES = Path(__import__("sysconfig").get_paths()["purelib"])
for _lam, _a in ((0.1, 3e-3), (0.3, 3e-3), (1.0, 3e-3), (0.3, 1e-3), (3.0, 1e-3)):
    VARIANTS[f"learned-l{_lam:g}-a{_a:g}"] = (
        lambda rows, pieces, lam=_lam, a=_a: learned.learned_table(rows, pieces, lam, a))
    VARIANTS[f"learned-l{_lam:g}-a{_a:g}-site"] = (
        lambda rows, pieces, lam=_lam, a=_a: learned.learned_table(rows, pieces, lam, a,
                                                                   site_packages=SITE_PACKAGES))


if __name__ == "__main__":
    sys.exit(main())
