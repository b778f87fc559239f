"""iii-directory: a worker for the iii engine serving skills, system prompts, agent profiles,
kits, a workers-registry proxy and hybrid function search."""

from __future__ import annotations

from ._version import __version__

WORKER_NAME = "iii-directory"
DESCRIPTION = (
    "Engine introspection, workers registry proxy, filesystem-backed skills, system prompts, "
    "and agent profiles, kit install and update with reviewed plans, plus hybrid function "
    "search with a conditional pre-generate hint."
)

__all__ = ["DESCRIPTION", "WORKER_NAME", "__version__"]
