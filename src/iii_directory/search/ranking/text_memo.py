"""Memos of pure functions of text, bounded by the bytes they hold under one worker budget.

Search remembers what it derives from a request's text (its query with its second query, prose and
concept words, ordinary terms, query terms, stems, word vectors): agents repeat their
capabilities, and deriving them again costs as much as ranking. A memo bounded only by its
number of entries holds as much memory as callers send. Here every memo counts the approximate
bytes of each entry it keeps (`approx_bytes` of the arguments and the result, plus the map's own
overhead) and drops entries while it holds more than its `share` of `BUDGET`, the worker's one
budget for all of them (`Settings.function_search_text_cache_mib`, default
`DEFAULT_BUDGET_MIB`); a result larger than the memo's whole share is returned and not kept.

* `TextMemo` drops its least recently used entries; a hit takes no lock (a dictionary read,
  then a move-to-end that tolerates a concurrent eviction).
* `HotMemo`, for functions called thousands of times per search, is a dictionary whose hit is a
  plain subscript and whose miss drops the oldest entries.

Stores and evictions take the memo's lock. Sizes over-count what entries share (a string held by
two entries is counted twice), so the real total stays under the budget. Figures:
docs/record/performance.md, "Bounded by size".
"""

from __future__ import annotations

import dataclasses
import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable
from functools import update_wrapper
from sys import getsizeof
from typing import Any, Generic, TypeVar

R = TypeVar("R")

MIB = 1024 * 1024  # chosen: a unit, bytes in a MiB
DEFAULT_BUDGET_MIB = 16  # chosen: a lexical worker under long capabilities stays within 1.3× of an ordinary one
"""Bytes (MiB) all text memos of one worker may hold together, by default."""
ENTRY_OVERHEAD = 120  # chosen: measured with tracemalloc on CPython 3.11
"""Bytes of one ordered-map node and its key tuple, beyond the arguments and result."""
HOT_ENTRY_OVERHEAD = 160  # chosen: measured with tracemalloc on CPython 3.11
"""Bytes of one `HotMemo` entry beyond its key and value: a slot in two dictionaries and a
size."""
_SCALARS = frozenset({str, bytes, int, float, bool, type(None), array})
_FLAT = frozenset({str, bytes, int, float})


def approx_bytes(value: object, depth: int = 0) -> int:
    """`sys.getsizeof` of `value` plus, for containers, dataclass instances and objects with
    attributes, that of what they hold (three levels deep); shared objects are counted at each
    reference."""
    kind = type(value)
    if kind is str or kind in _SCALARS or depth >= 3:
        return getsizeof(value)
    if kind is tuple or kind is frozenset or kind is list or kind is set:
        items: Any = value
        if set(map(type, items)) <= _FLAT:  # the common case, counted without a Python frame per item
            return getsizeof(value) + sum(map(getsizeof, items))
        return getsizeof(value) + sum(approx_bytes(item, depth + 1) for item in items)
    size = getsizeof(value)
    if isinstance(value, dict):
        return size + sum(approx_bytes(k, depth + 1) + approx_bytes(v, depth + 1)
                          for k, v in value.items())
    attributes = getattr(value, "__dict__", None)
    if attributes is not None:  # objects and most dataclasses: their fields are in __dict__
        return size + sum(approx_bytes(v, depth + 1) for v in attributes.values())
    if dataclasses.is_dataclass(value):
        return size + sum(approx_bytes(getattr(value, f.name), depth + 1)
                          for f in dataclasses.fields(value))
    return size


class MemoBudget:
    """The byte budget shared by a set of `TextMemo`s; each may hold `share × limit` bytes."""

    def __init__(self, limit_bytes: int) -> None:
        self.limit_bytes = limit_bytes
        self.memos: list[TextMemo[Any] | HotMemo] = []

    def set_limit(self, limit_bytes: int) -> None:
        """A new limit, applied at once (memos over their new share drop entries now)."""
        self.limit_bytes = max(0, int(limit_bytes))
        for memo in self.memos:
            memo.trim()

    def held_bytes(self) -> int:
        """What every memo of this budget holds now, by their own counts."""
        return sum(memo.bytes for memo in self.memos)

    def shares(self) -> float:
        return sum(memo.share for memo in self.memos)

    def clear(self) -> None:
        for memo in self.memos:
            memo.cache_clear()


BUDGET = MemoBudget(DEFAULT_BUDGET_MIB * MIB)


class TextMemo(Generic[R]):
    """The entries of one memo of `function`, bounded by `share` of `budget` (see the module
    docstring); `lookup` is the memoised function (one argument: keyed by the argument itself,
    else by the argument tuple)."""

    def __init__(self, function: Callable[..., R], share: float, budget: MemoBudget,
                 arity: int = 1) -> None:
        self.function = function
        self.share = share
        self.budget = budget
        self.bytes = 0
        self._data: OrderedDict[Any, tuple[R, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.lookup = self._one_argument() if arity == 1 else self._arguments()
        budget.memos.append(self)

    @property
    def limit_bytes(self) -> int:
        return int(self.budget.limit_bytes * self.share)

    def _one_argument(self) -> Callable[[Any], R]:
        get, move, store = self._data.get, self._data.move_to_end, self._store

        def lookup(argument: Any) -> R:
            found = get(argument)
            if found is None:
                return store(argument, self.function(argument))
            try:
                move(argument)
            except KeyError:  # evicted by another thread meanwhile: the value is still right
                pass
            return found[0]

        return lookup

    def _arguments(self) -> Callable[..., R]:
        get, move, store = self._data.get, self._data.move_to_end, self._store

        def lookup(*arguments: Any) -> R:
            found = get(arguments)
            if found is None:
                return store(arguments, self.function(*arguments))
            try:
                move(arguments)
            except KeyError:
                pass
            return found[0]

        return lookup

    def _store(self, key: Any, value: R) -> R:
        size = ENTRY_OVERHEAD + approx_bytes(key) + approx_bytes(value)
        limit = int(self.budget.limit_bytes * self.share)
        if size > limit:
            return value
        with self._lock:
            if key not in self._data:
                self._data[key] = (value, size)
                self.bytes += size
                if self.bytes > limit:
                    self._evict()
        return value

    def _evict(self) -> None:
        limit = self.limit_bytes
        data = self._data
        while self.bytes > limit and data:
            _, (_, size) = data.popitem(last=False)
            self.bytes -= size

    def trim(self) -> None:
        """Drop least recently used entries until the memo is within its share."""
        with self._lock:
            self._evict()

    def cache_clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.bytes = 0

    def __len__(self) -> int:
        return len(self._data)


class HotMemo(dict):  # type: ignore[type-arg]
    """A memo of a one-argument `function` called thousands of times per search (stems,
    normal terms, query terms): a hit is a plain dictionary subscript, with no Python frame;
    a miss (`__missing__`) computes, counts and stores the entry, then drops the oldest
    entries while the memo holds more than its share. Oldest first rather than least recently
    used: recency would cost a Python call on every hit, and dropping a hot word costs one
    recomputation."""

    def __init__(self, function: Callable[[Any], Any], share: float, budget: MemoBudget) -> None:
        super().__init__()
        self.function = function
        self.share = share
        self.budget = budget
        self.bytes = 0
        self._sizes: OrderedDict[Any, int] = OrderedDict()  # oldest first, popped in O(1)
        self._lock = threading.Lock()
        budget.memos.append(self)

    @property
    def limit_bytes(self) -> int:
        return int(self.budget.limit_bytes * self.share)

    def __missing__(self, key: Any) -> Any:
        value = self.function(key)
        if type(key) is str and type(value) is str:
            size = HOT_ENTRY_OVERHEAD + getsizeof(key) + getsizeof(value)
        else:
            size = HOT_ENTRY_OVERHEAD + approx_bytes(key) + approx_bytes(value)
        limit = int(self.budget.limit_bytes * self.share)
        if size > limit:
            return value
        with self._lock:
            if key not in self._sizes:
                self[key] = value
                self._sizes[key] = size
                self.bytes += size
                if self.bytes > limit:
                    self._evict()
        return value

    def _evict(self) -> None:
        limit, sizes = self.limit_bytes, self._sizes
        while self.bytes > limit and sizes:
            oldest, size = sizes.popitem(last=False)
            self.bytes -= size
            del self[oldest]

    def trim(self) -> None:
        with self._lock:
            self._evict()

    def cache_clear(self) -> None:
        with self._lock:
            self.clear()
            self._sizes.clear()
            self.bytes = 0


def text_memo(share: float, budget: MemoBudget = BUDGET, arity: int = 1, hot: bool = False
              ) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """Decorator: remember `function` (of `arity` positional arguments) in a `TextMemo` holding
    at most `share` of `budget` (the result's `memo`; `cache_clear` empties it) — or, `hot`,
    in a `HotMemo` whose bound `__getitem__` is the result (the memo is its `__self__`)."""
    def wrap(function: Callable[..., R]) -> Callable[..., R]:
        if hot:
            assert arity == 1
            return HotMemo(function, share, budget).__getitem__
        memo = TextMemo(function, share, budget, arity)
        lookup = memo.lookup
        update_wrapper(lookup, function)
        lookup.memo = memo  # type: ignore[attr-defined]
        lookup.cache_clear = memo.cache_clear  # type: ignore[attr-defined]
        return lookup
    return wrap


_ABSENT = object()


class RecentMemo(dict):  # type: ignore[type-arg]
    """A memo of a pure one-argument `function` that keeps what the last two generations used:
    a hit is a plain dictionary subscript (`memo[key]`); a miss takes the value from the
    previous generation, else computes it, and keeps it in the current one. Every
    `turn_every`-th `tick()` (the caller ticks once per scan of the set it memoises) starts a new
    generation and drops what was not used during the one before, so the memo holds about two
    scans' worth of distinct keys however many it has seen, with no size to choose: a working
    set of any size stays (a count bound below it would rebuild it on every scan), and keys
    that stopped being used (a skill edited or deleted) go within two generations.

    Ticks and misses may come from several threads: a value computed while a generation turns
    may be dropped and computed again, never wrong (the function is pure)."""

    def __init__(self, function: Callable[[Any], Any], turn_every: int) -> None:
        super().__init__()
        self.function = function
        self.turn_every = max(1, int(turn_every))
        self.previous: dict[Any, Any] = {}
        self._ticks = 0

    def __missing__(self, key: Any) -> Any:
        value = self.previous.get(key, _ABSENT)
        if value is _ABSENT:
            value = self.function(key)
        self[key] = value
        return value

    def tick(self) -> None:
        """Count one scan; every `turn_every`-th starts a new generation."""
        self._ticks += 1
        if self._ticks >= self.turn_every:
            self._ticks = 0
            self.previous = dict(self)
            self.clear()

    def cache_clear(self) -> None:
        self.clear()
        self.previous = {}
        self._ticks = 0
