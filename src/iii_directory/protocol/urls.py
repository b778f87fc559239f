"""The engine URL rule: a usable `ws://` or `wss://` URL (docs/rules/protocol.md §2)."""

from __future__ import annotations

from urllib.parse import urlsplit


def validate_url(url: str) -> str:
    """Return `url` when it is a usable `ws://` / `wss://` URL; raise ValueError naming the
    problem otherwise."""
    if not isinstance(url, str) or not url.strip():
        raise ValueError("engine URL is empty")
    url = url.strip()
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"malformed engine URL {url!r}: {exc}") from None
    if parts.scheme not in ("ws", "wss"):
        raise ValueError(f"malformed engine URL {url!r}: the scheme must be ws:// or wss://")
    if not parts.hostname:
        raise ValueError(f"malformed engine URL {url!r}: no host")
    if port == 0:
        raise ValueError(f"malformed engine URL {url!r}: port 0")
    return url
