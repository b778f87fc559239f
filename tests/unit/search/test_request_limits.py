"""Size limits of `directory::search_functions` (issue 33, item 1): the schema publishes a
maximum length per capability and a maximum count per request; a request over either is
refused with D610 before any search work runs, and one at the limits is searched."""

from __future__ import annotations

import pytest
from search_fakes import CATALOG, PeerEngine, ids

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.errors import DirectoryError
from iii_directory.functions.search import SURFACE
from iii_directory.search import sliced_queries
from iii_directory.search.request_limits import (CAPABILITY_MAX_CHARS, REQUEST_MAX_CAPABILITIES,
                                                 check_sizes, validate_capabilities)

SEARCH = "directory::search_functions"


@pytest.fixture
def directory(settings: Settings) -> Directory:
    return Directory(settings=settings, engine=PeerEngine(CATALOG))


def padded(text: str, length: int) -> str:
    """`text` followed by distinct filler words up to exactly `length` characters."""
    words = [text]
    n = 0
    while len(" ".join(words)) < length:
        words.append(f"detail{n}")
        n += 1
    return " ".join(words)[:length]


def test_the_schema_publishes_both_limits() -> None:
    search = next(f for f in SURFACE.functions if f.id == SEARCH)
    capabilities = search.request_schema()["properties"]["capabilities"]
    assert capabilities["maxItems"] == REQUEST_MAX_CAPABILITIES
    assert capabilities["items"]["maxLength"] == CAPABILITY_MAX_CHARS


def test_limits_count_code_points_not_bytes() -> None:
    check_sizes(["é" * CAPABILITY_MAX_CHARS])  # 1,024 bytes of UTF-8, 512 code points
    with pytest.raises(DirectoryError) as caught:
        check_sizes(["é" * (CAPABILITY_MAX_CHARS + 1)])
    assert caught.value.code == "D610"


def test_an_over_long_capability_names_its_position_and_the_limit() -> None:
    long = padded("send an email to a customer", 20_000)
    with pytest.raises(DirectoryError) as caught:
        validate_capabilities(["send an sms", long])
    message = caught.value.message
    assert caught.value.code == "D610"
    assert message.startswith("D610 invalid_input: capability 2 is 20,000 characters long")
    assert f"at most {CAPABILITY_MAX_CHARS} are accepted" in message
    assert len(message) < 600  # the pasted text is not echoed back


def test_too_many_capabilities_are_refused_and_64_are_kept_and_dropped() -> None:
    many = [f"capability {i}" for i in range(REQUEST_MAX_CAPABILITIES + 1)]
    with pytest.raises(DirectoryError) as caught:
        validate_capabilities(many)
    assert caught.value.code == "D610" and "65 capabilities sent" in caught.value.message
    kept, dropped = validate_capabilities(many[:-1])
    assert len(kept) == 18 and len(dropped) == REQUEST_MAX_CAPABILITIES - 18


async def test_a_request_at_the_limit_is_searched(directory: Directory) -> None:
    capability = padded("send an email to a customer", CAPABILITY_MAX_CHARS)
    response = await directory.invoke(SEARCH, {"capabilities": [capability]})
    assert ids(response)[0] == "mail::send"


async def test_an_over_limit_request_does_no_search_work(directory: Directory,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []
    real = sliced_queries.make_query
    monkeypatch.setattr(sliced_queries, "make_query", lambda c: made.append(c) or real(c))
    long = padded("send an email", CAPABILITY_MAX_CHARS + 1)
    with pytest.raises(DirectoryError) as caught:
        await directory.invoke(SEARCH, {"capabilities": ["send an sms", long]})
    assert caught.value.code == "D610"
    assert made == []
    response = await directory.invoke(SEARCH, {"capabilities": ["send an sms"]})
    assert made == ["send an sms"] and response["search_mode"] == "lexical"
