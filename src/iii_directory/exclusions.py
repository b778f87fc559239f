"""Which functions never take part in any search lane (docs/rules/search.md §3.2).

Shared by the search lanes and the registry proxy, whose worker card drops the same ids, so it
sits below both (docs/architecture.md, "Layers").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SEARCH_FUNCTION_ID = "directory::search_functions"

ENGINE_CONTROL_PREFIXES: tuple[str, ...] = (
    "engine::functions::",
    "engine::workers::",
    "engine::triggers::",
    "engine::registered-triggers::",
    "engine::channels::",
    "engine::health",
)
"""Engine control-plane prefixes (chosen for this project): the catalog, workers, triggers and
channels of the engine, and `engine::health`, which reports on the engine itself. Other
`engine::*` functions, such as `engine::traces::list` or `engine::queue::enqueue`, stay
searchable."""

DENYLIST: frozenset[str] = frozenset({SEARCH_FUNCTION_ID, "state::claim-namespace"})


def is_internal(metadata: Any) -> bool:
    """`metadata.internal == true` (any other value, or no metadata, is not internal)."""
    return isinstance(metadata, Mapping) and metadata.get("internal") is True


def is_excluded_id(function_id: str) -> bool:
    """The id-only exclusions: the search itself, the denylist, the engine control plane and
    configuration-change handlers."""
    return (
        function_id in DENYLIST
        or function_id.startswith(ENGINE_CONTROL_PREFIXES)
        or function_id.endswith("::on-config-change")
    )


def is_excluded(function_id: str, metadata: Any = None) -> bool:
    """True when `function_id` must never be a search candidate."""
    return is_excluded_id(function_id) or is_internal(metadata)
