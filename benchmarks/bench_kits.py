"""Kits: the three-way merge and `kits.lock` round trips at the sizes a project meets.

Run: `python -m pytest benchmarks/bench_kits.py --benchmark-only`.

* `merge_scattered` — a 256 KiB skill file (about 6,500 lines) edited every 50 lines locally
  and, interleaved, by the kit: a clean diff3 merge (two Myers diffs over the base).
* `merge_rewrite` — the same file fully rewritten locally while the kit changes one line:
  lines unique to one side are dropped before Myers runs, so a rewrite costs no more than a
  small edit.
* `merge_conflicts` — 100 overlapping edits, each becoming a conflict region.
* `lock_round_trip` — render and re-parse a lock of 20 kits × 50 files.
"""

from __future__ import annotations

import pytest

from iii_directory.kits.lock import Lock, LockedFile, LockedKit, parse_lock, render_lock
from iii_directory.kits.merge import three_way

LINE = "Step {i}: explain what the agent does next, in one sentence.\n"


def _base() -> list[str]:
    lines, size, i = [], 0, 0
    while size < 256 * 1024:
        line = LINE.format(i=i)
        lines.append(line)
        size += len(line)
        i += 1
    return lines


@pytest.fixture(scope="module")
def base() -> list[str]:
    return _base()


def test_merge_scattered(benchmark: pytest.FixtureRequest, base: list[str]) -> None:
    ours, theirs = list(base), list(base)
    for i in range(0, len(base), 50):
        ours[i] = f"ours {i}\n"
    for i in range(25, len(base), 50):
        theirs[i] = f"theirs {i}\n"
    result = benchmark(three_way, "".join(base), "".join(ours), "".join(theirs))
    assert result.status == "clean"


def test_merge_rewrite(benchmark: pytest.FixtureRequest, base: list[str]) -> None:
    ours = [f"rewritten {i}\n" for i in range(len(base))]
    theirs = list(base)
    theirs[10] = "kit change\n"
    result = benchmark(three_way, "".join(base), "".join(ours), "".join(theirs))
    assert result.status == "conflicts"


def test_merge_conflicts(benchmark: pytest.FixtureRequest, base: list[str]) -> None:
    ours, theirs = list(base), list(base)
    for i in range(0, 100 * 40, 40):
        ours[i] = f"ours {i}\n"
        theirs[i] = f"theirs {i}\n"
    result = benchmark(three_way, "".join(base), "".join(ours), "".join(theirs))
    assert result.conflicts == 100


def test_lock_round_trip(benchmark: pytest.FixtureRequest) -> None:
    lock = Lock(kits={
        f"acme/kit-{k}": LockedKit(
            requested="^1", version="1.2.3", installed_at="2026-10-08T14:02:11Z",
            workers={"kanban": "^1.4"},
            files={f"skills/acme/kit-{k}/page-{f}.md": LockedFile(f"{k:032d}{f:032d}") for f in range(50)},
        )
        for k in range(20)
    })
    parsed = benchmark(lambda: parse_lock(render_lock(lock)))
    assert parsed == lock
