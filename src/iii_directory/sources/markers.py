"""Re-export of `content.markers`: the completion markers moved into `content`, below the
downloads that write them and the agent and kit views that read them (DESIGN.md layers)."""

from ..content.markers import (
    MARKER_NAME,
    MARKER_SCHEMA,
    CompletionMarker,
    all_markers,
    has_marker,
    marker_path,
    parse_marker,
    read_marker,
    write_marker,
)

__all__ = [
    "MARKER_NAME",
    "MARKER_SCHEMA",
    "CompletionMarker",
    "all_markers",
    "has_marker",
    "marker_path",
    "parse_marker",
    "read_marker",
    "write_marker",
]
