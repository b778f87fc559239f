"""Re-export of `iii_directory.exclusions` (the rule moved below `search` and `sources`, which
both apply it); search modules keep importing it from here."""

from ..exclusions import (
    DENYLIST,
    ENGINE_CONTROL_PREFIXES,
    SEARCH_FUNCTION_ID,
    is_excluded,
    is_excluded_id,
    is_internal,
)

__all__ = [
    "DENYLIST",
    "ENGINE_CONTROL_PREFIXES",
    "SEARCH_FUNCTION_ID",
    "is_excluded",
    "is_excluded_id",
    "is_internal",
]
