"""Line-based three-way merge with diff3-style conflict markers (docs/rules/kits.md §7).

Inputs: `base` (the kit's content at the installed version), `ours` (the file on disk),
`theirs` (the new kit content). Trivial sides short-circuit:

1. ours == theirs → ours;  2. ours == base → theirs;  3. theirs == base → ours.

Otherwise both sides are diffed against the base with Myers' O(ND) shortest-edit-script
algorithm (linear-space bisection, Myers 1986 §4b). Base lines matched on *both* sides are
stable; the stretches between stable lines are resolved one by one: a stretch changed on one
side only takes that side, one changed identically on both takes either, and anything else is a
conflict region. Because a stable line must be matched on both sides, overlapping or adjacent
changes fall in one stretch and conflict, as does an insertion by both sides at one point
(unless identical). Conflicts are written as

    <<<<<<< yours / ours lines / ||||||| installed / base lines / ======= / theirs lines /
    >>>>>>> kit

(each marker on its own line). The conflict count is the number of result lines starting with
`<<<<<<<` (at least 1 when there is a conflict).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

MARK_OURS = "<<<<<<< yours\n"
MARK_BASE = "||||||| installed\n"
MARK_SEP = "=======\n"
MARK_THEIRS = ">>>>>>> kit\n"

MergeStatus = Literal["clean", "conflicts"]


@dataclass(frozen=True)
class MergeResult:
    status: MergeStatus
    text: str
    conflicts: int


def split_lines(text: str) -> list[str]:
    """Lines with their terminators kept (`a\\nb` → `["a\\n", "b"]`)."""
    return text.splitlines(keepends=True) if text else []


# ---------------------------------------------------------------------------------------------
# Myers diff


def _intern(a: Sequence[str], b: Sequence[str]) -> tuple[list[int], list[int]]:
    table: dict[str, int] = {}
    return [table.setdefault(x, len(table)) for x in a], [table.setdefault(x, len(table)) for x in b]


def _split_point(a: list[int], a0: int, a1: int, b: list[int], b0: int, b1: int) -> tuple[int, int]:
    """A point (x, y) on a shortest edit path of a[a0:a1] → b[b0:b1], found by running the
    forward and reverse greedy searches until their furthest-reaching paths overlap.

    Forward: `fwd[k]` = furthest x on diagonal k = x − y (coordinates relative to a0, b0).
    Reverse: `rev[k]` = furthest distance travelled from the end on diagonal k of the reversed
    problem. With delta = n − m, forward diagonal k meets reverse diagonal delta − k.
    """
    n, m = a1 - a0, b1 - b0
    delta = n - m
    odd = delta % 2 != 0
    limit = (n + m + 1) // 2
    size = 2 * limit + 2
    offset = limit + 1
    fwd = [-1] * size
    rev = [-1] * size
    fwd[offset + 1] = 0
    rev[offset + 1] = 0
    for d in range(limit + 1):
        for k in range(-d, d + 1, 2):
            i = offset + k
            if k == -d or (k != d and fwd[i - 1] < fwd[i + 1]):
                x = fwd[i + 1]
            else:
                x = fwd[i - 1] + 1
            y = x - k
            while x < n and y < m and a[a0 + x] == b[b0 + y]:
                x += 1
                y += 1
            fwd[i] = x
            if odd:
                j = offset + delta - k
                if 0 <= j < size and rev[j] != -1 and x + rev[j] >= n:
                    return a0 + x, b0 + y
        for k in range(-d, d + 1, 2):
            i = offset + k
            if k == -d or (k != d and rev[i - 1] < rev[i + 1]):
                x = rev[i + 1]
            else:
                x = rev[i - 1] + 1
            y = x - k
            while x < n and y < m and a[a1 - 1 - x] == b[b1 - 1 - y]:
                x += 1
                y += 1
            rev[i] = x
            if not odd:
                j = offset + delta - k
                if 0 <= j < size and fwd[j] != -1 and fwd[j] + x >= n:
                    fx = fwd[j]
                    return a0 + fx, b0 + fx - (delta - k)
    return a0, b0  # unreachable for non-empty inputs


def matching_pairs(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    """Index pairs (i, j) with a[i] == b[j] along a Myers shortest edit script, in order.

    Common prefixes and suffixes are peeled off, then the rest is split at a point of an
    optimal path and both halves are solved the same way (recursion depth ~ log2 D).
    """
    full_a, full_b = _intern(a, b)
    # Lines that occur on one side only can never be matched; dropping them first leaves the
    # longest common subsequence unchanged and keeps rewrites (large D) cheap.
    common = set(full_a) & set(full_b)
    keep_a = [i for i, x in enumerate(full_a) if x in common]
    keep_b = [j for j, x in enumerate(full_b) if x in common]
    ia = [full_a[i] for i in keep_a]
    ib = [full_b[j] for j in keep_b]
    pairs: list[tuple[int, int]] = []

    def solve(a0: int, a1: int, b0: int, b1: int) -> None:
        while a0 < a1 and b0 < b1 and ia[a0] == ib[b0]:
            pairs.append((a0, b0))
            a0 += 1
            b0 += 1
        suffix: list[tuple[int, int]] = []
        while a1 > a0 and b1 > b0 and ia[a1 - 1] == ib[b1 - 1]:
            a1 -= 1
            b1 -= 1
            suffix.append((a1, b1))
        if a0 < a1 and b0 < b1:
            x, y = _split_point(ia, a0, a1, ib, b0, b1)
            if (x, y) not in ((a0, b0), (a1, b1)):
                solve(a0, x, b0, y)
                solve(x, a1, y, b1)
        pairs.extend(reversed(suffix))

    solve(0, len(ia), 0, len(ib))
    return [(keep_a[i], keep_b[j]) for i, j in pairs]


# ---------------------------------------------------------------------------------------------
# Three-way merge


def _stable_lines(base_len: int, ours_pairs: list[tuple[int, int]],
                  theirs_pairs: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """(base, ours, theirs) index triples of base lines matched on both sides, in order."""
    in_ours = dict(ours_pairs)
    in_theirs = dict(theirs_pairs)
    return [
        (i, in_ours[i], in_theirs[i])
        for i in range(base_len)
        if i in in_ours and i in in_theirs
    ]


def _ensure_eol(chunk: list[str]) -> list[str]:
    """A conflict side whose last line has no terminator gets one, so markers stay on their
    own lines."""
    if chunk and not chunk[-1].endswith("\n"):
        return [*chunk[:-1], chunk[-1] + "\n"]
    return chunk


def three_way(base: str, ours: str, theirs: str) -> MergeResult:
    """Merge `ours` and `theirs` against their common ancestor `base` (module docstring)."""
    if ours == theirs:
        return MergeResult("clean", ours, 0)
    if ours == base:
        return MergeResult("clean", theirs, 0)
    if theirs == base:
        return MergeResult("clean", ours, 0)
    b_lines, o_lines, t_lines = split_lines(base), split_lines(ours), split_lines(theirs)
    stable = _stable_lines(
        len(b_lines), matching_pairs(b_lines, o_lines), matching_pairs(b_lines, t_lines)
    )
    out: list[str] = []
    had_conflict = False
    bi = oi = ti = 0
    for bs, os_, ts in [*stable, (len(b_lines), len(o_lines), len(t_lines))]:
        b_chunk, o_chunk, t_chunk = b_lines[bi:bs], o_lines[oi:os_], t_lines[ti:ts]
        if o_chunk == t_chunk or b_chunk == t_chunk:
            out.extend(o_chunk)
        elif b_chunk == o_chunk:
            out.extend(t_chunk)
        else:
            had_conflict = True
            out.append(MARK_OURS)
            out.extend(_ensure_eol(o_chunk))
            out.append(MARK_BASE)
            out.extend(_ensure_eol(b_chunk))
            out.append(MARK_SEP)
            out.extend(_ensure_eol(t_chunk))
            out.append(MARK_THEIRS)
        if bs < len(b_lines):
            out.append(b_lines[bs])
        bi, oi, ti = bs + 1, os_ + 1, ts + 1
    text = "".join(out)
    if not had_conflict:
        return MergeResult("clean", text, 0)
    count = sum(1 for line in split_lines(text) if line.startswith("<<<<<<<"))
    return MergeResult("conflicts", text, max(1, count))


def has_conflict_markers(text: str) -> bool:
    """True iff some line starts with `<<<<<<<` and a later line starts with `>>>>>>>`."""
    seen_open = False
    for line in split_lines(text):
        if line.startswith("<<<<<<<"):
            seen_open = True
        elif seen_open and line.startswith(">>>>>>>"):
            return True
    return False
