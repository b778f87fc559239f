"""The static lane through the engine protocol: the worker, as on a host without the `dense`
extra, fuses BM25 with `_rank.static` and still reports `search_mode` lexical (issue 19)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from iii_directory.config import Settings
from iii_directory.search.service import SearchService

pytestmark = [pytest.mark.wire, pytest.mark.timeout(60)]

SEARCH = "directory::search_functions"


def ids(response: dict[str, Any]) -> list[str]:
    return [f["function_id"] for w in response["workers"] for f in w["functions"]]


async def echo(data: Any) -> Any:
    return data


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"registry_search": False})


async def test_static_lane_serves_lexical_search_over_the_wire(wire: Any) -> None:
    engine = wire.engine
    for function_id, description in [
        ("sms::send", "Send an SMS text message to a phone number."),
        ("sms::status", "Check the delivery status of a sent SMS."),
        ("weather::forecast", "Get the weather forecast for a city."),
        ("weather::alerts", "List severe weather alerts for a region."),
    ]:
        engine.add_function(function_id, echo, description=description,
                            request_format={"type": "object", "properties": {"text": {}}})
    service = wire.directory.service(SearchService)
    service.static.enabled = True  # as auto does on a host without the dense extra
    with anyio.fail_after(10):
        while True:
            response = await wire.call(SEARCH, {"capabilities": ["text a message to my phone"]})
            if "sms::send" in ids(response):
                break
            await anyio.sleep(0.05)
    assert response["search_mode"] == "lexical"
    assert ids(response)[0] == "sms::send"
    built = service.static._index
    assert built is not None and built[0] == service.corpus.fingerprint
    assert "sms::send" in built[1]


async def test_an_all_no_call_with_the_static_lane_returns_no_workers_and_says_so(wire: Any) -> None:
    """The calibrated decision of the static family (issue 18) empties every lane of a call that
    nothing serves; the guidance says nothing matched."""
    engine = wire.engine
    for function_id, description in [
        ("sms::send", "Send an SMS text message to a phone number."),
        ("weather::forecast", "Get the weather forecast for a city."),
    ]:
        engine.add_function(function_id, echo, description=description,
                            request_format={"type": "object", "properties": {"text": {}}})
    service = wire.directory.service(SearchService)
    service.static.enabled = True
    with anyio.fail_after(10):
        while "sms::send" not in ids(await wire.call(SEARCH, {"capabilities": ["send an sms"]})):
            await anyio.sleep(0.05)
    response = await wire.call(SEARCH, {"capabilities": [
        "qzvx wrplkt hhgrk", "simmer the onions gently until golden",
        "summarise the text I pasted above", "the hedge needs trimming again"]})
    assert response["workers"] == []
    assert response["guidance"].startswith("No functions matched these capabilities")
    assert service.static._index is not None


TIMER = [
    ("timer::repeat", "Register a recurring job that calls a function on a weekly or daily timetable."),
    ("timer::once", "Call a function one time at a chosen future date and hour."),
    ("timer::list", "List the registered jobs and when each fires next."),
    ("timer::stop", "Remove a registered job so it never fires again."),
    ("sms::send", "Send an SMS text message to a phone number."),
    ("weather::forecast", "Get the weather forecast for a city."),
]


async def test_the_static_lane_vouches_for_a_request_without_a_shared_content_word(
        wire: Any) -> None:
    """`schedule the report for every weekday morning` shares no content word with any id, so
    the evidence floor refuses it in lexical mode; with the static lane, one worker holds its
    whole static head and the static calibrated score clears even odds (`answerability.vouches`),
    so it is answered — and small talk still is not."""
    for function_id, description in TIMER:
        wire.engine.add_function(function_id, echo, description=description,
                                 request_format={"type": "object", "properties": {"at": {}}})
    request = {"capabilities": ["schedule the report for every weekday morning"]}
    service = wire.directory.service(SearchService)
    with anyio.fail_after(10):
        while "sms::send" not in ids(await wire.call(SEARCH, {"capabilities": ["send an sms"]})):
            await anyio.sleep(0.05)
    service.static.enabled = False
    assert (await wire.call(SEARCH, request))["workers"] == []
    service.static.enabled = True
    response = await wire.call(SEARCH, request)
    assert response["search_mode"] == "lexical"
    assert ids(response)[0] == "timer::repeat"
    chatter = await wire.call(SEARCH, {"capabilities": ["what a lovely sunny morning it was"]})
    assert chatter["workers"] == []


async def test_the_static_expansion_finds_a_function_through_a_nearby_catalog_word(
        wire: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """`watermark at 200 pixels wide` matches one word of one function, so its lexical lane is
    empty; the static expansion adds the catalog word nearest `wide` (`width`) and BM25 then
    finds `image::watermark` (`ranking/static_expansion.py`). Without the expansion (no neighbour
    can reach cosine 1.01) the lane stays empty."""
    for function_id, description in [
        ("image::watermark", "Stamp a watermark of a given width on an image."),
        ("files::read", "Read a file's contents."),
        ("mail::send", "Send an email message to recipients."),
        ("mail::search", "Search the mailbox for messages."),
        ("sms::send", "Send an SMS text message to a phone number."),
        ("sms::status", "Check the delivery status of a sent SMS."),
        ("weather::forecast", "Get the weather forecast for a city."),
    ]:
        wire.engine.add_function(function_id, echo, description=description,
                                 request_format={"type": "object", "properties": {"at": {}}})
    from iii_directory.search.ranking import static_expansion, static_fusion

    # the worker's own `directory::*` functions fill the static head, so the static cut alone
    # would answer this request too: that path is turned off to see the expansion's
    monkeypatch.setattr(static_fusion, "ALONE_COSINE", 1.01)
    service = wire.directory.service(SearchService)
    service.static.enabled = True
    with anyio.fail_after(10):
        while "sms::send" not in ids(await wire.call(SEARCH, {"capabilities": ["send an sms"]})):
            await anyio.sleep(0.05)
    request = {"capabilities": ["watermark at 200 pixels wide"]}
    response = await wire.call(SEARCH, request)
    assert response["search_mode"] == "lexical"
    assert ids(response)[0] == "image::watermark"
    monkeypatch.setattr(static_expansion, "NEIGHBOUR_COSINE", 1.01)
    request = {"capabilities": ["watermark it at 200 pixels wide"]}  # not a cached answer
    # without the expansion only the single-term fallback finds it, as a `low` candidate
    # (issue 31; before, an empty answer)
    fallback = await wire.call(SEARCH, request)
    assert [(f["function_id"], f["confidence"]) for w in fallback["workers"]
            for f in w["functions"]] == [("image::watermark", "low")]
