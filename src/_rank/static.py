"""Static lane: word-piece embeddings distilled from all-MiniLM-L6-v2, for every target.

No numpy, no onnxruntime: the table ships in the base package and is read into flat buffers.

* `StaticTable.load()` maps `data/static/minilm-static-256.bin` read-only (built by
  `benchmarks/build_static_table.py`) after checking its SHA-256 against the pinned digest
  (streamed, so only the rows a worker looks up become resident), and checks its header: magic `b"RANKSTAT"`, `u32 version` (1), `u32 rows`, `u32 dims`, `u32 flags`, then
  `rows × dims` int8 values and `rows` float32 scales, all little-endian. Row `i` is
  `int8 row · scale[i]`, the piece's MiniLM output (PCA to 256 dims) times its Zipf/SIF weight.
* `WordPiece` tokenizes as the vendored `tokenizer.json` does with `tokenizers` (BERT
  normalisation: control characters removed, whitespace to spaces, CJK ideographs set apart,
  accents stripped, lower-casing; BERT pre-tokenisation: split on whitespace, punctuation as
  single tokens; WordPiece: greedy longest match first with `##` continuations, `[UNK]` for a
  word with no split or longer than 100 characters).
* `StaticEncoder.encode(texts)`: per text, the L2-normalised sum of its pieces' rows (the
  weighted mean up to a factor) as `array.array("f")` of 256 values; a text with no known
  piece gives the zero vector.
* `StaticIndex`: unit vectors stored flat; `search(query, k)` → `(row, cosine)` best first,
  ties by row.

The kernels (`encode_ids`, `cosine_top`) are compiled in `_rank._static` and exist in plain
Python in `_rank._static_reference`; `RANK_IMPLEMENTATION` picks one as for the BM25 core.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import mmap
import os
import re
import struct
import sys
import threading
import unicodedata
from array import array
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from types import ModuleType

from . import _static_reference
from ._assets import (
    STATIC_TABLE_SHA256,
    STATIC_TABLE_SIZE,
    TOKENIZER_SHA256,
    TOKENIZER_SIZE,
    VOCAB_SHA256,
    VOCAB_SIZE,
    sha256_file,
    static_table_path,
    tokenizer_path,
    verify,
    vocab_path,
)
from .vocabulary import Vocabulary

__all__ = [
    "DIMENSION",
    "IMPLEMENTATION",
    "StaticEncoder",
    "StaticIndex",
    "StaticTable",
    "WordPiece",
    "default_encoder",
    "packaged_vocabulary",
]

MAGIC = b"RANKSTAT"
VERSION = 1
HEADER = struct.Struct("<8sIIII")
FLAG_WEIGHTED = 1
FLAG_CENTRED = 2
#: Width of the distilled table.
DIMENSION = 256

_ENV = "RANK_IMPLEMENTATION"


def _load_kernels() -> tuple[ModuleType, str]:
    """The compiled kernels unless `RANK_IMPLEMENTATION=python`; `cython` requires them."""
    choice = os.environ.get(_ENV, "auto").strip().lower() or "auto"
    if choice == "python":
        return _static_reference, "python"
    try:
        kernels = importlib.import_module("._static", __package__)
    except ImportError as exc:
        if choice in ("cython", "native"):
            raise ImportError(f"{_ENV}={choice} but _rank._static is missing: {exc}") from exc
        return _static_reference, "python"
    if not getattr(kernels, "COMPLETE", False):
        if choice in ("cython", "native"):
            raise ImportError(f"{_ENV}={choice} but _rank._static is an incomplete build")
        return _static_reference, "python"
    return kernels, "cython"


_kernels, IMPLEMENTATION = _load_kernels()


# --------------------------------------------------------------------------- table


def _read_verified(path: Path, sha256: str, size: int) -> bytes:
    """The file's bytes, read once; `ValueError` naming the file when its size or SHA-256
    differs from the pinned one."""
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist")
    blob = path.read_bytes()
    if len(blob) != size:
        raise ValueError(f"{path}: size {len(blob)} bytes, expected {size} (corrupt or a different file)")
    actual = hashlib.sha256(blob).hexdigest()
    if actual != sha256:
        raise ValueError(f"{path}: sha256 {actual}, expected {sha256}")
    return blob


def _mapped_verified(path: Path, sha256: str, size: int) -> mmap.mmap:
    """The file mapped read-only once its size and SHA-256 (read in chunks) match the pinned
    ones; `ValueError` naming the file otherwise."""
    verify(path, sha256, size)
    with path.open("rb") as handle:
        return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)


class StaticTable:
    """The int8 word-piece table: `rows`, `dims`, `flags`, `data` (a memoryview of format `b`,
    `rows × dims`, over the bytes or the read-only mapping given) and `scales` (`array("f")`,
    one per row)."""

    def __init__(self, blob: bytes | mmap.mmap, *, source: str = "<bytes>") -> None:
        if len(blob) < HEADER.size:
            raise ValueError(f"{source}: {len(blob)} bytes is shorter than the table header")
        magic, version, rows, dims, flags = HEADER.unpack_from(blob, 0)
        if magic != MAGIC:
            raise ValueError(f"{source}: not a static table (magic {magic!r})")
        if version != VERSION:
            raise ValueError(f"{source}: table version {version}, this build reads {VERSION}")
        if rows == 0 or dims == 0:
            raise ValueError(f"{source}: empty table ({rows} rows × {dims} dims)")
        expected = HEADER.size + rows * dims + 4 * rows
        if len(blob) != expected:
            raise ValueError(f"{source}: {len(blob)} bytes, the header promises {expected}")
        self.rows, self.dims, self.flags = rows, dims, flags
        self._blob = blob
        end = HEADER.size + rows * dims
        self.data = memoryview(blob)[HEADER.size:end].cast("b")
        scales = array("f")
        scales.frombytes(blob[end:])
        if sys.byteorder == "big":
            scales.byteswap()
        self.scales = scales

    @classmethod
    def load(cls, path: str | Path | None = None) -> StaticTable:
        """The packaged table (SHA-256 checked), or the file at `path` (header checked only)."""
        if path is None:
            packaged = static_table_path()
            return cls(_mapped_verified(packaged, STATIC_TABLE_SHA256, STATIC_TABLE_SIZE),
                       source=str(packaged))
        target = Path(path)
        return cls(target.read_bytes(), source=str(target))

    def row(self, piece: int) -> list[float]:
        """Row `piece` dequantised (for inspection and tests)."""
        base = piece * self.dims
        scale = self.scales[piece]
        return [self.data[base + d] * scale for d in range(self.dims)]


# --------------------------------------------------------------------------- tokenizer

#: Unicode White_Space (what Rust's `char::is_whitespace` tests; `tokenizers` is Rust).
_WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
_SPECIAL_SPLIT = re.compile("(" + "|".join(re.escape(s) for s in _SPECIALS) + ")")


def _is_whitespace(ch: str) -> bool:
    return ch in _WHITESPACE


def _is_control(ch: str) -> bool:
    """Cc, Cf, Co or Cs, except tab, line feed and carriage return (counted as whitespace).
    Unassigned code points (Cn) stay, as in `tokenizers`."""
    if ch in "\t\n\r":
        return False
    category = unicodedata.category(ch)
    return category[0] == "C" and category != "Cn"


def _is_cjk(code: int) -> bool:
    """The CJK Unified Ideographs blocks BERT sets apart (not Hangul, kana or CJK punctuation)."""
    return (0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0x20000 <= code <= 0x2A6DF
            or 0x2A700 <= code <= 0x2B73F or 0x2B740 <= code <= 0x2B81F
            or 0x2B920 <= code <= 0x2CEAF or 0xF900 <= code <= 0xFAFF
            or 0x2F800 <= code <= 0x2FA1F)


def _is_punctuation(ch: str) -> bool:
    """ASCII punctuation (including `$+<=>^`|~`, which Unicode calls symbols) or a `P*`
    category character."""
    code = ord(ch)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(ch)[0] == "P"


def normalize(text: str) -> str:
    """BERT normalisation as `tokenizers`' BertNormalizer (clean text, CJK, accents, lower):
    drop NUL, U+FFFD and control characters; whitespace → space; a space either side of each
    CJK ideograph; NFD, then drop non-spacing marks (Mn); lower-case character by character."""
    cleaned: list[str] = []
    for ch in text:
        code = ord(ch)
        if code == 0 or code == 0xFFFD or _is_control(ch):
            continue
        if _is_whitespace(ch):
            cleaned.append(" ")
        elif _is_cjk(code):
            cleaned.append(" " + ch + " ")
        else:
            cleaned.append(ch)
    decomposed = unicodedata.normalize("NFD", "".join(cleaned))
    return "".join(ch.lower() for ch in decomposed if unicodedata.category(ch) != "Mn")


def pre_tokenize(text: str) -> list[str]:
    """BERT pre-tokenisation: split on whitespace (dropped) and around every punctuation
    character (kept alone)."""
    words: list[str] = []
    current: list[str] = []
    for ch in text:
        if _is_whitespace(ch):
            if current:
                words.append("".join(current))
                current = []
        elif _is_punctuation(ch):
            if current:
                words.append("".join(current))
                current = []
            words.append(ch)
        else:
            current.append(ch)
    if current:
        words.append("".join(current))
    return words


#: ASCII text: controls other than tab, line feed and carriage return are removed, those three
#: become spaces (BertNormalizer's clean step); ASCII has no accents, CJK or non-ASCII spaces.
_ASCII_CLEAN = {code: None for code in [*range(0, 9), 11, 12, *range(14, 32), 127]}
_ASCII_CLEAN.update({9: 32, 10: 32, 13: 32})
#: BertPreTokenizer on ASCII: runs of letters and digits, or one ASCII punctuation character.
_ASCII_WORDS = re.compile(r"[^ !-/:-@\[-`{-~]+|[!-/:-@\[-`{-~]")


def ascii_words(text: str) -> list[str]:
    """`pre_tokenize(normalize(text))` for an ASCII `text`, by translation and one regex."""
    return _ASCII_WORDS.findall(text.translate(_ASCII_CLEAN).lower())


class WordPiece:
    """The vendored `tokenizer.json` vocabulary with BERT normalisation and greedy
    longest-match-first WordPiece (see the module docstring). `ids(text)` gives the piece ids
    without `[CLS]`/`[SEP]`; `tokens(text)` the pieces. Words are cached (`cache` entries)."""

    def __init__(self, vocab: Mapping[str, int], *, unk: str = "[UNK]", prefix: str = "##",
                 max_chars: int = 100, cache: int = 65536) -> None:
        if not isinstance(vocab, Vocabulary):
            vocab = Vocabulary(vocab)
        if unk not in vocab:
            raise ValueError(f"the vocabulary has no {unk} token")
        self.vocab = vocab
        self.unk_id = vocab[unk]
        self.prefix = prefix
        self.max_chars = max_chars
        self._cache: dict[str, tuple[int, ...]] = {}
        self._cache_size = cache
        self._lock = threading.Lock()
        self._longest = vocab.longest

    @classmethod
    def load(cls, path: str | Path | None = None) -> WordPiece:
        """The vendored tokenizer (SHA-256 checked), or a `tokenizer.json` at `path`."""
        if path is None:
            vocab, options = _packaged_model()
        else:
            vocab, options = _compact_model(
                _wordpiece_model(json.loads(Path(path).read_bytes()), Path(path)))
        return cls(vocab, **options)

    def word_ids(self, word: str) -> tuple[int, ...]:
        """WordPiece of one pre-token: the longest vocabulary prefix, then the longest `##`
        continuation of the rest, and so on; `[UNK]` alone when some rest has no match or the
        word is longer than `max_chars` characters."""
        cached = self._cache.get(word)
        if cached is not None:
            return cached
        if len(word) > self.max_chars:
            result: tuple[int, ...] = (self.unk_id,)
        else:
            out: list[int] = []
            start, n = 0, len(word)
            while start < n:
                end = min(n, start + self._longest)
                found = -1
                while end > start:
                    piece = word[start:end] if start == 0 else self.prefix + word[start:end]
                    found = self.vocab.get(piece, -1)
                    if found >= 0:
                        break
                    end -= 1
                if found < 0:
                    out = [self.unk_id]
                    break
                out.append(found)
                start = end
            result = tuple(out)
        with self._lock:
            if len(self._cache) >= self._cache_size:
                self._cache.clear()
            self._cache[word] = result
        return result

    def ids(self, text: str) -> list[int]:
        """Piece ids of `text` (no `[CLS]`/`[SEP]`). The literal special tokens (`[UNK]`,
        `[CLS]` …) are matched in the raw text first, as `tokenizers` does with added tokens."""
        if not isinstance(text, str):
            raise TypeError(f"ids() expects str, got {type(text).__name__}")
        out: list[int] = []
        parts = _SPECIAL_SPLIT.split(text) if "[" in text else [text]
        for position, part in enumerate(parts):
            if position % 2:
                out.append(self.vocab[part])
                continue
            words = ascii_words(part) if part.isascii() else pre_tokenize(normalize(part))
            for word in words:
                out.extend(self.word_ids(word))
        return out

    def tokens(self, text: str) -> list[str]:
        return [self.vocab.piece(i) for i in self.ids(text)]


def _wordpiece_model(document: object, source: Path) -> dict:
    """The `model` object of a parsed `tokenizer.json`; `ValueError` unless it is WordPiece."""
    model = document.get("model") if isinstance(document, dict) else None
    if not isinstance(model, dict) or model.get("type") != "WordPiece":
        raise ValueError(f"{source}: not a WordPiece tokenizer")
    return model


def _compact_model(model: dict) -> tuple[Vocabulary, dict]:
    """A WordPiece `model` object as its compact `Vocabulary` and `WordPiece` options."""
    vocab = model.get("vocab")
    if not isinstance(vocab, dict):
        raise ValueError("the WordPiece model has no vocab object")
    return Vocabulary(vocab), _compact_options(model)


def _compact_options(model: dict) -> dict:
    """The `WordPiece` options of a WordPiece `model` object."""
    return {
        "unk": model.get("unk_token", "[UNK]"),
        "prefix": model.get("continuing_subword_prefix", "##"),
        "max_chars": int(model.get("max_input_chars_per_word", 100))}


@lru_cache(maxsize=1)
def _packaged_model() -> tuple[Vocabulary, dict]:
    """The vendored tokenizer's vocabulary (`packaged_vocabulary`) and its WordPiece options
    from `tokenizer.json`, SHA-256 checked, read once per process; `ValueError` when the JSON
    document's vocabulary is not as long as `vocab.txt`."""
    target = tokenizer_path()
    model = _wordpiece_model(json.loads(_read_verified(target, TOKENIZER_SHA256, TOKENIZER_SIZE)), target)
    vocabulary = packaged_vocabulary()
    if not isinstance(model.get("vocab"), dict) or len(model["vocab"]) != len(vocabulary):
        raise ValueError(f"{target}: its vocabulary does not match {vocab_path().name}")
    return vocabulary, _compact_options(model)


@lru_cache(maxsize=1)
def packaged_vocabulary() -> Vocabulary:
    """Piece → id of the vendored tokenizer, one read-only `Vocabulary` per process (shared
    with `WordPiece.load()`), read from `vocab.txt` (its pieces one per line, line `k` being
    id `k`; SHA-256 checked) rather than by parsing `tokenizer.json`, whose `model.vocab` it
    equals: a search's first call needs it, and the JSON parse cost more than the rest of
    building it."""
    raw = _read_verified(vocab_path(), VOCAB_SHA256, VOCAB_SIZE)
    return Vocabulary.from_pieces(raw.decode("utf-8").split("\n")[:-1])


# --------------------------------------------------------------------------- encoder and index


class StaticEncoder:
    """Static sentence vectors: `encode(texts)` → one `array("f")` of `dimension` values per
    text, the L2-normalised sum of its pieces' table rows (zero when no piece has a row)."""

    def __init__(self, table: StaticTable | None = None, tokenizer: WordPiece | None = None) -> None:
        self.table = table if table is not None else StaticTable.load()
        self.tokenizer = tokenizer if tokenizer is not None else WordPiece.load()
        if len(self.tokenizer.vocab) != self.table.rows:
            raise ValueError(f"the tokenizer has {len(self.tokenizer.vocab)} pieces, "
                             f"the table {self.table.rows} rows")
        self.dimension = self.table.dims

    def encode_one(self, text: str) -> array:
        out = array("f", bytes(4 * self.dimension))
        ids = array("i", self.tokenizer.ids(text))
        _kernels.encode_ids(self.table.data, self.table.scales, self.dimension, ids, out)
        return out

    def encode(self, texts: Sequence[str]) -> list[array]:
        if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence):
            raise TypeError(f"encode() expects a sequence of str, got {type(texts).__name__}")
        for position, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"text {position} must be str, got {type(text).__name__}")
        return [self.encode_one(text) for text in texts]


class StaticIndex:
    """Cosine top-k over stored vectors (exact; flat `array("f")`, rows in order of addition).
    Vectors are expected to be unit or zero (as `StaticEncoder` makes them)."""

    def __init__(self, dim: int = DIMENSION) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
            raise ValueError(f"dim must be an int >= 1, got {dim!r}")
        self.dim = dim
        self._matrix = array("f")

    def __len__(self) -> int:
        return len(self._matrix) // self.dim

    def add(self, vectors: Sequence[Sequence[float]]) -> range:
        """Append vectors; returns the rows they were given."""
        start = len(self)
        for position, vector in enumerate(vectors):
            if len(vector) != self.dim:
                raise ValueError(f"vector {position} has {len(vector)} values, expected {self.dim}")
        for vector in vectors:
            if isinstance(vector, array) and vector.typecode == "f":
                self._matrix.extend(vector)
            else:
                self._matrix.extend(array("f", vector))
        return range(start, len(self))

    def search(self, query: Sequence[float], k: int) -> list[tuple[int, float]]:
        """The best `k` rows by inner product with `query` (cosine for unit vectors), as
        `(row, score)` sorted by score descending, then row ascending."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise ValueError(f"k must be an int >= 0, got {k!r}")
        if len(query) != self.dim:
            raise ValueError(f"query has {len(query)} values, expected {self.dim}")
        vector = query if isinstance(query, array) and query.typecode == "f" else array("f", query)
        if not len(self) or k == 0:
            return []
        return _kernels.cosine_top(self._matrix, vector, self.dim, k)


_default: StaticEncoder | None = None
_default_lock = threading.Lock()


def default_encoder() -> StaticEncoder:
    """The packaged table and tokenizer, loaded once per process."""
    global _default
    with _default_lock:
        if _default is None:
            _default = StaticEncoder()
        return _default


def table_digest(path: str | Path | None = None) -> str:
    """SHA-256 of the table file (the packaged one by default)."""
    return sha256_file(static_table_path() if path is None else Path(path))
