"""The optional reranker stage of the hybrid lane (docs/rules/search.md §5.5.3). Off by default; none ships.

A reranker is anything with `score(query, passages) -> list[float]` (raw logits, higher = more
relevant). `CrossEncoder` loads one from a directory (`model.onnx` + `tokenizer.json`; pair
encoding of (capability, searchable text), max length 512, batches of 8, logits `[batch, 1]` or
`[batch]`). With a reranker, an admitted lane becomes:

5'. `retrieval = weighted_rrf(lexical, dense)`; the head = its first 24 ids;
6'. the head is scored (one 3 s budget for all lanes of the call); a lane's output is accepted
    only when it scores exactly the head ids once each, all finite; sorted by logit (ties by id),
    ids within 12 logits of the leader survive; `retrieval` is filtered to the survivors and
    fused with the reranked order;
7'. invalid, missing or timed-out output → that lane keeps the default hybrid result.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from .ranking.lanes import DENSE_DEPTH, Ranking, weighted_rrf

log = logging.getLogger(__name__)

RERANK_TIMEOUT_S = 3.0  # spec: docs/rules/search.md §5.5.3
LOGIT_WINDOW = 12.0  # spec: docs/rules/search.md §5.5.3
MAX_LENGTH = 512  # spec: docs/rules/search.md §5.5.3
BATCH = 8  # spec: docs/rules/search.md §5.5.3


class Reranker(Protocol):
    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One raw logit per passage (higher = more relevant)."""
        ...


def rerank_head(retrieval: Ranking) -> list[str]:
    """The ids the reranker scores: the first 24 of the fused retrieval ranking."""
    return [doc_id for doc_id, _ in retrieval[:DENSE_DEPTH]]


def apply_scores(retrieval: Ranking, head: Sequence[str], logits: Any) -> Ranking | None:
    """Steps 6'–7' for one lane: None when the output is not exactly one finite logit per head id
    (the caller keeps the default hybrid lane)."""
    if not isinstance(logits, (list, tuple)) or len(logits) != len(head):
        return None
    scored: list[tuple[str, float]] = []
    for doc_id, logit in zip(head, logits):
        if isinstance(logit, bool) or not isinstance(logit, (int, float)):
            return None
        value = float(logit)
        if not math.isfinite(value):
            return None
        scored.append((doc_id, value))
    scored.sort(key=lambda pair: (-pair[1], pair[0]))
    if not scored:
        return retrieval
    leader = scored[0][1]
    survivors = [(doc_id, logit) for doc_id, logit in scored if logit >= leader - LOGIT_WINDOW]
    keep = {doc_id for doc_id, _ in survivors}
    filtered = [(doc_id, score) for doc_id, score in retrieval if doc_id in keep]
    return weighted_rrf(filtered, survivors)


class CrossEncoder:
    """An ONNX cross-encoder loaded from `directory` (`model.onnx` + `tokenizer.json`)."""

    def __init__(self, directory: str | Path) -> None:
        import numpy as np
        import onnxruntime
        from tokenizers import Tokenizer

        root = Path(directory)
        self._np = np
        self._tokenizer = Tokenizer.from_file(str(root / "tokenizer.json"))
        self._tokenizer.enable_truncation(MAX_LENGTH)
        self._tokenizer.enable_padding()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 2
        self._session = onnxruntime.InferenceSession(
            str(root / "model.onnx"), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._lock = threading.Lock()

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        np = self._np
        logits: list[float] = []
        for start in range(0, len(passages), BATCH):
            pairs = [(query, passage) for passage in passages[start:start + BATCH]]
            encodings = self._tokenizer.encode_batch(pairs)
            feed = {
                "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
            }
            feed = {name: value for name, value in feed.items() if name in self._inputs}
            with self._lock:
                output = self._session.run(None, feed)[0]
            logits.extend(float(x) for x in np.asarray(output).reshape(len(pairs), -1)[:, 0])
        return logits


def load_reranker(path: str | None) -> Reranker | None:
    """The configured reranker, or None (off, or failed to load — logged)."""
    if not path:
        return None
    try:
        return CrossEncoder(path)
    except Exception as exc:  # noqa: BLE001 - the stage is optional
        log.warning("reranker at %s failed to load; continuing without it: %s", path, exc)
        return None
