"""L2: delivery of the worker's UI assets without a browser, through the console stand-in
(console-ui.md §1.5–§1.7, §5.4): the manifest, the asset route with ETag / 304 / 404, the
`console:assets` pushes, hot reload, disconnect / reconnect, and the console's refusals."""

from __future__ import annotations

import logging
import re
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from iii_directory.config import Settings, config_id
from iii_directory.testing.client import EventLog, TestClient
from iii_directory.testing.console import (
    SECURITY_HEADERS,
    ConsoleStandIn,
    lint_stylesheet,
    version_hash,
)
from iii_directory.testing.engine import TestEngine
from iii_directory.ui.assets import ASSETS, WATCH_ENV, packaged_dir, read_packaged
from iii_directory.worker import Worker
from wire_harness import WORKER_BOOT_TIMEOUT_S, fast_worker, wait_registered

pytestmark = [pytest.mark.wire, pytest.mark.timeout(60)]

PATHS = sorted(asset.path for asset in ASSETS)
KIND = {asset.path: asset.kind for asset in ASSETS}
N = len(PATHS)
"""page.js, module.js, styles.css and the page's own modules (ui/assets.py `PAGE_MODULES`)."""
CONTENT_FN = "iii-directory::ui-content"


@dataclass
class Delivery:
    engine: TestEngine
    worker: Worker
    console: ConsoleStandIn
    client: TestClient
    http: httpx.AsyncClient

    def ui_bindings(self, trigger_type: str | None = None) -> list[Any]:
        return [b for b in self.engine.bindings.values()
                if b.function_id == CONTENT_FN and (trigger_type is None or b.trigger_type == trigger_type)]


@asynccontextmanager
async def delivery(settings: Settings, monkeypatch: pytest.MonkeyPatch, *, kept: int = len(ASSETS),
                   **console_options: Any) -> AsyncIterator[Delivery]:
    for name in ("III_CONFIG_NAME", "III_NAMESPACE", "III_WORKER_NAME", "III_TOKEN", "III_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    async with TestEngine(functions_debounce_s=0.05, namespace_grace_s=1.0) as engine:
        engine.configuration.put(config_id(), settings.model_dump(mode="json"))
        async with ConsoleStandIn(engine, **console_options) as console:
            worker = fast_worker(engine.url)
            async with anyio.create_task_group() as tg:
                tg.start_soon(worker.run)
                with anyio.fail_after(WORKER_BOOT_TIMEOUT_S):
                    await worker.ready.wait()
                await wait_registered(engine, worker)
                await engine.wait_for(lambda: len(console.assets) == kept and len(console.rejections) == N - kept, timeout=10)
                async with engine.client() as client, httpx.AsyncClient(base_url=console.url) as http:
                    yield Delivery(engine, worker, console, client, http)
                worker.stop()


@pytest.fixture
async def env(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Delivery]:
    monkeypatch.delenv(WATCH_ENV, raising=False)
    async with delivery(settings, monkeypatch) as running:
        yield running


@pytest.fixture
def ui_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "ui-watch"
    shutil.copytree(packaged_dir(), folder)
    monkeypatch.setenv(WATCH_ENV, str(folder))
    return folder


async def sync_then(events: EventLog) -> list[dict[str, Any]]:
    """Wait for the seeding `sync` and return the list (first element the sync)."""
    await events.wait_for(1)
    assert events[0]["event"] == "sync"
    return events


# ------------------------------------------------------------------ manifest and asset route


async def test_manifest_lists_the_three_assets(env: Delivery) -> None:
    reply = await env.http.get("/ui")
    assert reply.status_code == 200
    assert reply.headers["cache-control"] == "no-cache"
    for name, value in SECURITY_HEADERS.items():
        assert reply.headers[name] == value
    manifest = reply.json()
    assert manifest["disabled"] is False
    assert [(a["path"], a["kind"]) for a in manifest["assets"]] == [(p, KIND[p]) for p in PATHS]
    assert KIND["iii-directory/page.js"] == "script" and KIND["iii-directory/styles.css"] == "style"
    assert {KIND[p] for p in PATHS if p not in ("iii-directory/page.js", "iii-directory/styles.css")} == {"module"}
    for row in manifest["assets"]:
        assert re.fullmatch(r"[0-9a-f]{16}", row["hash"])
        assert row["hash"] == version_hash(read_packaged(next(a for a in ASSETS if a.path == row["path"])))
        assert row["worker"] is None
        assert row["warnings"] == []
    assert manifest["workers"] == [{"worker": "iii-directory", "enabled": True, "assets": PATHS}]
    assert await env.client.call("console::ui-manifest", {}) == manifest


async def test_asset_route_serves_bytes_with_etag_and_304(env: Delivery) -> None:
    page = next(a for a in ASSETS if a.path == "iii-directory/page.js")
    reply = await env.http.get("/ui/iii-directory/page.js?v=whatever")
    assert reply.status_code == 200
    assert reply.content == read_packaged(page).encode("utf-8")
    assert reply.headers["content-type"] == "text/javascript; charset=utf-8"
    assert reply.headers["cache-control"] == "no-cache"
    tag = reply.headers["etag"]
    assert tag == f'"{version_hash(read_packaged(page))}"'
    again = await env.http.get("/ui/iii-directory/page.js", headers={"If-None-Match": tag})
    assert again.status_code == 304
    assert again.content == b""
    stale = await env.http.get("/ui/iii-directory/page.js", headers={"If-None-Match": '"0000000000000000"'})
    assert stale.status_code == 200
    css = await env.http.get("/ui/iii-directory/styles.css")
    assert css.headers["content-type"] == "text/css; charset=utf-8"
    missing = await env.http.get("/ui/nope.js")
    assert (missing.status_code, missing.text) == (404, "unknown ui asset")


async def test_a_subscription_is_seeded_with_sync(env: Delivery) -> None:
    events = env.client.subscribe("console:assets")
    await sync_then(events)
    assert events[0]["assets"] == [
        {"path": p, "kind": KIND[p], "hash": env.console.assets[p].hash} for p in PATHS]


async def test_the_per_worker_toggle_holds_and_releases_assets(env: Delivery) -> None:
    events = await sync_then(env.client.subscribe("console:assets"))
    env.console.set_worker_enabled("iii-directory", False)
    await events.wait_for(1 + N)
    assert sorted((e["event"], e["path"]) for e in events[1:]) == [("delete", p) for p in PATHS]
    manifest = (await env.http.get("/ui")).json()
    assert manifest["assets"] == []
    assert manifest["workers"] == [{"worker": "iii-directory", "enabled": False, "assets": PATHS}]
    assert (await env.http.get("/ui/iii-directory/page.js")).status_code == 404
    env.console.set_worker_enabled("iii-directory", True)
    await events.wait_for(1 + 2 * N)
    assert sorted((e["event"], e["path"]) for e in events[1 + N:]) == [("set", p) for p in PATHS]


# ------------------------------------------------------------------ hot reload, disconnect, reconnect


async def test_hot_reload_pushes_one_set_and_keeps_one_binding(settings: Settings, monkeypatch: pytest.MonkeyPatch,
                                                               ui_copy: Path) -> None:
    async with delivery(settings, monkeypatch) as env:
        events = await sync_then(env.client.subscribe("console:assets"))
        style = "iii-directory/styles.css"
        before = env.console.assets[style].hash
        old_binding = env.console.assets[style].binding_id
        text = (ui_copy / "styles.css").read_text()
        (ui_copy / "styles.css").write_text(text.replace("#0969da", "#0a6adb", 1) + "\n/* recoloured */\n")
        with anyio.fail_after(3):
            while next(a for a in (await env.http.get("/ui")).json()["assets"] if a["path"] == style)["hash"] == before:
                await anyio.sleep(0.1)
        await env.console.settled()
        await anyio.sleep(0.3)
        changes = events[1:]
        assert [(e["event"], e["path"]) for e in changes] == [("set", style)]
        assert changes[0]["hash"] == env.console.assets[style].hash != before
        assert len(env.ui_bindings("console:style")) == 1
        assert env.ui_bindings("console:style")[0].id != old_binding
        assert any(old_binding in w and "supersedes" in w for w in env.console.warnings)
        served = await env.http.get(f"/ui/{style}")
        assert "/* recoloured */" in served.text


async def test_disconnect_deletes_and_reconnect_sets_again(env: Delivery) -> None:
    events = await sync_then(env.client.subscribe("console:assets"))
    conn = env.engine.worker("iii-directory")
    assert conn is not None
    conn.ws.transport.abort()
    await events.wait_for(1 + N, timeout=10)
    assert sorted((e["event"], e["path"]) for e in events[1:1 + N]) == [("delete", p) for p in PATHS]
    await events.wait_for(1 + 2 * N, timeout=15)
    assert sorted((e["event"], e["path"]) for e in events[1 + N:1 + 2 * N]) == [("set", p) for p in PATHS]
    assert {e["hash"] for e in events[1 + N:1 + 2 * N]} == {a["hash"] for a in events[0]["assets"]}
    assert len(env.ui_bindings()) == N


# ------------------------------------------------------------------ what the console refuses or warns about


@asynccontextmanager
async def throwaway(engine: TestEngine, contents: dict[str, Any]) -> AsyncIterator[TestClient]:
    """A short-lived worker with its own content function answering from `contents`."""
    async with engine.client(name="preview") as client:
        async def content(data: Any) -> Any:
            answer = contents[data["path"]]
            if isinstance(answer, Exception):
                raise answer
            return answer

        client.register_function("preview::ui-content", content, metadata={"internal": True})
        yield client


def relayed_errors(engine: TestEngine, client: TestClient) -> dict[str, str]:
    """binding id → the registration error the engine relayed to the client."""
    assert client.worker_id is not None
    return {f["id"]: f["error"]["message"] for f in engine.frames_of(client.worker_id, direction="out",
                                                                       kind="triggerregistrationresult")}


BAD_PATHS = [
    ("console:script", "", "path must not be empty"),
    ("console:script", "a/" + "x" * 508 + ".js", "path is over 512 characters"),
    ("console:script", "a\\b.js", "path 'a\\b.js' must not contain backslashes"),
    ("console:script", "/a.js", "path '/a.js' must not start with a slash"),
    ("console:script", "a//b.js", "path 'a//b.js' has an empty segment"),
    ("console:script", "a/../b.js", "path 'a/../b.js' has a dot-only segment"),
    ("console:script", "A/b.js", "path segment 'A' must start with a lowercase letter or digit"),
    ("console:script", "a/b c.js", "path segment 'b c.js' has characters outside [a-z0-9._-]"),
    ("console:script", "a/page.css", "path 'a/page.css' must end in '.js' for a script asset"),
    ("console:style", "a/styles.js", "path 'a/styles.js' must end in '.css' for a style asset"),
]


async def test_bad_paths_get_the_console_texts_back(env: Delivery) -> None:
    async with throwaway(env.engine, {}) as client:
        ids = {client.bind(kind, "preview::ui-content", {"path": path}): text for kind, path, text in BAD_PATHS}
        ids[client.bind("console:script", "preview::ui-content", {})] = "trigger config must carry a string `path`"
        ids[client.bind("console:script", "preview::ui-content", {"path": 7})] = "trigger config must carry a string `path`"
        await env.engine.wait_for(lambda: len(relayed_errors(env.engine, client)) == len(ids), timeout=10)
        assert relayed_errors(env.engine, client) == ids
    assert sorted(env.console.assets) == PATHS


async def test_size_cap_and_stylesheet_lint(env: Delivery) -> None:
    big = "x" * (9 * 1024 * 1024)
    loose = "body {}\n@font-face { font-family: x; }\n[data-iii-ui=\"preview\"] .ok { color: red }\n"
    contents = {"preview/big.js": {"content": big}, "preview/loose.css": {"content": loose}}
    async with throwaway(env.engine, contents) as client:
        big_id = client.bind("console:script", "preview::ui-content", {"path": "preview/big.js"})
        client.bind("console:style", "preview::ui-content", {"path": "preview/loose.css"})
        await env.engine.wait_for(lambda: "preview/loose.css" in env.console.assets and relayed_errors(env.engine, client),
                                  timeout=15)
        assert relayed_errors(env.engine, client) == {
            big_id: f"asset 'preview/big.js' is {len(big)} bytes — over the 8388608-byte cap; check the worker's bundling"}
        manifest = (await env.http.get("/ui")).json()
        rows = {row["path"]: row for row in manifest["assets"]}
        assert "preview/big.js" not in rows
        assert rows["preview/loose.css"]["warnings"] == [
            "selector 'body' is not scoped under [data-iii-ui=\"…\"] and will style the whole console document",
            "@font-face cannot be scoped under [data-iii-ui] — it applies document-wide",
        ]
        assert rows["iii-directory/styles.css"]["warnings"] == []
    # the throwaway worker left: its asset went with it
    await env.engine.wait_for(lambda: "preview/loose.css" not in env.console.assets, timeout=10)


async def test_fetch_failures_after_two_attempts(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(WATCH_ENV, raising=False)
    async with delivery(settings, monkeypatch, fetch_timeout_s=0.3) as env:
        calls: list[str] = []
        contents: dict[str, Any] = {"preview/no-content.js": {"text": "nope"}}

        async with env.engine.client(name="preview") as client:
            async def content(data: Any) -> Any:
                calls.append(data["path"])
                if data["path"] == "preview/slow.js":
                    await anyio.sleep(5)
                if data["path"] == "preview/broken.js":
                    raise ValueError("disk on fire")
                return contents[data["path"]]

            client.register_function("preview::ui-content", content)
            broken = client.bind("console:script", "preview::ui-content", {"path": "preview/broken.js"})
            slow = client.bind("console:script", "preview::ui-content", {"path": "preview/slow.js"})
            empty = client.bind("console:script", "preview::ui-content", {"path": "preview/no-content.js"})
            await env.engine.wait_for(lambda: len(relayed_errors(env.engine, client)) == 3, timeout=15)
            errors = relayed_errors(env.engine, client)
        assert errors[broken] == "content fetch via 'preview::ui-content' failed after 2 attempts: disk on fire"
        assert errors[slow] == ("content fetch via 'preview::ui-content' failed after 2 attempts: "
                                "invocation timed out after 300ms")
        assert errors[empty] == ("content function 'preview::ui-content' returned no string `content` field "
                                 "for path 'preview/no-content.js'")
        assert calls.count("preview/broken.js") == 2 and calls.count("preview/slow.js") == 2
        assert calls.count("preview/no-content.js") == 1


async def test_the_worker_logs_a_refused_binding_and_keeps_running(settings: Settings, monkeypatch: pytest.MonkeyPatch,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.delenv(WATCH_ENV, raising=False)
    caplog.set_level(logging.WARNING)
    async with delivery(settings, monkeypatch, kept=0, size_cap=1000) as env:
        def refused() -> list[str]:  # what the worker's connection logged
            return [r.getMessage() for r in caplog.records if r.name.startswith("iii_directory.protocol")
                    and "refused" in r.getMessage()]

        await env.engine.wait_for(lambda: len(refused()) == N, timeout=10)
        for path in PATHS:
            line = next(m for m in refused() if f"'path': '{path}'" in m)
            assert f"asset '{path}' is " in line and "over the 1000-byte cap; check the worker's bundling" in line
        result = await env.client.call(CONTENT_FN, {"path": "iii-directory/styles.css"})
        assert result["content_type"] == "text/css; charset=utf-8"


async def test_a_new_binding_for_a_kept_path_supersedes_the_old_one(env: Delivery) -> None:
    events = await sync_then(env.client.subscribe("console:assets"))
    old = env.console.assets["iii-directory/page.js"].binding_id
    replacement = "export default function setup() {}\n"
    async with throwaway(env.engine, {"iii-directory/page.js": {"content": replacement}}) as client:
        client.bind("console:script", "preview::ui-content", {"path": "iii-directory/page.js"})
        await env.engine.wait_for(lambda: env.console.assets["iii-directory/page.js"].hash == version_hash(replacement),
                                  timeout=10)
        await env.engine.wait_for(lambda: old not in env.engine.bindings, timeout=5)
        assert any(old in w and "supersedes" in w for w in env.console.warnings)
        await events.wait_for(2)
        assert [(e["event"], e["hash"]) for e in events[1:]] == [("set", version_hash(replacement))]
    # the preview's disconnect unbinds its binding: the path is dropped
    await events.wait_for(3)
    assert (events[2]["event"], events[2]["path"]) == ("delete", "iii-directory/page.js")


async def test_replays_cost_nothing_and_a_moved_binding_drops_its_old_path(env: Delivery) -> None:
    console = env.console
    events = await sync_then(env.client.subscribe("console:assets"))
    page = console.assets["iii-directory/page.js"]
    replay = {"id": page.binding_id, "trigger_type": "console:script", "function_id": CONTENT_FN,
              "config": {"path": "iii-directory/page.js"}}
    console._enqueue("bind", replay)
    await console.settled()
    assert len(events) == 1  # same id, same hash: nothing pushed
    module = console.assets["iii-directory/module.js"]
    moved = {"id": module.binding_id, "trigger_type": "console:script", "function_id": CONTENT_FN,
             "config": {"path": "iii-directory/page.js"}}
    console._enqueue("bind", moved)
    await console.settled()
    await events.wait_for(3)
    assert [(e["event"], e["path"], e["hash"] == "") for e in events[1:3]] == [
        ("delete", "iii-directory/module.js", True), ("set", "iii-directory/page.js", False)]
    assert "iii-directory/module.js" not in console.assets
    console._enqueue("unbind", {"id": "not-a-binding", "trigger_type": "console:script"})
    await console.settled()
    assert len(events) == 3  # unknown ids are ignored


async def test_kill_switch_reports_disabled(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(WATCH_ENV, raising=False)
    for name in ("III_CONFIG_NAME", "III_NAMESPACE", "III_WORKER_NAME", "III_TOKEN", "III_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    async with TestEngine() as engine, ConsoleStandIn(engine, injectable_ui=False) as console, \
            httpx.AsyncClient(base_url=console.url) as http:
        assert (await http.get("/ui")).json() == {"disabled": True, "assets": [], "workers": []}
        assert (await http.get("/ui/iii-directory/page.js")).status_code == 404
        assert all(t.owner is None or t.owner.name != "console" for t in engine.trigger_types.values()
                   if t.id.startswith("console:"))


def test_lint_rules() -> None:
    css = """
        /* html { } in a comment */
        [data-iii-ui="x"] p, * { color: red }
        :root { --a: 1 }
        html[data-theme] .x, div, .free { margin: 0 }
        @media (max-width: 10px) { body.dark { x: 1 } [data-iii-ui="x"] .y { x: 1 } }
        @keyframes spin { from { opacity: 0 } to { opacity: 1 } }
        @import url("x.css");
    """
    assert lint_stylesheet(css) == [
        f"selector '{s}' is not scoped under [data-iii-ui=\"…\"] and will style the whole console document"
        for s in ("*", ":root", "html[data-theme] .x", "div", "body.dark")
    ]
    assert lint_stylesheet(read_packaged(next(a for a in ASSETS if a.kind == "style"))) == []
