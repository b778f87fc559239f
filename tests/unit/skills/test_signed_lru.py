"""The shared store of the content caches: key → (signature, value), least recently used out."""

from __future__ import annotations

import threading

from iii_directory.content.stat_cache import SignedLRU


def test_a_hit_needs_the_same_signature() -> None:
    lru: SignedLRU[tuple[int, int], str] = SignedLRU(4)
    assert lru.put("a", (1, 2), "first")
    assert lru.get("a", (1, 2)) == "first"
    assert lru.get("a", (1, 3)) is None, "a changed signature is a miss"
    assert "a" in lru and lru.signature_of("a") == (1, 2), "the miss leaves the entry in place"
    assert lru.get("b", (1, 2)) is None
    assert lru.put("a", (1, 3), "second")
    assert lru.get("a", (1, 2)) is None and lru.get("a", (1, 3)) == "second" and len(lru) == 1


def test_the_count_limit_drops_the_least_recently_used() -> None:
    lru: SignedLRU[int, str] = SignedLRU(3)
    for key in "abc":
        lru.put(key, 0, key.upper())
    assert lru.get("a", 0) == "A"  # a is now the most recently used: b goes first
    lru.put("d", 0, "D")
    assert "b" not in lru and [k for k in "acd" if k in lru] == ["a", "c", "d"]
    lru.put("c", 1, "C2")  # replacing an entry makes it the most recently used
    lru.put("e", 0, "E")
    assert "a" not in lru and len(lru) == 3 and lru.get("c", 1) == "C2"


def test_a_miss_and_signature_of_do_not_refresh_an_entry() -> None:
    lru: SignedLRU[int, str] = SignedLRU(2)
    lru.put("a", 0, "A")
    lru.put("b", 0, "B")
    assert lru.get("a", 9) is None and lru.signature_of("a") == 0
    lru.put("c", 0, "C")
    assert "a" not in lru and "b" in lru


def test_the_size_limit_drops_until_the_sizes_fit() -> None:
    lru: SignedLRU[int, str] = SignedLRU(max_size=10, size=len)
    lru.put("a", 0, "aaaa")
    lru.put("b", 0, "bbbb")
    assert lru.total == 8
    lru.put("c", 0, "cccccc")  # 14 > 10: a goes, b and c fit
    assert "a" not in lru and lru.total == 10 and len(lru) == 2
    lru.put("b", 1, "bb")  # a replaced entry's size is taken back
    assert lru.total == 8
    lru.put("d", 0, "ddddddddd")  # 17: c goes (11), then b (9)
    assert [k for k in "abcd" if k in lru] == ["d"] and lru.total == 9


def test_a_value_over_the_size_limit_is_not_stored_and_drops_the_old_entry() -> None:
    lru: SignedLRU[int, str] = SignedLRU(max_size=4, size=len)
    lru.put("a", 0, "aa")
    lru.put("b", 0, "bb")
    assert not lru.put("a", 1, "aaaaa")
    assert "a" not in lru and "b" in lru and lru.total == 2


def test_both_limits_hold_together() -> None:
    lru: SignedLRU[int, str] = SignedLRU(2, max_size=100, size=len)
    for key in "abc":
        lru.put(key, 0, key)
    assert len(lru) == 2 and lru.total == 2 and "a" not in lru


def test_discard_clear_and_none() -> None:
    lru: SignedLRU[int, str] = SignedLRU(max_size=100, size=len)
    lru.put("a", 0, "aaa")
    lru.put("b", 0, "bb")
    lru.discard("a")
    lru.discard("missing")
    assert len(lru) == 1 and lru.total == 2
    assert not lru.put("c", 0, None)  # type: ignore[arg-type]
    assert "c" not in lru
    lru.clear()
    assert len(lru) == 0 and lru.total == 0 and lru.signature_of("b") is None


def test_without_a_size_function_only_the_count_counts() -> None:
    lru: SignedLRU[int, str] = SignedLRU(max_size=0)
    assert lru.put("a", 0, "a long value") and lru.total == 0


def test_concurrent_puts_keep_the_limits() -> None:
    lru: SignedLRU[int, str] = SignedLRU(50, max_size=400, size=len)

    def work(offset: int) -> None:
        for i in range(500):
            key = f"k{(offset * 7 + i) % 120}"
            lru.put(key, i, "x" * (i % 13))
            lru.get(key, i)

    workers = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(lru) <= 50 and lru.total <= 400
    held = [key for key in (f"k{n}" for n in range(120)) if key in lru]
    assert lru.total == sum(len(lru.get(key, lru.signature_of(key)) or "") for key in held)
