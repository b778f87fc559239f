"""What one `directory::search_functions` request may hold, by count and by size.

A capability is a short phrase an agent writes ("send an email to a customer"); the longest
of the 710 graded capabilities in benchmarks/data is 210 characters (a JSON Schema quoted
inline) and the 99th percentile 111. `CAPABILITY_MAX_CHARS` (512, about 2.4× the longest) is
published as the schema's `items.maxLength`; a longer entry is pasted content, not a
capability, and the request is refused with D610 before any work is done. Refused rather
than cut: a cut keeps whichever part happens to come first, and the agent would read
confident results for a request it did not make; the error names the entry and the limit so
the next call succeeds. `REQUEST_MAX_CAPABILITIES` (64, `maxItems`) bounds the whole request:
only the first `MAX_CAPABILITIES` (18) are searched and the rest are named back in the
guidance, so one request holds at most 64 × 512 characters of text. Lengths are counted in
Unicode code points, as JSON Schema's `maxLength` counts them. Figures: docs/record/performance.md,
"Size limits".
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import DirectoryError, invalid_input

CAPABILITY_MAX_CHARS = 512  # chosen: 2.4× the longest of 710 graded capabilities (210 characters)
"""Longest accepted capability, in Unicode code points (the schema's `items.maxLength`)."""
MAX_CAPABILITIES = 18  # spec: docs/rules/search.md §7.1
"""How many capabilities one call searches (docs/rules/search.md §7); the rest are named back."""
REQUEST_MAX_CAPABILITIES = 64  # chosen: room for a request that names more than it searches
"""Most capabilities one request may send (the schema's `maxItems`); 18 are searched."""
SIZE_CODE = "D610"

EMPTY_MESSAGE = "provide at least one capability"
BLANK_MESSAGE = "capabilities must not be blank"


def capabilities_schema() -> dict[str, object]:
    """The published bounds of the `capabilities` array (merged into its JSON Schema)."""
    return {"minItems": 1, "maxItems": REQUEST_MAX_CAPABILITIES, "uniqueItems": True,
            "items": {"type": "string", "minLength": 1, "maxLength": CAPABILITY_MAX_CHARS}}


def _preview(text: str, width: int = 60) -> str:
    """The start of an over-long entry, for the error message (never the whole text)."""
    head = " ".join(text[:width].split())
    return head + ("…" if len(text) > width else "")


def check_sizes(capabilities: Sequence[str]) -> None:
    """Raise D610 when the request sends more than `REQUEST_MAX_CAPABILITIES` entries or any
    entry is longer than `CAPABILITY_MAX_CHARS`; checked before anything else is done."""
    if len(capabilities) > REQUEST_MAX_CAPABILITIES:
        raise invalid_input(
            SIZE_CODE,
            f"{len(capabilities)} capabilities sent; at most {REQUEST_MAX_CAPABILITIES} per request "
            f"(the first {MAX_CAPABILITIES} are searched). Send the unmet ones, {MAX_CAPABILITIES} "
            "at most, in one call.")
    for position, capability in enumerate(capabilities):
        if len(capability) > CAPABILITY_MAX_CHARS:
            raise invalid_input(
                SIZE_CODE,
                f"capability {position + 1} is {len(capability):,} characters long "
                f'("{_preview(capability)}"); at most {CAPABILITY_MAX_CHARS} are accepted. Write '
                "each unmet capability as a short phrase (an action and its object, e.g. \"send an "
                "email to a customer\"), split a compound need into several entries, and leave "
                "pasted content, documents and payloads out.")


def validate_capabilities(capabilities: Sequence[str]) -> tuple[list[str], list[str]]:
    """The kept (first 18) and dropped capabilities; bare errors for an empty list or a blank
    kept entry, D610 (`check_sizes`) for a request over the size limits."""
    if not capabilities:
        raise DirectoryError.plain(EMPTY_MESSAGE)
    check_sizes(capabilities)
    kept, dropped = list(capabilities[:MAX_CAPABILITIES]), list(capabilities[MAX_CAPABILITIES:])
    if any(not c.strip() for c in kept):
        raise DirectoryError.plain(BLANK_MESSAGE)
    return kept, dropped
