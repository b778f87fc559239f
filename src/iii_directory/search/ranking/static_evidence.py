"""What the static lane saw of each capability in the current search call, for the
answerability decision: the best static cosine and how many of the first `VOUCH_HEAD` static
hits one worker holds. `static_lane.StaticLane.fuse_lanes` records it per call (a context
variable: the search call's task); `answerability` reads it. Neither module imports the other
for it."""

from __future__ import annotations

import contextvars
from collections.abc import Iterable
from typing import Any

VOUCH_HEAD = 4  # chosen: tuned on dev + our case sets (docs/record/search-quality.md)
"""The static head one worker must hold whole for the static lane to vouch for a refusal."""
VOUCH_SCORE = 0.0  # chosen: even odds of the static family's calibrated score
"""The static family's calibrated score (log-odds) a vouched-for capability must reach."""

_SEEN: contextvars.ContextVar[dict[Any, tuple[float, int]]] = contextvars.ContextVar(
    "static_evidence", default={})


def record(seen: Iterable[tuple[Any, float, int]]) -> None:
    """Replace this call's evidence with `(query, best cosine, head share)` triples."""
    _SEEN.set({query: (cosine, share) for query, cosine, share in seen})


def clear() -> None:
    """The static lane did not serve this call."""
    _SEEN.set({})


def static_cosine(query: Any) -> float | None:
    """The best static cosine of `query` (a `query.Query`) in the lanes this call fused, or
    None when the static lane did not serve it."""
    seen = _SEEN.get().get(query)
    return seen[0] if seen is not None else None


def head_share_of(query: Any) -> int | None:
    """How many of the first `VOUCH_HEAD` static hits of `query` one worker holds, or None."""
    seen = _SEEN.get().get(query)
    return seen[1] if seen is not None else None


def queries() -> list[Any]:
    """The queries this call recorded evidence for (benchmarks read the evidence by text)."""
    return list(_SEEN.get())
