"""Extra dense views of the catalog's functions for the learned fusion (chosen for this
project).

The dense index embeds each function once, as `"{id} {slim description}"` (`Tool.dense_text`).
The learned fusion (`fusion.py`) also reads the request's cosine to two more views of each
candidate:

| view | text | example |
|---|---|---|
| description | the slim description alone (the id when it has none) | "Send an email." |
| action | the id's words as a phrase, last segment first | `hr::time-off::request` → "request time off hr" |

An id says what a function does (`…::update-stage`), its description what it is about; one
vector of both lets the longer description drown the id. The views are embedded once per text:
they go through the encoder pipeline as ad-hoc documents (lower priority than the index and
every waiting capability) and are cached by content hash in the same vector cache, so a refresh
or a restart embeds only new or changed functions. Until every view of the active catalog is
known, or for a catalog of more than `VIEW_LIMIT` functions (memory: two more vectors a
function), a call's fusion runs without them (`fusion.learned_lane` then uses the weights fitted
without views). Cost per capability: two dot products per fusion candidate (at most 40).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .vocabulary import ID_WORD


DOCUMENT = 2  # chosen: the encoder pipeline's priority class of ad-hoc documents
"""The priority the views are embedded at: the pipeline's `DOCUMENT` class (`encoding.DOCUMENT`,
held equal by tests/unit/search/test_views.py), named here so the ranking core needs no part
of the encoder."""


class Tool(Protocol):
    """What a view reads of a catalog function (`corpus.Tool` has it)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...


VIEW_LIMIT = 5000  # chosen: above it the views would double the index's memory
"""Catalogs larger than this get no views (their vectors would double the index's memory)."""
RECHECK_S = 1.0  # chosen: short against the embedding of a catalog's views
"""How often a call looks again for views that were queued for embedding."""

ViewCosines = Callable[[Sequence[str]], tuple[list[float], list[float]]]
"""`(ids) → (description cosines, action cosines)` of one request."""
SecondCosines = Callable[[Sequence[str]], list[float]]
"""`(ids) → cosines` of a request's second embedding (`second_query.py`) to the indexed view."""


def action_view(function_id: str) -> str:
    """The id's words as a phrase, last segment first: `mailer::send` → "send mailer",
    `dining::updateMenuItem` → "update menu item dining"."""
    segments = [" ".join(word.lower() for word in ID_WORD.findall(segment))
                for segment in function_id.split("::")]
    return " ".join(segment for segment in reversed(segments) if segment) or function_id


def description_view(tool: Tool) -> str:
    """The slim description alone; the id when the function has none."""
    return tool.description or tool.name


def view_texts(tools: Sequence[Tool]) -> list[str]:
    """Every tool's description view, then every tool's action view (corpus order)."""
    return [description_view(t) for t in tools] + [action_view(t.name) for t in tools]


@dataclass(frozen=True)
class Views:
    """The stacked view vectors of one catalog (unit rows, corpus order)."""

    rows: dict[str, int]
    description: Any
    action: Any

    def cosines(self, ids: Sequence[str], vector: Any) -> tuple[list[float], list[float]]:
        """The cosines of a unit request vector to the views of `ids` (0 for an unknown id)."""
        import numpy as np

        at = [self.rows.get(doc_id, -1) for doc_id in ids]
        unknown = min(at, default=0) < 0
        known = np.asarray([max(i, 0) for i in at] if unknown else at, dtype=np.intp)
        desc = (self.description[known] @ vector).tolist()
        act = (self.action[known] @ vector).tolist()
        if unknown:
            desc = [c if i >= 0 else 0.0 for c, i in zip(desc, at)]
            act = [c if i >= 0 else 0.0 for c, i in zip(act, at)]
        return desc, act

    @classmethod
    def of(cls, tools: Sequence[Tool], vectors: Any) -> Views:
        """`vectors`: the rows of `view_texts(tools)`."""
        import numpy as np

        stacked = np.asarray(vectors, dtype=np.float32)
        n = len(tools)
        return cls({t.name: i for i, t in enumerate(tools)}, stacked[:n], stacked[n:2 * n])


class ViewVectors:
    """The views of one corpus: assembled from the vector cache once all are there, or from
    vectors embedded for them (`assemble`)."""

    def __init__(self, tools: Sequence[Tool], clock: Callable[[], float] = time.monotonic) -> None:
        self.tools = tuple(tools)
        self.views: Views | None = None
        self.clock = clock
        self._checked: float | None = None

    @property
    def enabled(self) -> bool:
        return 0 < len(self.tools) <= VIEW_LIMIT

    def get(self, pipeline: Any) -> Views | None:
        """The views when every vector is known; otherwise queue the missing texts for
        background embedding (looked at again after `RECHECK_S`) and return None."""
        if self.views is not None or not self.enabled or pipeline is None:
            return self.views
        now = self.clock()
        if self._checked is not None and now - self._checked < RECHECK_S:
            return None
        self._checked = now
        texts = view_texts(self.tools)
        found = pipeline.cached(texts, DOCUMENT)
        if any(vector is None for vector in found):
            pipeline.warm(texts, kind=DOCUMENT)
            return None
        self.views = Views.of(self.tools, found)
        return self.views

    def assemble(self, vectors: Any) -> Views:
        """Keep and return the views made of `vectors` (the rows of `view_texts(self.tools)`,
        embedded by the caller: `dense_lane.embed_views`)."""
        self.views = Views.of(self.tools, vectors)
        return self.views
