"""W3C baggage parsing (protocol.md §7) and the test engine's `iii.function.id` rewrite."""

from __future__ import annotations

import pytest

from iii_directory.protocol.baggage import format_baggage, parse_baggage
from iii_directory.testing.engine import rewrite_baggage


@pytest.mark.parametrize("header, expected", [
    (None, {}),
    ("", {}),
    ("iii.session.id=s-123,iii.message.id=m-1", {"iii.session.id": "s-123", "iii.message.id": "m-1"}),
    (" k = v ;prop=1 , other=x", {"k": "v", "other": "x"}),
    ("k=a%20b,%6Bey=%E2%9C%93", {"k": "a b", "key": "✓"}),
    ("novalue,=empty,k=v", {"k": "v"}),
    ("k=%FF", {}),
    ("k=1,k=2", {"k": "2"}),
])
def test_parse_baggage(header: str | None, expected: dict[str, str]) -> None:
    assert parse_baggage(header) == expected


def test_oversized_header_means_no_baggage() -> None:
    assert parse_baggage("k=" + "v" * 9000) == {}


def test_format_round_trips() -> None:
    entries = {"iii.session.id": "s 1", "tenant.id": "a,b"}
    assert parse_baggage(format_baggage(entries)) == entries


def test_rewrite_replaces_or_appends_function_id() -> None:
    assert rewrite_baggage(None, "a::b") is None
    assert rewrite_baggage("iii.session.id=s,iii.function.id=old", "a::b") == "iii.session.id=s,iii.function.id=a::b"
    assert rewrite_baggage("iii.session.id=s", "a::b") == "iii.session.id=s,iii.function.id=a::b"
