"""`directory::registry::workers::{list,info}` through the engine protocol against a real
loopback registry: shapes, forwarding, the TTL cache and its reset on a configuration reload,
and error bodies with their codes."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from iii_directory.config import Settings
from iii_directory.port import EngineCallError
from iii_directory.testing.registry import MockRegistry
from wire_checks import conforms, direct_loopback  # noqa: F401 - direct_loopback is autouse

pytestmark = [pytest.mark.wire, pytest.mark.timeout(60)]


@pytest.fixture
def registry() -> Iterator[MockRegistry]:
    with MockRegistry(page_size=2) as server:
        yield server


@pytest.fixture
def settings(settings: Settings, registry: MockRegistry) -> Settings:
    return settings.model_copy(update={"registry_url": registry.url, "download_timeout_ms": 3000})


def publish(registry: MockRegistry) -> None:
    registry.add_worker(
        "resend", version="1.2.3", description="Send transactional email",
        skills={"skills/index.md": "# Resend", "skills/emails/send.md": "send"},
        functions=[
            {"name": "resend::send", "description": "Send an email",
             "request_schema": {"type": "object"}, "metadata": {"tool": {"label": "Send"}}},
            {"name": "resend::internal-sync", "metadata": {"internal": True}},
        ],
        triggers=[{"name": "resend::delivered", "description": "A delivery event"}],
        readme="# Resend\n\nLong setup prose.",
        envelope={"total_downloads": 40, "author": {"name": "iii", "is_verified": True}},
    )
    registry.add_worker("mailgun", version="0.4.0", description="Email via Mailgun",
                        envelope={"total_downloads": 7})
    registry.add_worker("shell", version="2.0.0", description="Run commands",
                        envelope={"total_downloads": 99, "image": "ghcr.io/iii/shell:2"})


async def test_list_pages_and_search(wire: Any, registry: MockRegistry) -> None:
    publish(registry)
    first = conforms(wire, "directory::registry::workers::list",
                     await wire.call("directory::registry::workers::list", {}))
    assert [w["name"] for w in first["workers"]] == ["shell", "resend"]
    assert first["pagination"] == {"next_cursor": "2", "has_more": True, "page_size": 2}
    assert first["workers"][0]["image"] == "ghcr.io/iii/shell:2"
    assert "image" not in first["workers"][1]
    assert first["workers"][1]["version"] == "1.2.3"  # from latest_version
    assert first["workers"][1]["author"] == {"name": "iii", "pfp": None, "verified": True}
    second = await wire.call("directory::registry::workers::list", {"cursor": "2"})
    assert [w["name"] for w in second["workers"]] == ["mailgun"]
    assert second["pagination"]["has_more"] is False
    found = await wire.call("directory::registry::workers::list",
                            {"search": " email ", "_caller_worker_id": "ignored"})
    assert {w["name"] for w in found["workers"]} == {"resend", "mailgun"}
    assert registry.requests[-1].query == {"search": "email"}
    blank = await wire.call("directory::registry::workers::list", {"search": "  "})
    assert blank == first  # blank search ⇒ no parameter (and a cache hit)
    none = await wire.call("directory::registry::workers::list", {"search": "zzz"})
    assert none["workers"] == []


async def test_list_errors(wire: Any, registry: MockRegistry) -> None:
    registry.fail("/w", "502")
    with pytest.raises(EngineCallError) as caught:
        await wire.call("directory::registry::workers::list", {"search": "x"})
    assert caught.value.code == "D320"
    assert caught.value.message == (
        "D320 registry_error: registry returned HTTP 502. Next: retry shortly.")
    registry.fail("/w", "malformed")
    with pytest.raises(EngineCallError) as caught:
        await wire.call("directory::registry::workers::list", {"search": "y"})
    assert caught.value.message == "D320 registry_error: could not decode the registry response."
    with pytest.raises(EngineCallError) as caught:
        await wire.call("directory::registry::workers::list", {"search": 5})
    assert caught.value.code == "invocation_failed"
    assert 'field "search"' in caught.value.message


async def test_info_card_cache_and_readme(wire: Any, registry: MockRegistry) -> None:
    publish(registry)
    card = conforms(wire, "directory::registry::workers::info",
                    await wire.call("directory::registry::workers::info", {"name": "resend"}))
    assert card["worker"]["name"] == "resend" and card["worker"]["version"] == "1.2.3"
    assert card["api_reference"] == {
        "functions": [{"name": "resend::send", "description": "Send an email"}],
        "triggers": [{"name": "resend::delivered", "description": "A delivery event"}],
    }
    assert card["skills_tree"] == {"skills": [{"path": "skills/index.md"},
                                              {"path": "skills/emails/send.md"}]}
    assert "readme" not in card
    with_readme = await wire.call("directory::registry::workers::info",
                                  {"name": " resend ", "readme": True})
    conforms(wire, "directory::registry::workers::info", with_readme)
    assert with_readme["readme"].startswith("# Resend")
    assert registry.count("/w/resend") == 1 and registry.count("/w/resend/skills") == 1
    assert {r.query["version"] for r in registry.requests} == {"latest"}
    pinned = await wire.call("directory::registry::workers::info",
                             {"name": "resend", "version": "1.2.3"})
    assert pinned["worker"]["version"] == "1.2.3"
    assert registry.requests[-1].query == {"version": "1.2.3"}


async def test_info_errors(wire: Any, registry: MockRegistry) -> None:
    with pytest.raises(EngineCallError) as caught:
        await wire.call("directory::registry::workers::info", {"name": "  "})
    assert caught.value.code == "D311"
    assert "non-empty" in caught.value.message
    with pytest.raises(EngineCallError) as caught:
        await wire.call("directory::registry::workers::info", {"name": "../../admin"})
    assert caught.value.code == "D311"
    assert caught.value.message.startswith(
        'D311 invalid_input: registry worker name "../../admin" is invalid: ')
    with pytest.raises(EngineCallError) as caught:
        await wire.call("directory::registry::workers::info", {"name": "ghost"})
    assert caught.value.code == "D310"
    assert caught.value.message.startswith(
        'D310 not_found: registry worker "ghost" does not exist.')
    assert "404" not in caught.value.message and registry.url not in caught.value.message
    with pytest.raises(EngineCallError) as caught:
        await wire.call("directory::registry::workers::info",
                        {"name": "ghost", "version": "1.0.0", "tag": "latest"})
    assert caught.value.code == "invocation_failed"
    assert "either version OR tag" in caught.value.message
    assert registry.count("/w/ghost") == 1  # the bad requests never reached the registry


async def test_hanging_registry_times_out(wire: Any, registry: MockRegistry,
                                          settings: Settings) -> None:
    registry.fail("/w/slow", "hang")
    registry.set("/w/slow/skills", json={"skills": []})
    wire.directory.apply_settings(settings.model_copy(update={"download_timeout_ms": 300}))
    started = time.monotonic()
    with pytest.raises(EngineCallError) as caught:
        await wire.call("directory::registry::workers::info", {"name": "slow"})
    assert caught.value.code == "D320"
    assert caught.value.message == (
        "D320 registry_error: could not reach the registry. Next: retry shortly.")
    assert time.monotonic() - started < 5.0


async def test_configuration_reload_clears_the_cache(wire: Any, registry: MockRegistry,
                                                     settings: Settings) -> None:
    publish(registry)
    await wire.call("directory::registry::workers::info", {"name": "resend"})
    await wire.call("directory::registry::workers::info", {"name": "resend"})
    assert registry.count("/w/resend") == 1
    tuned = settings.model_copy(update={"hint_min_workers": 5}).model_dump(mode="json")
    await wire.engine.set_config(tuned)
    with anyio.fail_after(10):
        while wire.directory.settings.hint_min_workers != 5:
            await anyio.sleep(0.05)
    await wire.call("directory::registry::workers::info", {"name": "resend"})
    assert registry.count("/w/resend") == 2  # any reload clears the cache
    with MockRegistry() as other:
        other.add_worker("resend", version="9.0.0")
        value = settings.model_copy(update={"registry_url": other.url}).model_dump(mode="json")
        await wire.engine.set_config(value)
        with anyio.fail_after(10):
            while wire.directory.settings.registry_url != other.url:
                await anyio.sleep(0.05)
        card = await wire.call("directory::registry::workers::info", {"name": "resend"})
        assert card["worker"]["version"] == "9.0.0"
        assert other.count("/w/resend") == 1
