"""The installable registry lane (search.md §8)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from search_fakes import CATALOG, PeerEngine, ids, search

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.search import guidance as g
from iii_directory.search.ranking.query import make_query
from iii_directory.search.registry_lane import assemble, list_queries, merge_installables
from iii_directory.testing.registry import MockRegistry


def queries(*texts: str) -> list[Any]:
    return [make_query(t) for t in texts]


def test_list_query_expansion() -> None:
    assert list_queries(queries("send an email message")) == ["send an email message", "send", "email", "message"]
    assert list_queries(queries("the and of")) == ["the and of"]
    six = [f"query number {i}" for i in range(6)]
    assert list_queries(queries(*six)) == six
    assert list_queries(queries("resize image", "send sms")) == [
        "resize image", "send sms", "resize", "send", "image", "sms"]


def contract(name: str, description: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "description": description,
            "request_schema": {"type": "object", "properties": {"x": {"type": "string"}}}, **extra}


@pytest.fixture
def registry() -> Iterator[MockRegistry]:
    with MockRegistry() as server:
        server.add_worker("resend", version="2.1.0", description="Transactional email delivery with verified sending domains. Fast.", functions=[
            contract("resend::send-email", "Send a transactional email message. Supports HTML."),
            contract("resend::list-domains", "List verified sending domains."),
            contract("resend::webhook", "Receive delivery events.", metadata={"internal": True}),
            contract("resend::on-config-change", "Reload settings."),
            contract("mail::send", "Send an email (already installed here)."),
        ])
        server.add_worker("postal", version="0.3.0", description="Self-hosted email server.", functions=[
            contract("postal::send-email", "Send an email message through a postal server."),
        ])
        server.add_worker("mailgun", version="1.0.0", description="Bulk email sending.", functions=[
            contract("mailgun::send-email", "Send an email message in bulk."),
        ])
        server.add_worker("mail", version="9.0.0", description="The installed mail worker, email.", functions=[
            contract("mail::send", "Send an email message."),
        ])
        yield server


@pytest.fixture
def directory(settings: Settings, registry: MockRegistry) -> Directory:
    updated = settings.model_copy(update={"registry_url": registry.url, "registry_search": True})
    return Directory(settings=updated, engine=PeerEngine(CATALOG))


async def test_installables_are_found_grouped_and_capped(directory: Directory) -> None:
    response = await search(directory, "send email message")
    installable = response["installable"]
    assert len(installable) == 2
    names = [entry["name"] for entry in installable]
    assert "mail" not in names  # an installed namespace is never installable
    first = installable[0]
    assert set(first) == {"name", "version", "description", "functions", "install"}
    assert first["install"] == {"function": "compose::add", "payload": {"worker": first["name"]}}
    returned = [f["function_id"] for entry in installable for f in entry["functions"]]
    assert "resend::webhook" not in returned and "resend::on-config-change" not in returned
    assert "mail::send" not in returned
    resend = next(entry for entry in installable if entry["name"] == "resend")
    assert resend["version"] == "2.1.0"
    assert resend["description"] == "Transactional email delivery with verified sending domains."
    assert {"function_id": "resend::send-email",
            "description": "Send a transactional email message."} in resend["functions"]
    assert ids(response)[0] == "mail::send"
    assert g.INSTALL_NOTE in response["guidance"] and g.INSTALL_WORKFLOW in response["guidance"]


async def test_install_guidance_when_only_installables_match(directory: Directory) -> None:
    response = await search(directory, "list verified sending domains")
    assert response["workers"] == []
    assert response["installable"][0]["functions"][0]["function_id"] == "resend::list-domains"
    assert response["guidance"].startswith(g.INSTALL_GUIDANCE)


async def test_registry_failures_give_an_empty_section(directory: Directory, registry: MockRegistry) -> None:
    registry.fail("/w", 500)
    response = await search(directory, "send email message")
    assert "installable" not in response
    assert ids(response)[0] == "mail::send"


async def test_failed_cards_are_skipped(directory: Directory, registry: MockRegistry) -> None:
    registry.fail("/w/resend", 502)
    response = await search(directory, "send email message")
    assert "resend" not in [entry["name"] for entry in response.get("installable", [])]


async def test_registry_search_can_be_turned_off(directory: Directory, registry: MockRegistry) -> None:
    directory.apply_settings(directory.settings.model_copy(update={"registry_search": False}))
    response = await search(directory, "send email message")
    assert "installable" not in response
    assert registry.count("/w") == 0


def test_assemble_caps_new_owners_at_two() -> None:
    from iii_directory.search.registry_lane import Contract, Listed

    pool = {f"w{i}::f": Contract(f"w{i}::f", f"w{i}", "Do. More.", {}) for i in range(3)}
    pool["w0::g"] = Contract("w0::g", "w0", "Other.", {})
    workers = {f"w{i}": Listed(f"w{i}", "1.0", "Worker.") for i in range(3)}
    entries = assemble(["w0::f", "w1::f", "w2::f", "w0::g"], pool, workers)
    assert [e["name"] for e in entries] == ["w0", "w1"]
    assert [f["function_id"] for f in entries[0]["functions"]] == ["w0::f", "w0::g"]
    assert entries[0]["functions"][0]["description"] == "Do."


def test_merge_across_batches() -> None:
    first = [{"name": "a", "functions": [{"function_id": "a::1", "description": ""}]}]
    second = [{"name": "a", "functions": [{"function_id": "a::1", "description": ""},
                                          {"function_id": "a::2", "description": ""}]},
              {"name": "b", "functions": [{"function_id": "b::1", "description": ""}]},
              {"name": "c", "functions": [{"function_id": "c::1", "description": ""}]}]
    merged = merge_installables([first, second])
    assert [e["name"] for e in merged] == ["a", "b", "c"]
    assert [f["function_id"] for f in merged[0]["functions"]] == ["a::1", "a::2"]


async def test_a_repeated_search_reads_the_registry_from_the_cache(directory: Directory,
                                                                  registry: MockRegistry) -> None:
    first = await search(directory, "send email message")
    lists, cards = registry.count("/w"), registry.count("/w/resend")
    assert lists > 0 and cards == 1
    second = await search(directory, "send email message")
    assert second.get("installable") == first.get("installable")
    assert registry.count("/w") == lists and registry.count("/w/resend") == cards  # no request


async def test_the_cache_peeks_answer_only_what_a_request_stored(directory: Directory,
                                                                 registry: MockRegistry) -> None:
    from iii_directory.sources.registry import RegistryClient

    client = directory.service(RegistryClient)
    settings = directory.settings
    assert client.cached_list(settings, search="email") is None
    assert client.cached_record(settings, "resend") is None
    assert client.cached_record(settings, "Not A Name!") is None  # a bad name never matches
    listed = await client.list_workers(settings, search="email")
    record = await client.worker_record(settings, "resend")
    assert client.cached_list(settings, search="email") == listed
    assert client.cached_list(settings, search="mail") is None
    assert client.cached_record(settings, "resend") == record
    client.clear_cache()
    assert client.cached_list(settings, search="email") is None
