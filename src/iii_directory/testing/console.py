"""The console stand-in: what the iii console does with worker UI assets (docs/rules/console.md §1.5–§1.7,
§5.4), as one real protocol connection to the in-process `TestEngine`.

`ConsoleStandIn` registers the trigger types `console:script`, `console:style`,
`console:module` and `console:assets`, and handles every binding and unbinding the engine
forwards to it through one queue, in arrival order:

* an asset binding is validated (config exactly `{"path": …}`, the path rules of §1.3), its
  content fetched through the binding's content function (3 s per attempt, 2 attempts 250 ms
  apart), size-capped at 8 MiB, hashed (first 16 hex characters of the SHA-256 of the text) and,
  for stylesheets, linted; a failure is the binding's registration error, which the engine
  relays to the binding's owner;
* kept assets follow last-writer-wins per path: a replay (same binding id, same hash) costs
  nothing; a new binding id for a kept path takes it over and the superseded binding is removed
  from the engine with `engine::unregister_trigger`; a binding id that moves to another path drops
  the old path;
* every change is pushed as `{"event": "set" | "delete", "path", "kind", "hash"}` to the
  `console:assets` subscribers (void invocations) and to in-process listeners, and a new
  subscription is seeded at once with `{"event": "sync", "assets": […]}`.

It also answers the routes of §1.7 (`GET /ui` → the manifest, `GET /ui/<path>` → the bytes with
`ETag` / `304` / `404 unknown ui asset`), both as a pure function (`http_reply`, which the browser
harness reuses) and from its own small HTTP server on 127.0.0.1 (`url`), and registers the
internal function `console::ui-manifest`.

Finally it is the engine client of the browser harness's pages: `call`, `register_function`,
`unregister_function`, `bind` and `unbind` act on the same connection.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import logging
import math
import os
import re
import urllib.parse
import uuid
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import SocketStream

from ..port import EngineCallError
from ..protocol import frames as fr
from ..protocol.backoff import Backoff
from ..protocol.connection import Connection, Invocation
from ..ui.assets import TRIGGER_KINDS, path_problem

if TYPE_CHECKING:
    from .engine_records import EngineHost

log = logging.getLogger("iii_directory.testing.console")

SUBSCRIPTION_TYPE = "console:assets"
MANIFEST_FUNCTION = "console::ui-manifest"
SIZE_CAP_BYTES = 8 * 1024 * 1024
"""The console's cap on one asset (8 MiB)."""
DEFAULT_CONTENT_TYPES = {"script": "text/javascript; charset=utf-8", "module": "text/javascript; charset=utf-8",
                         "style": "text/css; charset=utf-8"}
SECURITY_HEADERS = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "frame-ancestors 'none'",
}
UNKNOWN_ASSET_BODY = "unknown ui asset"

Listener = Callable[[dict[str, Any]], None]
HttpRequest = tuple[str, str, dict[str, str], bytes]
"""Method, target, lower-cased headers and body (`read_http_request`)."""
Handler = Callable[..., Awaitable[Any]]


def version_hash(content: str) -> str:
    """The first 16 hex characters of the SHA-256 of the UTF-8 content (§1.5 step 4)."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()[:16]


# ------------------------------------------------------------------ stylesheet lint (§1.5 step 5)

_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_BARE_ELEMENT = re.compile(r"[a-zA-Z][a-zA-Z0-9-]*")
_UNSCOPED_START = re.compile(r"(:root|html|body)(?![a-zA-Z0-9_-])")


def _top_level_preludes(css: str) -> list[str]:
    """The prelude of every top-level rule and at-rule, in order (`@media` blocks are entered:
    their rules count as top level, which is what an unscoped selector inside one does)."""
    text = _COMMENT.sub("", css)
    preludes: list[str] = []
    depth_stack: list[bool] = []  # per open block: does it hold rules (True) or declarations?
    start = 0
    for index, char in enumerate(text):
        if char == "{":
            prelude = text[start:index].strip()
            holds_rules = not depth_stack or depth_stack[-1]
            if holds_rules:
                preludes.append(prelude)
            depth_stack.append(holds_rules and prelude.startswith("@") and not prelude.startswith("@font-face")
                               and not prelude.startswith("@keyframes") and not prelude.startswith("@page"))
            start = index + 1
        elif char == "}":
            if depth_stack:
                depth_stack.pop()
            start = index + 1
        elif char == ";" and (not depth_stack or depth_stack[-1]):
            start = index + 1  # a statement at-rule (`@import …;`, `@charset …;`)
    return preludes


def lint_stylesheet(css: str) -> list[str]:
    """The console's stylesheet warnings (never rejections): any `@font-face`, and every
    selector that does not start with `[data-iii-ui` and is `*`, `:root…`, `html…`, `body…` or a
    bare element name."""
    warnings: list[str] = []
    for prelude in _top_level_preludes(css):
        if prelude.startswith("@font-face"):
            warnings.append("@font-face cannot be scoped under [data-iii-ui] — it applies document-wide")
            continue
        if prelude.startswith("@"):
            continue
        for selector in (part.strip() for part in prelude.split(",")):
            if not selector or selector.startswith("[data-iii-ui"):
                continue
            if selector == "*" or _UNSCOPED_START.match(selector) or _BARE_ELEMENT.fullmatch(selector):
                warnings.append(f"selector '{selector}' is not scoped under [data-iii-ui=\"…\"] and will style the "
                                "whole console document")
    return warnings


# ------------------------------------------------------------------ state


@dataclass
class KeptAsset:
    """One asset the console holds: the binding that delivered it and the fetched text."""

    path: str
    kind: str
    binding_id: str
    content: str
    content_type: str
    hash: str
    warnings: list[str] = field(default_factory=list)

    @property
    def scope(self) -> str:
        """The first path segment: the worker the asset is attributed to."""
        return self.path.split("/", 1)[0]

    def row(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "hash": self.hash}


@dataclass
class HttpReply:
    status: int
    headers: dict[str, str]
    body: bytes = b""


class BindingRejected(Exception):
    """A binding the console refuses; the text is relayed to the binding's owner."""


class _ConsoleConnection(Connection):
    """A `Connection` whose provided trigger types are handled by the stand-in: the
    registration result is sent once the binding has been processed (maybe with an error)."""

    def __init__(self, *args: Any, on_binding: Callable[[str, dict[str, Any]], None], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._on_binding = on_binding

    def _add_subscriber(self, frame: dict[str, Any]) -> None:
        self._on_binding("bind", frame)

    def _remove_subscriber(self, frame: dict[str, Any]) -> None:
        self._on_binding("unbind", frame)

    def answer_binding(self, frame: Mapping[str, Any], error: str | None) -> None:
        reply: dict[str, Any] = {
            "type": fr.TRIGGER_REGISTRATION_RESULT, "id": frame.get("id"),
            "trigger_type": frame.get("trigger_type"), "function_id": frame.get("function_id"),
        }
        if error is not None:
            reply["error"] = {"code": "invalid_trigger", "message": error}
        self._push(reply)


class ConsoleStandIn:
    """Use as `async with ConsoleStandIn(engine) as console:`; `console.url` serves §1.7."""

    def __init__(
        self,
        engine: EngineHost,
        *,
        name: str = "console",
        fetch_timeout_s: float = 3.0,
        fetch_attempts: int = 2,
        fetch_pause_s: float = 0.25,
        size_cap: int = SIZE_CAP_BYTES,
        injectable_ui: bool = True,
        http: bool = True,
    ) -> None:
        self.engine = engine
        self.fetch_timeout_s = fetch_timeout_s
        self.fetch_attempts = fetch_attempts
        self.fetch_pause_s = fetch_pause_s
        self.size_cap = size_cap
        self.injectable_ui = injectable_ui
        self.serve_http = http
        info = {"runtime": "python", "version": "0", "name": name, "os": "test", "pid": os.getpid(), "isolation": None,
                "namespace": None, "telemetry": {"language": "python", "project_name": None, "framework": "console"}}
        self.connection = _ConsoleConnection(
            engine.url, worker_info=info, on_invoke=self._serve, token=engine.token or None,
            backoff=Backoff(base=0.05, cap=0.2), ping_interval=None, on_binding=self._enqueue,
        )
        self.assets: dict[str, KeptAsset] = {}
        """path → the asset kept for it (last writer wins)."""
        self.disabled_workers: set[str] = set()
        self.subscribers: dict[str, tuple[str, str | None]] = {}
        """`console:assets` binding id → (function id, namespace)."""
        self.pushes: list[dict[str, Any]] = []
        """Every push, in order (what each subscriber received after its sync)."""
        self.warnings: list[str] = []
        """Console-side warnings (superseded bindings, dropped replays, failed removals)."""
        self.rejections: list[tuple[str, str]] = []
        """(binding id, error text) of every refused binding."""
        self._handlers: dict[str, Handler] = {}
        self._listeners: list[Listener] = []
        self._send, self._receive = anyio.create_memory_object_stream[tuple[str, dict[str, Any]]](math.inf)
        self._idle = anyio.Event()
        self._idle.set()
        self._queued = 0
        self._stack: AsyncExitStack | None = None
        self.port = 0

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> ConsoleStandIn:
        self._stack = AsyncExitStack()
        tg = await self._stack.enter_async_context(anyio.create_task_group())
        self._stack.callback(tg.cancel_scope.cancel)
        tg.start_soon(self.connection.run)
        with anyio.fail_after(10):
            await self.connection.wait_connected()
        self.connection.register_function({"id": MANIFEST_FUNCTION, "metadata": {"internal": True},
                                           "description": "The console's injected-UI manifest."})
        self._handlers[MANIFEST_FUNCTION] = self._manifest_function
        if self.injectable_ui:
            for trigger_type in (*TRIGGER_KINDS, SUBSCRIPTION_TYPE):
                self.connection.register_trigger_type({"id": trigger_type, "description": f"Console {trigger_type}"})
        tg.start_soon(self._process)
        if self.serve_http:
            listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
            self.port = listener.extra(anyio.abc.SocketAttribute.local_port)
            tg.start_soon(listener.serve, self._serve_socket)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._stack is None:
            return
        stack, self._stack = self._stack, None
        try:
            with anyio.CancelScope(shield=True), anyio.move_on_after(3):
                await self.connection.stop(grace=1.0)
        finally:
            await stack.aclose()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def settled(self, timeout: float = 10.0) -> None:
        """Wait until every forwarded binding and unbinding has been processed."""
        with anyio.fail_after(timeout):
            while True:
                await self._idle.wait()
                await anyio.sleep(0.05)  # frames still on the socket land in the queue first
                if self._idle.is_set():
                    return

    # ------------------------------------------------------------------ the queue (§1.5)

    def _enqueue(self, action: str, frame: dict[str, Any]) -> None:
        self._queued += 1
        self._idle = anyio.Event() if self._idle.is_set() else self._idle
        self._send.send_nowait((action, frame))

    async def _process(self) -> None:
        async for action, frame in self._receive:
            try:
                if action == "bind":
                    await self._bind(frame)
                else:
                    self._unbind(frame)
            except Exception:  # noqa: BLE001 - one bad frame never stops the queue
                log.exception("console stand-in dropped %s %s", action, frame.get("id"))
            finally:
                self._queued -= 1
                if self._queued == 0:
                    self._idle.set()

    async def _bind(self, frame: dict[str, Any]) -> None:
        binding_id, trigger_type = str(frame.get("id")), str(frame.get("trigger_type"))
        if trigger_type == SUBSCRIPTION_TYPE:
            namespace = frame.get("namespace")
            self.subscribers[binding_id] = (str(frame.get("function_id")), namespace if isinstance(namespace, str) else None)
            self.connection.answer_binding(frame, None)
            self._fire(binding_id, self.sync_event())
            return
        try:
            asset = await self._accept(frame)
        except BindingRejected as exc:
            self.rejections.append((binding_id, str(exc)))
            log.warning("console refused binding %s: %s", binding_id, exc)
            self.connection.answer_binding(frame, str(exc))
            return
        self.connection.answer_binding(frame, None)
        await self._keep(asset)

    async def _accept(self, frame: dict[str, Any]) -> KeptAsset:
        """Validate, fetch, cap, hash and lint one asset binding (§1.5 steps 1–5)."""
        trigger_type, function_id = str(frame.get("trigger_type")), str(frame.get("function_id"))
        config = frame.get("config")
        path = config.get("path") if isinstance(config, dict) else None
        if not isinstance(path, str):
            raise BindingRejected("trigger config must carry a string `path`")
        unknown = sorted(k for k in config if k != "path") if isinstance(config, dict) else []
        if unknown:
            raise BindingRejected(f"trigger config has unknown field '{unknown[0]}' (only `path` is allowed)")
        problem = path_problem(path, trigger_type)
        if problem is not None:
            raise BindingRejected(problem)
        namespace = frame.get("namespace") if isinstance(frame.get("namespace"), str) else None
        reply = await self._fetch(function_id, path, namespace)
        content = reply.get("content") if isinstance(reply, dict) else None
        if not isinstance(content, str):
            raise BindingRejected(f"content function '{function_id}' returned no string `content` field for path '{path}'")
        size = len(content.encode("utf-8"))
        if size > self.size_cap:
            raise BindingRejected(f"asset '{path}' is {size} bytes — over the {self.size_cap}-byte cap; "
                                  "check the worker's bundling")
        kind = TRIGGER_KINDS[trigger_type]
        content_type = reply.get("content_type") if isinstance(reply.get("content_type"), str) else None
        return KeptAsset(path=path, kind=kind, binding_id=str(frame.get("id")), content=content,
                         content_type=content_type or DEFAULT_CONTENT_TYPES[kind], hash=version_hash(content),
                         warnings=lint_stylesheet(content) if kind == "style" else [])

    async def _fetch(self, function_id: str, path: str, namespace: str | None) -> Any:
        """Invoke the content function: `fetch_attempts` attempts of `fetch_timeout_s`, paused
        `fetch_pause_s` apart; the last error names the whole failure."""
        last = ""
        for attempt in range(1, self.fetch_attempts + 1):
            try:
                return await self.connection.call(function_id, {"path": path}, timeout=self.fetch_timeout_s,
                                                  namespace=namespace)
            except EngineCallError as exc:
                last = exc.message
            if attempt < self.fetch_attempts:
                await anyio.sleep(self.fetch_pause_s)
        raise BindingRejected(f"content fetch via '{function_id}' failed after {self.fetch_attempts} attempts: {last}")

    async def _keep(self, asset: KeptAsset) -> None:
        """Last writer wins per path (§1.5 step 6), then `set` is pushed."""
        current = self.assets.get(asset.path)
        if current is not None and current.binding_id == asset.binding_id and current.hash == asset.hash:
            return
        moved_from = next((p for p, a in self.assets.items() if a.binding_id == asset.binding_id and p != asset.path), None)
        if moved_from is not None:
            gone = self.assets.pop(moved_from)
            self._push({"event": "delete", "path": moved_from, "kind": gone.kind, "hash": ""}, gone.scope)
        if current is not None and current.binding_id != asset.binding_id:
            message = (f"asset '{asset.path}': binding {asset.binding_id} supersedes binding {current.binding_id}; "
                       "removing the old binding")
            self.warnings.append(message)
            log.warning(message)
            try:
                await self.connection.call("engine::unregister_trigger", {"id": current.binding_id}, timeout=5.0)
            except EngineCallError as exc:
                self.warnings.append(f"could not remove binding {current.binding_id}: {exc.message}")
        self.assets[asset.path] = asset
        self._push({"event": "set", **asset.row()}, asset.scope)

    def _unbind(self, frame: dict[str, Any]) -> None:
        binding_id = str(frame.get("id"))
        if self.subscribers.pop(binding_id, None) is not None:
            return
        owned = next((a for a in self.assets.values() if a.binding_id == binding_id), None)
        if owned is None:
            return  # a superseded binding, or one that was refused: nothing is held for it
        del self.assets[owned.path]
        self._push({"event": "delete", **owned.row()}, owned.scope)

    # ------------------------------------------------------------------ pushes (§1.6)

    def enabled_assets(self) -> list[KeptAsset]:
        return sorted((a for a in self.assets.values() if a.scope not in self.disabled_workers), key=lambda a: a.path)

    def sync_event(self) -> dict[str, Any]:
        return {"event": "sync", "assets": [a.row() for a in self.enabled_assets()]}

    def add_listener(self, listener: Listener) -> Callable[[], None]:
        """Receive every later push in-process (the harness's event stream). Returns a remover."""
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    def _push(self, event: dict[str, Any], scope: str) -> None:
        if scope in self.disabled_workers:
            return  # held: not served, not pushed
        self.pushes.append(event)
        for binding_id in list(self.subscribers):
            self._fire(binding_id, event)
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # noqa: BLE001 - a closed tab never breaks the console
                log.debug("console listener failed", exc_info=True)

    def _fire(self, binding_id: str, event: dict[str, Any]) -> None:
        target = self.subscribers.get(binding_id)
        if target is not None:
            self.connection.fire(target[0], event, namespace=target[1])

    def set_worker_enabled(self, worker: str, enabled: bool) -> None:
        """The per-worker toggle: disabling pushes `delete` for its assets, enabling `set`."""
        if enabled == (worker not in self.disabled_workers):
            return
        held = [a for a in self.assets.values() if a.scope == worker]
        if enabled:
            self.disabled_workers.discard(worker)
            for asset in held:
                self._push({"event": "set", **asset.row()}, worker)
        else:
            for asset in held:
                self._push({"event": "delete", **asset.row()}, worker)
            self.disabled_workers.add(worker)

    # ------------------------------------------------------------------ HTTP (§1.7)

    def manifest(self) -> dict[str, Any]:
        if not self.injectable_ui:
            return {"disabled": True, "assets": [], "workers": []}
        workers: dict[str, list[str]] = {}
        for asset in sorted(self.assets.values(), key=lambda a: a.path):
            workers.setdefault(asset.scope, []).append(asset.path)
        return {
            "disabled": False,
            "assets": [{**a.row(), "worker": None, "warnings": list(a.warnings)} for a in self.enabled_assets()],
            "workers": [{"worker": w, "enabled": w not in self.disabled_workers, "assets": paths}
                        for w, paths in sorted(workers.items())],
        }

    def http_reply(self, method: str, target: str, headers: Mapping[str, str] | None = None) -> HttpReply:
        """`GET /ui` and `GET /ui/<path>` (a `?v=` query is ignored); header names lower-case."""
        headers = headers or {}
        path = urllib.parse.unquote(urllib.parse.urlsplit(target).path)
        base = {"Cache-Control": "no-cache", **SECURITY_HEADERS}
        if method not in ("GET", "HEAD"):
            return HttpReply(405, {**base, "Content-Type": "text/plain; charset=utf-8"}, b"method not allowed")
        if path in ("/ui", "/ui/"):
            body = json.dumps(self.manifest()).encode("utf-8")
            return HttpReply(200, {**base, "Content-Type": "application/json"}, body)
        asset = self.assets.get(path[len("/ui/"):]) if path.startswith("/ui/") and self.injectable_ui else None
        if asset is None or asset.scope in self.disabled_workers:
            return HttpReply(404, {**base, "Content-Type": "text/plain; charset=utf-8"}, UNKNOWN_ASSET_BODY.encode())
        tag = f'"{asset.hash}"'
        if headers.get("if-none-match") == tag:
            return HttpReply(304, {**base, "ETag": tag})
        return HttpReply(200, {**base, "Content-Type": asset.content_type, "ETag": tag}, asset.content.encode("utf-8"))

    async def _serve_socket(self, stream: SocketStream) -> None:
        await serve_http_exchange(stream, self._exchange)

    async def _exchange(self, stream: SocketStream, request: HttpRequest) -> None:
        method, target, headers, _body = request
        await write_http_reply(stream, self.http_reply(method, target, headers), head_only=method == "HEAD")

    # ------------------------------------------------------------------ engine client for pages

    async def call(self, function_id: str, data: Any = None, *, timeout: float = 10.0) -> Any:
        return await self.connection.call(function_id, {} if data is None else data, timeout=timeout)

    def register_function(self, function_id: str, handler: Handler, *, metadata: Any = None) -> None:
        """Serve `function_id` on this connection with `async handler(data)`."""
        self._handlers[function_id] = handler
        body: dict[str, Any] = {"id": function_id}
        if metadata is not None:
            body["metadata"] = metadata
        self.connection.register_function(body)

    def unregister_function(self, function_id: str) -> None:
        self._handlers.pop(function_id, None)
        self.connection.unregister_function(function_id)

    def bind(self, trigger_type: str, function_id: str, config: Any = None) -> str:
        binding_id = str(uuid.uuid4())
        self.connection.bind(binding_id, trigger_type, function_id, config or {})
        return binding_id

    def unbind(self, binding_id: str) -> None:
        self.connection.unbind(binding_id)

    async def _serve(self, invocation: Invocation) -> Any:
        handler = self._handlers.get(invocation.function_id)
        if handler is None:
            raise EngineCallError("function_not_found", f"Function '{invocation.function_id}' not found")
        if len(inspect.signature(handler).parameters) >= 2:
            return await handler(invocation.data, invocation)
        return await handler(invocation.data)

    async def _manifest_function(self, _data: Any) -> Any:
        return self.manifest()


# ------------------------------------------------------------------ a minimal HTTP/1.1 exchange

_REASONS = {200: "OK", 304: "Not Modified", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 500: "Error"}
MAX_REQUEST_BYTES = 8 * 1024 * 1024


async def read_http_request(stream: SocketStream) -> HttpRequest | None:
    """One request: method, target, lower-cased headers and the body (Content-Length only)."""
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = await stream.receive(65536)
        if not chunk:
            return None
        head += chunk
        if len(head) > MAX_REQUEST_BYTES:
            raise ValueError("request head too large")
    blob, _, body = head.partition(b"\r\n\r\n")
    lines = blob.decode("latin-1").split("\r\n")
    method, target, _version = lines[0].split(" ", 2)
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:] if ":" in line)}
    length = int(headers.get("content-length", "0") or 0)
    if length > MAX_REQUEST_BYTES:
        raise ValueError("request body too large")
    while len(body) < length:
        chunk = await stream.receive(65536)
        if not chunk:
            break
        body += chunk
    return method, target, headers, body


async def write_http_reply(stream: SocketStream, reply: HttpReply, *, head_only: bool = False) -> None:
    headers = dict(reply.headers)
    if reply.status != 304:
        headers["Content-Length"] = str(len(reply.body))
    headers["Connection"] = "close"
    head = f"HTTP/1.1 {reply.status} {_REASONS.get(reply.status, 'OK')}\r\n" + "".join(
        f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    body = b"" if head_only or reply.status == 304 else reply.body
    await stream.send(head.encode("latin-1") + body)


async def serve_http_exchange(stream: SocketStream,
                              exchange: Callable[[SocketStream, HttpRequest], Awaitable[None]]) -> None:
    """One exchange on an accepted loopback connection: read the request (`read_http_request`),
    hand it to `exchange(stream, request)`, which writes the reply, and close the stream. A
    client that goes away, or a request that is too large or malformed (`ValueError`), ends the
    exchange quietly: one bad client never stops the server."""
    async with stream:
        try:
            request = await read_http_request(stream)
            if request is not None:
                await exchange(stream, request)
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError,
                ValueError):
            return
