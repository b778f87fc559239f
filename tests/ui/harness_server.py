"""The click-through harness server (console-ui.md §5.5–§5.6): static harness files, the vendor
modules, the worker's assets as a console would serve them, the page's engine bridge and the
test control routes — one small HTTP/1.1 server on 127.0.0.1 inside the pytest process.

The console stand-in part: one protocol client (`console`) connected to the in-process engine
acts for every open page — it invokes functions, registers the page's browser functions, binds
its triggers and streams invocations back as Server-Sent Events. An asset mirror polls the
engine's `console:*` bindings, fetches each bound asset through the worker's content function,
hashes it (first 16 hex of SHA-256) and pushes `sync` / `set` / `delete` to the pages.
"""

from __future__ import annotations

import hashlib
import json
import mimetypes
import time
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import SocketStream

from iii_directory.port import EngineCallError
from iii_directory.testing.client import TestClient
from iii_directory.testing.engine import TestEngine

HERE = Path(__file__).resolve().parent
ASSET_TYPES = {"console:script": "script", "console:style": "style", "console:module": "module"}


@dataclass
class Asset:
    path: str
    kind: str
    binding_id: str
    content: str
    content_type: str

    @property
    def hash(self) -> str:
        return hashlib.sha256(self.content.encode("utf-8")).hexdigest()[:16]


@dataclass
class Page:
    browser_id: str
    send: anyio.abc.ObjectSendStream[tuple[str, Any]]
    functions: set[str] = field(default_factory=set)
    bindings: set[str] = field(default_factory=set)


class HarnessServer:
    def __init__(self, engine: TestEngine, project: Path, controls: dict[str, Callable[[dict[str, Any]], Awaitable[Any]]]) -> None:
        self.engine = engine
        self.project = project
        self.controls = controls
        self.client: TestClient | None = None
        self.assets: dict[str, Asset] = {}
        self.pages: dict[str, Page] = {}
        self.calls: list[dict[str, Any]] = []
        self.bindings: dict[str, dict[str, Any]] = {}
        self.port = 0

    # ------------------------------------------------------------------ lifecycle

    async def run(self, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        async with self.engine.client(name="console") as client, anyio.create_task_group() as tg:
            self.client = client
            listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
            self.port = listener.extra(anyio.abc.SocketAttribute.local_port)
            tg.start_soon(self._mirror)
            tg.start_soon(listener.serve, self._handle)
            task_status.started()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ------------------------------------------------------------------ asset mirror

    async def _mirror(self) -> None:
        while True:
            try:
                await self._mirror_once()
            except Exception as exc:  # noqa: BLE001 - keep mirroring; the page shows what it has
                print(f"[harness] asset mirror: {exc}")
            await anyio.sleep(0.25)

    async def _mirror_once(self) -> None:
        seen: dict[str, Any] = {}
        for binding in list(self.engine.bindings.values()):
            if binding.trigger_type in ASSET_TYPES and binding.active and isinstance(binding.config, dict):
                seen[str(binding.config.get("path"))] = binding
        for path, binding in seen.items():
            current = self.assets.get(path)
            if current is not None and current.binding_id == binding.id:
                continue
            reply = await self.engine.invoke(binding.function_id, {"path": path}, namespace=binding.namespace, timeout=3)
            asset = Asset(path, ASSET_TYPES[binding.trigger_type], binding.id, reply["content"],
                          reply.get("content_type") or "text/plain")
            self.assets[path] = asset
            if current is None or current.hash != asset.hash:
                self._broadcast("ui-assets", {"event": "set", "path": path, "kind": asset.kind, "hash": asset.hash})
        for path in [p for p in self.assets if p not in seen]:
            gone = self.assets.pop(path)
            self._broadcast("ui-assets", {"event": "delete", "path": path, "kind": gone.kind, "hash": gone.hash})

    def _sync(self) -> dict[str, Any]:
        return {"event": "sync", "assets": [{"path": a.path, "kind": a.kind, "hash": a.hash} for a in self.assets.values()]}

    def _broadcast(self, event: str, data: Any) -> None:
        for page in list(self.pages.values()):
            try:
                page.send.send_nowait((event, data))
            except (anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass

    # ------------------------------------------------------------------ HTTP

    async def _handle(self, stream: SocketStream) -> None:
        async with stream:
            try:
                head = b""
                while b"\r\n\r\n" not in head:
                    chunk = await stream.receive(65536)
                    if not chunk:
                        return
                    head += chunk
                header_blob, _, body = head.partition(b"\r\n\r\n")
                lines = header_blob.decode("latin-1").split("\r\n")
                method, target, _ = lines[0].split(" ", 2)
                headers = {k.strip().lower(): v.strip() for k, v in (ln.split(":", 1) for ln in lines[1:] if ":" in ln)}
                length = int(headers.get("content-length", "0") or 0)
                while len(body) < length:
                    body += await stream.receive(65536)
                url = urllib.parse.urlsplit(target)
                query = dict(urllib.parse.parse_qsl(url.query))
                payload = json.loads(body.decode("utf-8")) if body else {}
                await self._route(stream, method, urllib.parse.unquote(url.path), query, payload)
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError):
                return

    async def _respond(self, stream: SocketStream, status: int, body: bytes | str | Any, content_type: str = "application/json") -> None:
        if not isinstance(body, (bytes, str)):
            body = json.dumps(body)
        data = body.encode("utf-8") if isinstance(body, str) else body
        reason = {200: "OK", 404: "Not Found", 400: "Bad Request", 500: "Error"}.get(status, "OK")
        head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {len(data)}\r\n"
                "Cache-Control: no-cache\r\nConnection: close\r\n\r\n")
        await stream.send(head.encode("latin-1") + data)

    async def _route(self, stream: SocketStream, method: str, path: str, query: dict[str, str], body: dict[str, Any]) -> None:
        if path in ("/harness", "/harness/"):
            path = "/harness/index.html"
        if path.startswith("/harness/") or path.startswith("/vendor/"):
            root = HERE / "harness" if path.startswith("/harness/") else HERE / "harness" / ".vendor"
            rel = path.split("/", 2)[2]
            file = (root / rel).resolve()
            if root.resolve() not in file.parents or not file.is_file():
                await self._respond(stream, 404, "not found", "text/plain")
                return
            kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
            if file.suffix in (".js", ".mjs"):
                kind = "text/javascript; charset=utf-8"
            await self._respond(stream, 200, file.read_bytes(), kind)
            return
        if path.startswith("/ui/"):
            asset = self.assets.get(path[len("/ui/"):])
            if asset is None:
                await self._respond(stream, 404, "unknown ui asset", "text/plain")
            else:
                await self._respond(stream, 200, asset.content, asset.content_type)
            return
        if path == "/bridge/events":
            await self._events(stream, query.get("browser_id", ""))
            return
        if path.startswith("/bridge/"):
            await self._respond(stream, 200, await self._bridge(path[len("/bridge/"):], body))
            return
        if path.startswith("/control/"):
            try:
                result = await self._control(path[len("/control/"):], query, body)
                await self._respond(stream, 200, result)
            except (ValueError, KeyError) as exc:
                await self._respond(stream, 400, {"error": str(exc)})
            return
        await self._respond(stream, 404, "not found", "text/plain")

    # ------------------------------------------------------------------ bridge

    async def _events(self, stream: SocketStream, browser_id: str) -> None:
        send, receive = anyio.create_memory_object_stream[tuple[str, Any]](1000)
        page = Page(browser_id, send)
        self.pages[browser_id] = page
        await stream.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n")
        try:
            await stream.send(f"event: ui-assets\ndata: {json.dumps(self._sync())}\n\n".encode())
            async with receive:
                async for event, data in receive:
                    await stream.send(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
        finally:
            self.pages.pop(browser_id, None)
            assert self.client is not None
            for function_id in page.functions:
                self.client.connection.unregister_function(function_id)
            for binding_id in page.bindings:
                self.client.connection.unbind(binding_id)
                self.bindings.pop(binding_id, None)

    def _page_of(self, function_id: str) -> Page | None:
        for page in self.pages.values():
            if function_id.endswith(f"::{page.browser_id}"):
                return page
        return None

    def _deliverer(self, function_id: str) -> Callable[[Any], Awaitable[dict[str, Any]]]:
        """The handler of one page function: stream each invocation to the page that owns it."""

        async def deliver(data: Any) -> dict[str, Any]:
            owner = self._page_of(function_id)
            if owner is not None:
                payload = {k: v for k, v in data.items() if k != "_caller_worker_id"} if isinstance(data, dict) else data
                try:
                    owner.send.send_nowait(("invoke", {"function_id": function_id, "payload": payload}))
                except (anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    pass
            return {}

        return deliver

    async def _bridge(self, route: str, body: dict[str, Any]) -> Any:
        client = self.client
        assert client is not None
        if route == "trigger":
            entry: dict[str, Any] = {"function_id": body.get("function_id"), "payload": body.get("payload"), "started": time.time()}
            self.calls.append(entry)
            timeout = float(body.get("timeout_ms") or 300000) / 1000
            try:
                result = await client.call(str(body["function_id"]), body.get("payload") or {}, timeout=timeout)
                entry.update(result=result, ended=time.time())
                return {"ok": True, "result": result}
            except EngineCallError as exc:
                entry.update(error={"code": exc.code, "message": exc.message}, ended=time.time())
                return {"ok": False, "error": {"code": exc.code, "message": exc.message}}
            except TimeoutError:
                entry.update(error={"code": "timeout", "message": "bridge timeout"}, ended=time.time())
                return {"ok": False, "error": {"code": "timeout", "message": "bridge timeout"}}
        if route == "on":
            function_id = str(body["function_id"])
            page = self._page_of(function_id)

            client.register_function(function_id, self._deliverer(function_id), metadata={"internal": True})
            if page is not None:
                page.functions.add(function_id)
            self.calls.append({"on": function_id, "started": time.time()})
            return {}
        if route == "off":
            function_id = str(body["function_id"])
            client.connection.unregister_function(function_id)
            page = self._page_of(function_id)
            if page is not None:
                page.functions.discard(function_id)
            self.calls.append({"off": function_id, "started": time.time()})
            return {}
        if route == "register-trigger":
            function_id = str(body["function_id"])
            binding_id = client.bind(str(body["type"]), function_id, body.get("config") or {})
            page = self._page_of(function_id)
            self.bindings[binding_id] = {"id": binding_id, "type": body["type"], "function_id": function_id,
                                         "browser_id": page.browser_id if page else None}
            if page is not None:
                page.bindings.add(binding_id)
            self.calls.append({"bind": binding_id, "type": body["type"], "function_id": function_id, "started": time.time()})
            return {"id": binding_id}
        if route == "unregister-trigger":
            binding_id = str(body["id"])
            client.connection.unbind(binding_id)
            record = self.bindings.pop(binding_id, None)
            if record and record["browser_id"] in self.pages:
                self.pages[record["browser_id"]].bindings.discard(binding_id)
            self.calls.append({"unbind": binding_id, "started": time.time()})
            return {}
        if route == "calls":
            return self.calls
        if route == "bindings":
            return list(self.bindings.values())
        raise KeyError(route)

    # ------------------------------------------------------------------ control

    async def _control(self, route: str, query: dict[str, str], body: dict[str, Any]) -> Any:
        if route == "files/write":
            target = self._project_path(str(body["path"]))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(str(body["content"]), encoding="utf-8")
            return {"ok": True}
        if route == "files/read":
            target = self._project_path(query["path"])
            return {"exists": target.is_file(), "content": target.read_text(encoding="utf-8") if target.is_file() else None}
        if route.startswith("fixtures/"):
            name = route[len("fixtures/"):]
            if name.startswith("last:"):
                fn = name[len("last:"):]
                for entry in reversed(self.calls):
                    if entry.get("function_id") == fn and "result" in entry:
                        return {"function_id": fn, "input": entry["payload"], "output": entry["result"]}
            raise KeyError(name)
        if route in ("calls",):
            return self.calls
        handler = self.controls.get(route)
        if handler is None:
            raise KeyError(route)
        return await handler(body)

    def _project_path(self, rel: str) -> Path:
        if ".." in Path(rel).parts or Path(rel).is_absolute():
            raise ValueError(f"refused path {rel!r}")
        return self.project / rel
