from collections.abc import Hashable, Sequence
from typing import Any, TypeVar

from . import dense as dense
from . import static as static

_K = TypeVar("_K", bound=Hashable)

STOPWORDS: frozenset[str]
IMPLEMENTATION: str

def tokenize(text: str) -> list[str]: ...
def tokenize_query(text: str) -> list[str]: ...
def strip_json_keys(text: str) -> str: ...

class BM25Index:
    k1: float
    b: float
    avgdl: float
    def __init__(self, documents: Sequence[Sequence[str]], k1: float = 1.2, b: float = 0.75) -> None: ...
    def __len__(self) -> int: ...
    @property
    def vocabulary_size(self) -> int: ...
    def search(
        self, terms: Sequence[str], k: int | None = None, min_matched: int = 1
    ) -> list[tuple[int, float, int]]: ...

class BM25FIndex(BM25Index):
    # documents[i][f]: the terms of field f of document i; one weight (>= 0) and one b (0..1)
    # per field; tf~ = sum_f w_f*tf_f / (1 - b_f + b_f*len_f/avglen_f), then idf*tf~(k1+1)/(tf~+k1)
    field_weights: tuple[float, ...]
    field_b: tuple[float, ...]
    field_avgdl: tuple[float, ...]
    def __init__(
        self,
        documents: Sequence[Sequence[Sequence[str]]],
        weights: Sequence[float],
        b: Sequence[float],
        k1: float = 1.2,
    ) -> None: ...

def rrf(
    rankings: Sequence[Sequence[_K]], weights: Sequence[float] | None = None, k: float = 60
) -> list[tuple[_K, float]]: ...
def available() -> dict[str, Any]: ...
# keys: compiled, implementation, compiled_reason, dense (the `dense` extra loads), dense_reason,
# hnsw (hnswlib importable: the opt-in `hnsw` extra; without it VectorIndex stays exact)
