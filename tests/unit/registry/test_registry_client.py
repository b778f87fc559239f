"""RegistryClient against a real loopback HTTP registry (surfaces.md §10.1–10.2, §9.3)."""

from __future__ import annotations

import time

import pytest

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.errors import DirectoryError
from iii_directory.sources.registry import USER_AGENT, RegistryClient
from iii_directory.sources.registry_records import (
    RegistryFailure,
    RegistryNotFound,
    info_name_error,
    normalize_worker,
    worker_name_problem,
)
from iii_directory.testing.registry import MockRegistry, Reply

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]


# -- list ------------------------------------------------------------------------------------


async def test_list_normalises_rows_and_defaults(client: RegistryClient, reg_settings: Settings,
                                                 registry: MockRegistry) -> None:
    registry.set("/w", json={"workers": [
        {"name": "resend", "latest_version": "1.2.3", "description": "Email",
         "author": {"name": "iii", "is_verified": True}, "image": "ghcr.io/x:1",
         "dependencies": [{"name": "state", "version": "^1"}, {"name": "bad"}],
         "supported_targets": ["x86_64-unknown-linux-gnu", 7], "total_downloads": 12},
        {"description": "nameless row"},
        {"name": "mailgun", "version": "0.1.0", "total_downloads": -3, "config": None},
    ]})
    page = await client.list_workers(reg_settings)
    assert [w["name"] for w in page["workers"]] == ["resend", "mailgun"]
    resend, mailgun = page["workers"]
    assert resend["version"] == "1.2.3"
    assert resend["author"] == {"name": "iii", "pfp": None, "verified": True}
    assert resend["image"] == "ghcr.io/x:1"
    assert resend["dependencies"] == [{"name": "state", "version": "^1"}]
    assert resend["supported_targets"] == ["x86_64-unknown-linux-gnu"]
    assert resend["total_downloads"] == 12
    assert "image" not in mailgun
    assert mailgun == {
        "name": "mailgun", "description": None, "type": None, "version": "0.1.0", "repo": None,
        "config": {}, "supported_targets": [], "total_downloads": 0, "dependencies": [],
        "author": None,
    }
    assert page["pagination"] == {"next_cursor": None, "has_more": False, "page_size": 0}


async def test_list_forwards_only_present_parameters(client: RegistryClient,
                                                     reg_settings: Settings,
                                                     registry: MockRegistry) -> None:
    for name in ("alpha", "beta", "gamma", "delta"):
        registry.add_worker(name, description=f"{name} worker")
    first = await client.list_workers(reg_settings)
    assert registry.requests[-1].query == {}
    assert registry.requests[-1].headers["user-agent"] == USER_AGENT
    assert first["pagination"] == {"next_cursor": "3", "has_more": True, "page_size": 3}
    second = await client.list_workers(reg_settings, cursor="3")
    assert registry.requests[-1].query == {"cursor": "3"}
    assert [w["name"] for w in second["workers"]] == ["gamma"]
    found = await client.list_workers(reg_settings, search="beta")
    assert registry.requests[-1].query == {"search": "beta"}
    assert [w["name"] for w in found["workers"]] == ["beta"]


async def test_list_cache_ttl_and_reload(reg_directory: Directory, client: RegistryClient,
                                         reg_settings: Settings, registry: MockRegistry) -> None:
    registry.add_worker("alpha")
    await client.list_workers(reg_settings, search="alpha")
    await client.list_workers(reg_settings, search="alpha")
    assert registry.count("/w") == 1
    await client.list_workers(reg_settings, search="other")
    assert registry.count("/w") == 2
    reg_directory.apply_settings(reg_settings.model_copy(update={"hint_min_workers": 3}))
    await client.list_workers(reg_settings, search="alpha")
    assert registry.count("/w") == 3
    no_cache = reg_settings.model_copy(update={"registry_cache_ttl_ms": 0})
    await client.list_workers(no_cache, search="alpha")
    await client.list_workers(no_cache, search="alpha")
    assert registry.count("/w") == 5


async def test_list_cache_expires(client: RegistryClient, reg_settings: Settings,
                                  registry: MockRegistry) -> None:
    short = reg_settings.model_copy(update={"registry_cache_ttl_ms": 50})
    await client.list_workers(short)
    time.sleep(0.08)
    await client.list_workers(short)
    assert registry.count("/w") == 2


async def test_repointed_registry_url_is_not_served_from_cache(client: RegistryClient,
                                                               reg_settings: Settings,
                                                               registry: MockRegistry) -> None:
    registry.add_worker("alpha")
    assert [w["name"] for w in (await client.list_workers(reg_settings))["workers"]] == ["alpha"]
    with MockRegistry() as other:
        other.add_worker("omega")
        moved = reg_settings.model_copy(update={"registry_url": other.url})
        names = [w["name"] for w in (await client.list_workers(moved))["workers"]]
    assert names == ["omega"]


@pytest.mark.parametrize(("mode", "text"), [
    ("500", "D320 registry_error: registry returned HTTP 500. Next: retry shortly."),
    ("502", "registry returned HTTP 502"),
    ("404", "registry returned HTTP 404"),
    ("malformed", "D320 registry_error: could not decode the registry response."),
    ("truncated", "D320 registry_error: could not reach the registry. Next: retry shortly."),
    ("reset", "could not reach the registry"),
])
async def test_list_failures_are_d320(client: RegistryClient, reg_settings: Settings,
                                      registry: MockRegistry, mode: str, text: str) -> None:
    registry.fail("/w", mode)
    with pytest.raises(DirectoryError) as info:
        await client.list_workers(reg_settings)
    assert info.value.code == "D320"
    assert text in info.value.message
    assert registry.url not in info.value.message
    assert "mock failure" not in info.value.message


async def test_dead_registry_is_unreachable(reg_settings: Settings, client: RegistryClient) -> None:
    with MockRegistry() as gone:
        url = gone.url
    dead = reg_settings.model_copy(update={"registry_url": url})
    with pytest.raises(RegistryFailure) as info:
        await client.list_workers(dead)
    assert info.value.kind == "unreachable"
    assert info.value.message == "D320 registry_error: could not reach the registry. Next: retry shortly."


async def test_hanging_registry_times_out_within_the_bound(client: RegistryClient,
                                                           reg_settings: Settings,
                                                           registry: MockRegistry) -> None:
    registry.fail("/w", "hang")
    quick = reg_settings.model_copy(update={"download_timeout_ms": 300})
    started = time.monotonic()
    with pytest.raises(RegistryFailure) as info:
        await client.list_workers(quick)
    elapsed = time.monotonic() - started
    assert info.value.code == "D320" and info.value.kind == "unreachable"
    assert "300 ms" in info.value.reason
    assert elapsed < 3.0


async def test_slow_body_is_bounded_as_a_whole(client: RegistryClient, reg_settings: Settings,
                                               registry: MockRegistry) -> None:
    registry.set("/w", json={"workers": []}, delay=1.5)
    quick = reg_settings.model_copy(update={"download_timeout_ms": 200})
    with pytest.raises(RegistryFailure):
        await client.list_workers(quick)


async def test_flapping_registry_recovers(client: RegistryClient, reg_settings: Settings,
                                          registry: MockRegistry) -> None:
    registry.add_worker("alpha")
    registry.fail("/w", "500", times=1)
    with pytest.raises(RegistryFailure):
        await client.list_workers(reg_settings)
    page = await client.list_workers(reg_settings)
    assert [w["name"] for w in page["workers"]] == ["alpha"]


# -- info ------------------------------------------------------------------------------------


def publish_resend(registry: MockRegistry) -> None:
    registry.add_worker(
        "resend", version="1.2.3", description="Send email",
        skills={"skills/index.md": "# Resend\n", "skills/emails/send.md": "leaf"},
        functions=[
            {"name": "resend::send", "description": "Send one email",
             "request_schema": {"type": "object"}, "metadata": {"tool": {"label": "x"}}},
            {"name": "resend::sync", "metadata": {"internal": True}},
            {"name": "resend::on-config-change", "description": "cfg"},
            {"function_id": "resend::batch"},
        ],
        triggers=[{"name": "resend::delivered", "description": "Delivered",
                   "invocation_schema": {}}],
        readme="# Resend README",
        envelope={"author": {"name": "iii", "verified": True, "pfp": "https://p"}},
    )


async def test_info_card(client: RegistryClient, reg_settings: Settings,
                         registry: MockRegistry) -> None:
    publish_resend(registry)
    card = await client.worker_info(reg_settings, "resend")
    assert card["worker"]["name"] == "resend"
    assert card["worker"]["version"] == "1.2.3"
    assert card["worker"]["author"] == {"name": "iii", "pfp": "https://p", "verified": True}
    assert card["api_reference"] == {
        "functions": [
            {"name": "resend::send", "description": "Send one email"},
            {"name": "resend::batch", "description": None},
        ],
        "triggers": [{"name": "resend::delivered", "description": "Delivered"}],
    }
    assert card["skills_tree"] == {"skills": [{"path": "skills/index.md"},
                                              {"path": "skills/emails/send.md"}]}
    assert "readme" not in card
    assert sorted(r.path for r in registry.requests) == ["/w/resend", "/w/resend/skills"]
    assert all(r.query == {"version": "latest"} for r in registry.requests)
    with_readme = await client.worker_info(reg_settings, "resend", readme=True)
    assert with_readme["readme"] == "# Resend README"
    assert len(registry.requests) == 2  # served from the cache


async def test_info_version_and_full_record(client: RegistryClient, reg_settings: Settings,
                                            registry: MockRegistry) -> None:
    publish_resend(registry)
    record = await client.worker_record(reg_settings, "resend", version="1.2.3")
    assert {r.query["version"] for r in registry.requests} == {"1.2.3"}
    functions = record["body"]["api_reference"]["functions"]
    assert functions[0]["request_schema"] == {"type": "object"}
    assert record["detail"]["name"] == "resend"


async def test_info_flat_payload_with_top_level_functions(client: RegistryClient,
                                                          reg_settings: Settings,
                                                          registry: MockRegistry) -> None:
    registry.set("/w/flat", json={"name": "flat", "latest_version": "2.0.0", "readme": "R",
                                  "functions": [{"name": "flat::go", "description": "Go"}]})
    registry.set("/w/flat/skills", json={"skills": []})
    card = await client.worker_info(reg_settings, "flat", readme=True)
    assert card["worker"]["version"] == "2.0.0"
    assert card["api_reference"]["functions"] == [{"name": "flat::go", "description": "Go"}]
    assert card["api_reference"]["triggers"] == []
    assert card["readme"] == "R"


async def test_info_404_messages(client: RegistryClient, reg_settings: Settings,
                                 registry: MockRegistry) -> None:
    with pytest.raises(DirectoryError) as info:
        await client.worker_info(reg_settings, "missing")
    assert info.value.code == "D310"
    assert info.value.message == (
        'D310 not_found: registry worker "missing" does not exist. Next: call '
        "directory::registry::workers::list to browse worker names."
    )
    publish_resend(registry)
    with pytest.raises(DirectoryError) as info:
        await client.worker_info(reg_settings, "resend", version="9.9.9")
    assert info.value.message.startswith(
        'D310 not_found: registry worker "resend" has no version or tag "9.9.9". Next: call')
    assert "404" not in info.value.message and registry.url not in info.value.message


async def test_info_404_on_skills_only(client: RegistryClient, reg_settings: Settings,
                                       registry: MockRegistry) -> None:
    publish_resend(registry)
    registry.fail("/w/resend/skills", "404")
    with pytest.raises(DirectoryError) as info:
        await client.worker_info(reg_settings, "resend")
    assert info.value.code == "D310"


async def test_info_server_error(client: RegistryClient, reg_settings: Settings,
                                 registry: MockRegistry) -> None:
    publish_resend(registry)
    registry.fail("/w/resend", "503")
    with pytest.raises(DirectoryError) as info:
        await client.worker_info(reg_settings, "resend")
    assert info.value.message == "D320 registry_error: registry returned HTTP 503. Next: retry shortly."


@pytest.mark.parametrize("name", ["../../admin", "shell/../../etc", "x?admin=1", "x#frag",
                                  "Shell", "ünï", "-dash", "a b"])
async def test_info_bad_names_never_reach_the_registry(client: RegistryClient,
                                                       reg_settings: Settings,
                                                       registry: MockRegistry, name: str) -> None:
    with pytest.raises(DirectoryError) as info:
        await client.worker_info(reg_settings, name)
    assert info.value.code == "D311"
    assert info.value.message.startswith("D311 invalid_input: registry worker name ")
    assert "is invalid: " in info.value.message
    assert info.value.message.endswith(
        "Next: call directory::registry::workers::list to browse worker names.")
    assert registry.requests == []


def test_name_rules() -> None:
    assert worker_name_problem("") == "worker name must be non-empty"
    assert worker_name_problem("_x") == (
        'worker name must start with a lowercase ASCII letter or digit: "_x"')
    assert worker_name_problem("a.b") == (
        "worker name may only contain lowercase letters, digits, '-', '_': \"a.b\"")
    assert worker_name_problem("0k_a-b") is None
    blank = info_name_error("")
    assert blank is not None and blank.message == (
        "D311 invalid_input: registry worker name must be non-empty. Next: call "
        "directory::registry::workers::list to browse worker names.")


async def test_version_and_tag_conflict(client: RegistryClient, reg_settings: Settings) -> None:
    with pytest.raises(DirectoryError, match="specify either version OR tag, not both"):
        await client.worker_info(reg_settings, "x", version="1.0.0", tag="latest")


def test_normalize_worker_rejects_nameless() -> None:
    assert normalize_worker({"description": "x"}) is None
    assert normalize_worker("resend") is None


# -- raw endpoints ---------------------------------------------------------------------------


async def test_get_bytes_and_post_json(client: RegistryClient, reg_settings: Settings,
                                       registry: MockRegistry) -> None:
    registry.set("/blobs/abc", body="raw text")
    assert await client.get_bytes(reg_settings, "/blobs/abc") == b"raw text"
    registry.handle("/k/updates", lambda req: Reply(json={"echo": req.body.decode()}),
                    method="POST")
    answer = await client.post_json(reg_settings, "/k/updates", {"kits": []})
    assert answer == {"echo": '{"kits":[]}'}
    with pytest.raises(RegistryNotFound):
        await client.get_json(reg_settings, "/k/none/x")


# -- transport: one request per key in flight ---------------------------------------------------


async def test_concurrent_misses_of_one_key_share_one_request(
        client: RegistryClient, reg_settings: Settings, registry: MockRegistry) -> None:
    import anyio

    registry.set("/w", json={"workers": [{"name": "resend", "latest_version": "1.0.0"}]}, delay=0.2)
    pages: list[dict] = []

    async def one() -> None:
        pages.append(await client.list_workers(reg_settings))

    async with anyio.create_task_group() as tg:
        for _ in range(8):
            tg.start_soon(one)
    assert len(pages) == 8 and all(p == pages[0] for p in pages)
    assert len([r for r in registry.requests if r.path == "/w"]) == 1


async def test_a_shared_failure_reaches_every_waiter(
        client: RegistryClient, reg_settings: Settings, registry: MockRegistry) -> None:
    import anyio

    registry.set("/w", status=500, json={"error": "down"}, delay=0.2)
    errors: list[BaseException] = []

    async def one() -> None:
        try:
            await client.list_workers(reg_settings)
        except RegistryFailure as exc:
            errors.append(exc)

    async with anyio.create_task_group() as tg:
        for _ in range(5):
            tg.start_soon(one)
    assert len(errors) == 5 and {e.code for e in errors} == {"D320"}
    assert len([r for r in registry.requests if r.path == "/w"]) == 1


async def test_warm_builds_the_pooled_client_the_first_request_then_uses(
        client: RegistryClient, reg_settings: Settings, registry: MockRegistry) -> None:
    import sys

    await client.warm()
    assert "httpx" in sys.modules and "httpcore" in sys.modules
    warmed = client._client
    assert warmed is not None and not warmed.is_closed
    registry.set("/w", json={"workers": [{"name": "resend", "description": "mail", "version": "1.0.0"}]})
    page = await client.list_workers(reg_settings, search="mail")
    assert [row["name"] for row in page["workers"]] == ["resend"]
    assert client._client is warmed  # the request reused it: no second TLS context or pool
    await client.aclose()


def test_the_ca_certificates_are_loaded_before_the_first_https_request_only(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The process's TLS context verifies (certificate and host name) from the start, but its CA
    store is filled only for an https request (a redirect's included: the clients' request
    hook), not for the plain-http ones a local registry answers."""
    import ssl

    import httpx

    from iii_directory.sources import registry as module

    monkeypatch.setattr(module, "_SSL_CONTEXT", None)
    monkeypatch.setattr(module, "_TRUSTED", False)
    context = module._ssl_context()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    module._trust_https(httpx.Request("GET", "http://127.0.0.1:9/w"))
    assert context.cert_store_stats()["x509_ca"] == 0
    module._trust_https(httpx.Request("GET", "https://api.workers.iii.dev/w"))
    assert context.cert_store_stats()["x509_ca"] > 0
    assert module._ssl_context() is context


async def test_warm_loads_the_ca_certificates_only_for_an_https_registry(
        client: RegistryClient, monkeypatch: pytest.MonkeyPatch) -> None:
    from iii_directory.sources import registry as module

    monkeypatch.setattr(module, "_SSL_CONTEXT", None)
    monkeypatch.setattr(module, "_TRUSTED", False)
    await client.warm()  # the fixture's registry is the plain-http mock
    assert module._ssl_context().cert_store_stats()["x509_ca"] == 0
    await client.aclose()
