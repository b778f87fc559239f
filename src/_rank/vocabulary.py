"""A WordPiece vocabulary held compactly: piece → id without a `dict` of 30,000 `str` keys.

`Vocabulary(mapping)` keeps

* `_text`: every piece, in id order, concatenated into one `str`;
* `_starts`: `array("I")` of where piece `k` (the `k`-th smallest id) starts in `_text`, plus
  the end, so piece `k` is `_text[_starts[k]:_starts[k + 1]]`;
* `_ids`: `array` of the ids in that order (a vocabulary's ids need not be dense);
* `_slots`: an open-addressing table (`array("i")`, a power of two at least twice the number of
  pieces, -1 empty) from `hash(piece) & mask` to `k`, probed linearly.

A lookup hashes the piece once and compares it in place (`str.startswith` at the piece's start,
plus its length) with the few pieces in its probe run, so no per-lookup slice is built. It is a
read-only `Mapping[str, int]`: `get`, `in`, `[]`, `len`, iteration in id order, `items()`, and
`piece(id)` for the reverse direction.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import accumulate, pairwise


class Vocabulary(Mapping[str, int]):
    """Piece → id, read-only, held as one string, two arrays and a hash table (module docstring)."""

    def __init__(self, vocab: Mapping[str, int]) -> None:
        pieces = list(vocab)
        ids = [int(vocab[piece]) for piece in pieces]
        if any(a >= b for a, b in pairwise(ids)):  # not in id order: sort (ids are unique)
            order = sorted(range(len(ids)), key=ids.__getitem__)
            if any(ids[a] == ids[b] for a, b in pairwise(order)):
                raise ValueError("a vocabulary id is given to two pieces")
            pieces, ids = [pieces[k] for k in order], [ids[k] for k in order]
        self._build(pieces, array("i" if all(-2**31 <= i < 2**31 for i in ids) else "q", ids))

    @classmethod
    def from_pieces(cls, pieces: Sequence[str]) -> Vocabulary:
        """The vocabulary whose piece `k` has id `k` (a `vocab.txt` read line by line); equal
        to `Vocabulary(dict(zip(pieces, range(len(pieces)))))` without building that dict.
        `ValueError` when a piece repeats."""
        vocabulary = cls.__new__(cls)
        vocabulary._build(list(pieces), array("i", range(len(pieces))))
        return vocabulary

    def _build(self, pieces: list[str], ids: array) -> None:
        """Hold `pieces` (in id order, unique) and their `ids` as the module docstring says."""
        self._text = "".join(pieces)
        self._starts = array("I", [0])
        self._starts.extend(accumulate(map(len, pieces)))
        self._ids = ids
        self._by_id: dict[int, int] | None = (
            None if not ids or ids[-1] == len(ids) - 1 and ids[0] == 0
            else {i: k for k, i in enumerate(ids)})
        size = 8
        while size < 2 * len(ids):
            size *= 2
        mask = self._mask = size - 1
        slots = self._slots = array("i", [-1]) * size
        text, starts = self._text, self._starts
        for k, piece in enumerate(pieces):
            slot = hash(piece) & mask
            while slots[slot] >= 0:
                other = slots[slot]
                if starts[other + 1] - starts[other] == len(piece) and text.startswith(piece, starts[other]):
                    raise ValueError(f"the piece {piece!r} is listed twice")
                slot = (slot + 1) & mask
            slots[slot] = k
        self.longest = max(map(len, pieces), default=0)

    def _find(self, piece: str) -> int:
        """The position `k` of `piece`, or -1."""
        slots, starts, text, mask = self._slots, self._starts, self._text, self._mask
        slot = hash(piece) & mask
        n = len(piece)
        while True:
            k = slots[slot]
            if k < 0:
                return -1
            start = starts[k]
            if starts[k + 1] - start == n and text.startswith(piece, start):
                return k
            slot = (slot + 1) & mask

    def get(self, piece: object, default: int | None = None) -> int | None:  # type: ignore[override]
        if not isinstance(piece, str):
            return default
        k = self._find(piece)
        return default if k < 0 else self._ids[k]

    def __contains__(self, piece: object) -> bool:
        return isinstance(piece, str) and self._find(piece) >= 0

    def __getitem__(self, piece: str) -> int:
        k = self._find(piece) if isinstance(piece, str) else -1
        if k < 0:
            raise KeyError(piece)
        return self._ids[k]

    def __len__(self) -> int:
        return len(self._ids)

    def __iter__(self) -> Iterator[str]:
        text, starts = self._text, self._starts
        for k in range(len(self._ids)):
            yield text[starts[k]:starts[k + 1]]

    def piece(self, token_id: int) -> str:
        """The piece whose id is `token_id` (`KeyError` if none)."""
        if self._by_id is None:
            k = token_id if 0 <= token_id < len(self._ids) else -1
        else:
            k = self._by_id.get(token_id, -1)
        if k < 0:
            raise KeyError(token_id)
        return self._text[self._starts[k]:self._starts[k + 1]]

    def nbytes(self) -> int:
        """Bytes held by the string and the arrays (not the object headers)."""
        return (len(self._text) * _char_width(self._text)
                + sum(a.itemsize * len(a) for a in (self._starts, self._ids, self._slots)))


def _char_width(text: str) -> int:
    """Bytes a character of `text` takes in CPython's compact representation (1, 2 or 4)."""
    widest = max(map(ord, text), default=0)
    return 1 if widest < 0x100 else 2 if widest < 0x10000 else 4


class Subset(Mapping[str, int]):
    """The entries of a `Vocabulary` whose pieces satisfy `keep`, as a read-only mapping that
    holds nothing of its own: `get(p)` is `vocabulary.get(p)` when `keep(p)`, else the default."""

    def __init__(self, vocabulary: Vocabulary, keep: Callable[[str], bool]) -> None:
        self._vocabulary = vocabulary
        self._keep = keep
        self._len: int | None = None

    def get(self, piece: object, default: int | None = None) -> int | None:  # type: ignore[override]
        if isinstance(piece, str) and self._keep(piece):
            return self._vocabulary.get(piece, default)
        return default

    def __contains__(self, piece: object) -> bool:
        return isinstance(piece, str) and self._keep(piece) and piece in self._vocabulary

    def __getitem__(self, piece: str) -> int:
        found = self.get(piece)
        if found is None:
            raise KeyError(piece)
        return found

    def __len__(self) -> int:
        if self._len is None:
            self._len = sum(1 for _ in self)
        return self._len

    def __iter__(self) -> Iterator[str]:
        return (piece for piece in self._vocabulary if self._keep(piece))
