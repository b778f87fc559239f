"""A tolerant W3C baggage parser (docs/rules/protocol.md §7).

Entries split on `,`; each `key=value` may be followed by `;properties` (dropped); keys and
values are trimmed and percent-decoded; malformed entries are skipped; a missing or unparsable
header means no baggage.
"""

from __future__ import annotations

from urllib.parse import unquote

MAX_BAGGAGE_CHARS = 8192


def parse_baggage(header: str | None) -> dict[str, str]:
    if not header or not isinstance(header, str) or len(header) > MAX_BAGGAGE_CHARS:
        return {}
    entries: dict[str, str] = {}
    for item in header.split(","):
        member = item.split(";", 1)[0]
        if "=" not in member:
            continue
        key, _, value = member.partition("=")
        try:
            key = unquote(key.strip(), errors="strict")
            value = unquote(value.strip(), errors="strict")
        except UnicodeDecodeError:
            continue
        if key:
            entries[key] = value
    return entries


def format_baggage(entries: dict[str, str]) -> str:
    from urllib.parse import quote

    return ",".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in entries.items())
