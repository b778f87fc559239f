"""Kit registry endpoints over the shared transport (kits.md §1.4, §1.6)."""

from __future__ import annotations

import pytest
from kitenv import KitEnv
from kitfake import FLOW_V1, sha, team_v11

from iii_directory.config import Settings
from iii_directory.errors import DirectoryError
from iii_directory.kits.ref import VersionRef, parse_kit_ref
from iii_directory.kits.registry import KitRegistry, ci_flag, kit_page, web_base, worker_page


def test_web_urls(settings: Settings) -> None:
    api = settings.model_copy(update={"registry_url": "https://api.workers.iii.dev"})
    assert web_base(api) == "https://workers.iii.dev"
    assert kit_page(api, "acme/team") == "https://workers.iii.dev/kits/acme/team"
    assert worker_page(api, "kanban") == "https://workers.iii.dev/workers/kanban"
    custom = api.model_copy(update={"registry_web_url": "https://example.org/"})
    assert kit_page(custom, "acme/team") == "https://example.org/kits/acme/team"
    blank = api.model_copy(update={"registry_web_url": "   "})
    assert web_base(blank) == "https://workers.iii.dev"


def test_ci_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    for value, expected in (("", False), ("false", False), ("0", False), ("1", True), ("true", True)):
        monkeypatch.setenv("CI", value)
        assert ci_flag() is expected
    monkeypatch.delenv("CI")
    assert ci_flag() is False


def registry(kits: KitEnv) -> tuple[KitRegistry, Settings]:
    return kits.directory.service(KitRegistry), kits.directory.settings


async def test_detail_lenient_and_404(kits: KitEnv) -> None:
    client, settings = registry(kits)
    detail = await client.detail(settings, "acme/team", "1.0.0")
    assert detail is not None and detail.version == "1.0.0"
    assert detail.workers[0].resolved == "1.6.1"
    assert await client.detail(settings, "acme/nope", "latest") is None
    kits.registry.set("/k/acme/blank", json={"kit": {"version": "0.1.0", "id": ""}})
    blank = await client.detail(settings, "acme/blank", "0.1.0")
    assert blank is not None and blank.id == "acme/blank"


async def test_blobs_are_memoised(kits: KitEnv) -> None:
    client, settings = registry(kits)
    digest = sha(FLOW_V1)
    assert await client.blob(settings, digest) == FLOW_V1
    assert await client.blob(settings, digest) == FLOW_V1
    assert kits.registry.count(f"/blobs/{digest}") == 1
    before = len(kits.registry.requests)
    assert await client.blob(settings, "not-a-sha") is None
    assert len(kits.registry.requests) == before
    assert await client.blob(settings, "0" * 64) is None


async def test_errors_are_d520(kits: KitEnv) -> None:
    client, settings = registry(kits)
    kits.registry.fail("/k/acme/team/versions", 500)
    with pytest.raises(DirectoryError) as caught:
        await client.versions(settings, "acme/team")
    assert caught.value.message == "D520 registry_error: registry returned HTTP 500. Next: retry shortly."
    kits.registry.fail("/k/acme/team/versions", "malformed")
    with pytest.raises(DirectoryError) as caught:
        await client.versions(settings, "acme/team")
    assert caught.value.message.startswith(
        "D520 registry_error: could not decode the registry response for /k/acme/team/versions: "
    )
    down = settings.model_copy(update={"registry_url": "http://127.0.0.1:9"})
    with pytest.raises(DirectoryError) as caught:
        await client.detail(down, "acme/team", "latest")
    assert caught.value.message == "D520 registry_error: could not reach the registry. Next: retry shortly."
    with pytest.raises(DirectoryError) as caught:
        await client.files(settings, "acme/team", "9.9.9")
    assert caught.value.message == 'D510 not_found: kit "acme/team" has no version "9.9.9".'
    kits.catalog.updates_override = {"kits": "nope"}
    kits.registry.set("/k/updates", body="{", method="POST")
    with pytest.raises(DirectoryError, match="could not decode /k/updates"):
        await client.updates(settings, [{"kit": "acme/team", "version": "1.0.0", "requested": "^1"}])
    assert await client.updates(settings, []) == []


async def test_resolution(kits: KitEnv) -> None:
    client, settings = registry(kits)
    kits.catalog.publish("acme/team", team_v11(), latest=False)
    ref = parse_kit_ref("acme/team")
    assert (await client.resolve(settings, ref, VersionRef("range", "^1"))).version == "1.1.0"
    assert (await client.resolve(settings, ref, VersionRef("tag", "latest"))).version == "1.0.0"
    assert (await client.resolve(settings, ref, VersionRef("exact", "1.1.0"))).version == "1.1.0"
    with pytest.raises(DirectoryError) as caught:
        await client.resolve(settings, ref, VersionRef("exact", "9.0.0"))
    assert caught.value.message == (
        'D510 not_found: acme/team has no version or tag "9.0.0". '
        "Next: call directory::download-kit kit=acme/team for the latest release."
    )
    with pytest.raises(DirectoryError) as caught:
        await client.resolve(settings, ref, VersionRef("range", "^3"))
    assert caught.value.message == (
        'D510 not_found: no version of acme/team satisfies "^3". Next: open the kit\'s versions in the registry.'
    )
    nope = parse_kit_ref("acme/nope")
    for version in (VersionRef("tag", "latest"), VersionRef("range", "^1")):
        with pytest.raises(DirectoryError) as caught:
            await client.resolve(settings, nope, version)
        assert caught.value.message == (
            'D510 not_found: kit "acme/nope" does not exist in the registry. '
            "Next: check the <author>/<kit> spelling on the registry's kits page."
        )
