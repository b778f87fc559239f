"""The response of one `directory::search_functions` call (docs/rules/search.md §7.3, §11): the batches'
selections merged with `high` candidates first (`confidence.high_first`), split by session
memory, grouped by worker with each function's confidence, installables, side lanes, the
guidance and the mode that produced the results."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .call import SearchCall, best_tier
from .ranking.confidence import Confidence, high_first, merged_levels
from .guidance import GuidanceInput, compose
from .memory import PREAMBLE_GUIDANCE, PREAMBLE_INSTALL, SessionMemory
from .registry_lane import INSTALL_FUNCTION, merge_installables
from .ranking.select import concatenate, group_by_namespace
from .side_lanes import SideResult

if TYPE_CHECKING:
    from collections.abc import Sequence


@dataclass
class BatchResult:
    """What one batch of up to six capabilities contributes to the response."""

    selection: list[str] = field(default_factory=list)
    tier: str | None = None
    installables: list[dict[str, Any]] = field(default_factory=list)
    levels: dict[str, Confidence] = field(default_factory=dict)  # confidence.id_confidence
    low_only: list[str] = field(default_factory=list)  # capabilities graded `low`


def respond(call: SearchCall, memory: SessionMemory, results: Sequence[BatchResult],
            side: dict[str, SideResult], dropped: list[str], started: float) -> dict[str, Any]:
    """The response mapping of one call (`SearchFunctionsResponse`'s fields)."""
    corpus = call.corpus
    session = call.ctx.session_id
    levels = merged_levels([r.levels for r in results])
    selected = high_first(concatenate([r.selection for r in results]), levels)
    split = memory.split(session, corpus.fingerprint, selected)
    workers = group_by_namespace(split.new, corpus.descriptions, levels)
    installables = merge_installables([r.installables for r in results])
    skills = side.get("skills", SideResult(None))
    triggers = side.get("triggers", SideResult(None))

    workers_empty = not workers
    compose_add = INSTALL_FUNCTION in selected
    first_main = True
    if not (workers_empty and not split.repeated):
        first_main = memory.first_send(session, corpus.fingerprint, PREAMBLE_GUIDANCE)
    first_install = True
    if installables or compose_add:
        first_install = memory.first_send(session, corpus.fingerprint, PREAMBLE_INSTALL)
    mode = best_tier([r.tier for r in results])
    if skills.judged or triggers.judged:
        mode = "judge"
    guidance = compose(GuidanceInput(
        workers_empty=workers_empty,
        suppressed=split.repeated,
        has_installables=bool(installables),
        compose_add_selected=compose_add,
        first_main=first_main,
        first_install_workflow=first_install,
        has_skills=bool(skills.rows),
        has_triggers=bool(triggers.rows),
        dropped=dropped,
        low_only=[text for r in results for text in r.low_only] if workers else [],
        # a shed call of a model-backed mode that the judge did not answer either
        shed=call.shed and mode == "lexical" and call.settings.function_search_mode != "lexical",
    ))
    response: dict[str, Any] = {"guidance": guidance, "workers": workers}
    if installables:
        response["installable"] = installables
    if skills.rows:
        response["skills"] = skills.rows
    if triggers.rows:
        response["triggers"] = triggers.rows
    response["search_mode"] = mode
    response["latency_ms"] = (time.perf_counter() - started) * 1000.0
    return response
