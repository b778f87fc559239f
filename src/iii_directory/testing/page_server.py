"""The Directory page without a console: one small HTTP/1.1 server on 127.0.0.1 that serves a
stub console page (`console_page/host.js`, the tab loader and host object of docs/rules/console.md §5.8),
React as ES modules behind its import map, the worker's assets as the console serves them, and
the pages' engine bridge (docs/console-command.md).

Everything console-side is the console stand-in (`ConsoleStandIn`): it keeps the assets the
worker binds, answers `/ui` and `/ui/<path>`, and is the pages' engine client — it invokes
functions for them, registers their browser functions, binds their triggers and streams
invocations and asset pushes back as Server-Sent Events. `iii-directory-console` runs it for
people; the browser tests run it with their control routes (file access and fakes).

Only this machine's pages may use the bridge: a request must name this server in `Host`, and a
request that carries an `Origin` must come from this server's origin (a web page elsewhere
cannot drive the worker through the loopback port).
"""

from __future__ import annotations

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

from ..port import EngineCallError
from .console import ConsoleStandIn, HttpReply, HttpRequest, serve_http_exchange, write_http_reply

PAGE_DIR = Path(__file__).resolve().parent / "console_page"
"""The stub console page: host.js (loader and host object) and tokens.css (console colours)."""
HEARTBEAT_S = 1.0
"""An SSE comment this often, so a closed tab is noticed and its functions and bindings removed."""
VENDOR_MODULES = ("react.js", "react-dom.js", "react-dom-client.js", "jsx-runtime.js")
"""The ES modules behind the import map; any directory holding them serves React."""

Control = Callable[[dict[str, Any]], Awaitable[Any]]

INDEX_HTML = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<base href="/">
<title>iii-directory · Directory</title>
<link rel="icon" href="data:,">
<script type="importmap">
{"imports": {"react": "/vendor/react.js", "react-dom": "/vendor/react-dom.js",
             "react-dom/client": "/vendor/react-dom-client.js",
             "react/jsx-runtime": "/vendor/jsx-runtime.js"}}
</script>
<link rel="stylesheet" href="/harness/tokens.css">
</head>
<body>
<div id="workspace"></div>
<script type="module" src="/harness/host.js"></script>
</body>
</html>
"""


def missing_vendor_modules(vendor: Path) -> list[str]:
    """The React modules a vendor directory lacks (empty when it can serve the page)."""
    return [name for name in VENDOR_MODULES if not (vendor / name).is_file()]


@dataclass
class Page:
    """One open harness tab: its event stream and what the stand-in registered for it."""

    browser_id: str
    send: anyio.abc.ObjectSendStream[tuple[str, Any]]
    functions: set[str] = field(default_factory=set)
    bindings: set[str] = field(default_factory=set)


class PageServer:
    """The page, React, the assets and the bridge; with `project`, the test routes under
    `/control/` too (file reads and writes in the project, call fixtures, `controls`)."""

    def __init__(self, console: ConsoleStandIn, vendor: Path, *, project: Path | None = None,
                 controls: dict[str, Control] | None = None, port: int = 0) -> None:
        self.console = console
        self.vendor = vendor
        self.project = project
        self.controls = controls or {}
        self.pages: dict[str, Page] = {}
        self.calls: list[dict[str, Any]] = []
        """The bridge's call log: triggers with payload, result or error; on / off; bind / unbind."""
        self.bindings: dict[str, dict[str, Any]] = {}
        """The live bindings made for pages: id → {id, type, function_id, browser_id}."""
        self.port = port

    async def run(self, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=self.port)
        self.port = listener.extra(anyio.abc.SocketAttribute.local_port)
        task_status.started()
        await listener.serve(self._handle)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def page_url(self) -> str:
        """The Directory page's address."""
        return f"{self.url}/harness/#/worker/iii-directory/directory"

    def _foreign(self, headers: dict[str, str]) -> bool:
        """A request not addressed to this server, or sent by a page of another origin."""
        hosts = {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}
        origin = headers.get("origin")
        return headers.get("host") not in hosts or (origin is not None and origin not in {f"http://{h}" for h in hosts})

    # ------------------------------------------------------------------ HTTP

    async def _handle(self, stream: SocketStream) -> None:
        await serve_http_exchange(stream, self._exchange)

    async def _exchange(self, stream: SocketStream, request: HttpRequest) -> None:
        method, target, headers, raw = request
        if self._foreign(headers):
            await write_http_reply(stream, HttpReply(403, {"Content-Type": "text/plain"}, b"forbidden"))
            return
        url = urllib.parse.urlsplit(target)
        path = urllib.parse.unquote(url.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        if path == "/bridge/events":
            await self._events(stream, query.get("browser_id", ""))
            return
        body = json.loads(raw.decode("utf-8")) if raw else {}
        await write_http_reply(stream, await self._route(method, target, path, query, headers, body))

    async def _route(self, method: str, target: str, path: str, query: dict[str, str], headers: dict[str, str],
                     body: dict[str, Any]) -> HttpReply:
        if path == "/ui" or path.startswith("/ui/"):
            return self.console.http_reply(method, target, headers)
        if path in ("/", "/harness", "/harness/", "/harness/index.html"):
            return HttpReply(200, {"Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-cache"}, INDEX_HTML.encode())
        if path.startswith("/harness/") or path.startswith("/vendor/"):
            return self._static(path)
        if path.startswith("/bridge/"):
            return _json(await self._bridge(path[len("/bridge/"):], body))
        if path.startswith("/control/") and self.project is not None:
            try:
                return _json(await self._control(path[len("/control/"):], query, body))
            except (ValueError, KeyError) as exc:
                return _json({"error": str(exc)}, 400)
        return HttpReply(404, {"Content-Type": "text/plain"}, b"not found")

    def _static(self, path: str) -> HttpReply:
        root = PAGE_DIR if path.startswith("/harness/") else self.vendor
        file = (root / path.split("/", 2)[2]).resolve()
        if root.resolve() not in file.parents or not file.is_file():
            return HttpReply(404, {"Content-Type": "text/plain"}, b"not found")
        kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        if file.suffix in (".js", ".mjs"):
            kind = "text/javascript; charset=utf-8"
        return HttpReply(200, {"Content-Type": kind, "Cache-Control": "no-cache"}, file.read_bytes())

    # ------------------------------------------------------------------ the event stream

    async def _events(self, stream: SocketStream, browser_id: str) -> None:
        send, receive = anyio.create_memory_object_stream[tuple[str, Any]](1000)
        page = Page(browser_id, send)
        self.pages[browser_id] = page

        def forward(event: dict[str, Any]) -> None:
            try:
                send.send_nowait(("ui-assets", event))
            except (anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass

        send.send_nowait(("ui-assets", self.console.sync_event()))  # the first asset event is a sync
        stop_listening = self.console.add_listener(forward)
        await stream.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                          b"Connection: close\r\n\r\n")
        try:
            async with receive:
                while True:
                    item: tuple[str, Any] | None = None
                    with anyio.move_on_after(HEARTBEAT_S):
                        item = await receive.receive()
                    if item is None:
                        await stream.send(b": heartbeat\n\n")
                        continue
                    event, data = item
                    await stream.send(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
        finally:
            stop_listening()
            self.pages.pop(browser_id, None)
            for function_id in page.functions:
                self.console.unregister_function(function_id)
            for binding_id in page.bindings:
                self.console.unbind(binding_id)
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

    # ------------------------------------------------------------------ the bridge (§5.6)

    async def _bridge(self, route: str, body: dict[str, Any]) -> Any:
        if route == "trigger":
            entry: dict[str, Any] = {"function_id": body.get("function_id"), "payload": body.get("payload"), "started": time.time()}
            self.calls.append(entry)
            timeout = float(body.get("timeout_ms") or 300000) / 1000
            try:
                result = await self.console.call(str(body["function_id"]), body.get("payload") or {}, timeout=timeout)
            except EngineCallError as exc:
                entry.update(error={"code": exc.code, "message": exc.message}, ended=time.time())
                return {"ok": False, "error": {"code": exc.code, "message": exc.message}}
            entry.update(result=result, ended=time.time())
            return {"ok": True, "result": result}
        if route == "on":
            function_id = str(body["function_id"])
            self.console.register_function(function_id, self._deliverer(function_id), metadata={"internal": True})
            page = self._page_of(function_id)
            if page is not None:
                page.functions.add(function_id)
            self.calls.append({"on": function_id, "started": time.time()})
            return {}
        if route == "off":
            function_id = str(body["function_id"])
            self.console.unregister_function(function_id)
            page = self._page_of(function_id)
            if page is not None:
                page.functions.discard(function_id)
            self.calls.append({"off": function_id, "started": time.time()})
            return {}
        if route == "register-trigger":
            function_id = str(body["function_id"])
            binding_id = self.console.bind(str(body["type"]), function_id, body.get("config") or {})
            page = self._page_of(function_id)
            self.bindings[binding_id] = {"id": binding_id, "type": body["type"], "function_id": function_id,
                                         "browser_id": page.browser_id if page else None}
            if page is not None:
                page.bindings.add(binding_id)
            self.calls.append({"bind": binding_id, "type": body["type"], "function_id": function_id, "started": time.time()})
            return {"id": binding_id}
        if route == "unregister-trigger":
            binding_id = str(body["id"])
            self.console.unbind(binding_id)
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
            raise KeyError(f"no fixture {name!r}")
        handler = self.controls.get(route)
        if handler is None:
            raise KeyError(route)
        return await handler(body)

    def _project_path(self, rel: str) -> Path:
        if ".." in Path(rel).parts or Path(rel).is_absolute() or self.project is None:
            raise ValueError(f"refused path {rel!r}")
        return self.project / rel


def _json(value: Any, status: int = 200) -> HttpReply:
    return HttpReply(status, {"Content-Type": "application/json", "Cache-Control": "no-cache"}, json.dumps(value).encode("utf-8"))
