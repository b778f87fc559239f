"""A real HTTP workers registry on 127.0.0.1 for tests (threaded `http.server`).

It serves the registry's documented shapes and can misbehave on demand:

    with MockRegistry() as registry:                 # also `async with`
        settings = settings.model_copy(update={"registry_url": registry.url})
        registry.add_worker("resend", version="1.2.3", skills={"skills/index.md": "# Resend"})
        registry.set("/w/odd?version=latest", json={"worker": {"name": "odd"}})
        registry.fail("/w/resend/skills", "500", times=1)    # flapping: first call fails
        ...
        assert registry.count("/w/resend/skills") == 2

Routes, most specific first:
1. explicit routes from `set(path, …)` / `handle(path, fn)`: a key with a query string
   (`/w/x?version=latest`) matches exactly that query (parameter order ignored); a key without
   one matches the path whatever the query;
2. the worker catalogue filled by `add_worker`: `GET /w` (`search` substring filter over name and
   description, ordered by downloads, `cursor` = offset, `page_size` per registry),
   `GET /w/{name}?version=<v|tag>` → `{"worker": {...}, "api_reference": {...}, "readme": …}`,
   `GET /w/{name}/skills?version=<v|tag>` → `{"name", "version", "skills": [{path, content}]}`;
3. anything else → 404 `{"error": "not found"}`.

`fail(path, mode, times=None)` overrides a path (same key rules) with a failure: an HTTP status
(`500`, `"502"`, `404` …), `"hang"` / `"timeout"` (accept the request and never answer until the
server closes), `"truncated"` (announce a longer body than is sent, then close), `"malformed"`
(200 with invalid JSON) or `"reset"` (close the connection without an answer). With `times=n`
only the next n matching requests fail. Every request is recorded in `requests`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from .loopback import LoopbackHTTPServer, LoopbackService, QuietHandler


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    """Header names lower-cased."""
    body: bytes = b""


@dataclass
class Reply:
    status: int = 200
    json: Any = None
    body: bytes | str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


Responder = Callable[[RecordedRequest], "Reply | Mapping[str, Any] | list[Any]"]


@dataclass
class _Failure:
    mode: str
    remaining: int | None


def _route_key(method: str, path: str, query: Iterable[tuple[str, str]] | None) -> str:
    key = f"{method.upper()} {path}"
    if query is not None:
        key += "?" + urlencode(sorted(query))
    return key


def _split(path: str) -> tuple[str, list[tuple[str, str]] | None]:
    parts = urlsplit(path)
    query = parse_qsl(parts.query, keep_blank_values=True) if "?" in path else None
    return parts.path or "/", query


@dataclass
class MockWorker:
    name: str
    description: str | None
    versions: dict[str, dict[str, Any]]
    """version → {"skills": [...], "functions": [...], "triggers": [...], "readme": …}"""
    tags: dict[str, str]
    envelope: dict[str, Any]
    listed: bool = True


class MockRegistry(LoopbackService):
    thread_name = "mock-registry"

    def __init__(self, *, page_size: int = 20) -> None:
        super().__init__()
        self.page_size = page_size
        self.requests: list[RecordedRequest] = []
        self._routes: dict[str, Reply | Responder] = {}
        self._failures: dict[str, _Failure] = {}
        self._workers: dict[str, MockWorker] = {}
        self._lock = threading.Lock()

    # -- lifecycle ---------------------------------------------------------------------------

    def _serve(self) -> LoopbackHTTPServer:
        registry = self

        class Handler(_Handler):
            owner = registry

        return LoopbackHTTPServer(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        """Base URL without a trailing slash (`http://127.0.0.1:<port>`)."""
        return f"http://127.0.0.1:{self.port}"

    # -- configuration -----------------------------------------------------------------------

    def set(self, path: str, *, status: int = 200, json: Any = None,
            body: bytes | str | None = None, headers: Mapping[str, str] | None = None,
            delay: float = 0.0, method: str = "GET") -> None:
        """Answer `method path` with a fixed reply (`json` is encoded; `body` is sent as is)."""
        route_path, query = _split(path)
        with self._lock:
            self._routes[_route_key(method, route_path, query)] = Reply(
                status, json, body, dict(headers or {}), delay)

    def handle(self, path: str, responder: Responder, *, method: str = "GET") -> None:
        """Answer `method path` with `responder(request)` → a Reply, or JSON data (200)."""
        route_path, query = _split(path)
        with self._lock:
            self._routes[_route_key(method, route_path, query)] = responder

    def remove(self, path: str, *, method: str = "GET") -> None:
        route_path, query = _split(path)
        with self._lock:
            self._routes.pop(_route_key(method, route_path, query), None)

    def fail(self, path: str, mode: str | int, *, times: int | None = None,
             method: str = "GET") -> None:
        """Make `path` misbehave (see the module docstring); `times=None` = until `heal`."""
        route_path, query = _split(path)
        with self._lock:
            self._failures[_route_key(method, route_path, query)] = _Failure(str(mode), times)

    def heal(self, path: str | None = None, *, method: str = "GET") -> None:
        """Remove the failure of `path` (all failures when None)."""
        with self._lock:
            if path is None:
                self._failures.clear()
            else:
                route_path, query = _split(path)
                self._failures.pop(_route_key(method, route_path, query), None)

    def add_worker(
        self,
        name: str,
        *,
        version: str = "1.0.0",
        description: str | None = None,
        skills: Mapping[str, str] | list[Mapping[str, Any]] | None = None,
        functions: Iterable[Mapping[str, Any]] = (),
        triggers: Iterable[Mapping[str, Any]] = (),
        readme: str | None = None,
        tags: Iterable[str] = ("latest",),
        envelope: Mapping[str, Any] | None = None,
        listed: bool = True,
        bundle_name: str | None = None,
        prompts: list[Mapping[str, Any]] | None = None,
    ) -> None:
        """Publish `name@version` (tags point at it). `skills` maps bundle paths to contents
        (or is the raw entry list); `envelope` adds/overrides Worker fields; `bundle_name`
        overrides the `name` the skills payload reports."""
        with self._lock:
            worker = self._workers.get(name)
            if worker is None:
                worker = MockWorker(name, description, {}, {}, {}, listed)
                self._workers[name] = worker
            worker.description = description if description is not None else worker.description
            worker.listed = listed
            worker.envelope.update(envelope or {})
            if isinstance(skills, Mapping):
                entries = [{"path": p, "content": c} for p, c in skills.items()]
            else:
                entries = [dict(e) for e in (skills or [])]
            worker.versions[version] = {
                "skills": entries,
                "functions": [dict(f) for f in functions],
                "triggers": [dict(t) for t in triggers],
                "readme": readme,
                "bundle_name": bundle_name,
                "prompts": prompts,
            }
            for tag in tags:
                worker.tags[tag] = version

    def remove_worker(self, name: str) -> None:
        with self._lock:
            self._workers.pop(name, None)

    # -- inspection --------------------------------------------------------------------------

    def count(self, path: str, *, method: str = "GET") -> int:
        """Requests seen for `path` (with a query string: exactly that query)."""
        route_path, query = _split(path)
        want = None if query is None else sorted(query)
        seen = 0
        for request in list(self.requests):
            if request.method != method or request.path != route_path:
                continue
            if want is not None and sorted(request.query.items()) != want:
                continue
            seen += 1
        return seen

    def reset_requests(self) -> None:
        self.requests.clear()

    # -- dispatch (handler threads) ------------------------------------------------------------

    def _lookup_failure(self, method: str, path: str, query: list[tuple[str, str]]) -> str | None:
        with self._lock:
            for key in (_route_key(method, path, query), _route_key(method, path, None)):
                failure = self._failures.get(key)
                if failure is None:
                    continue
                if failure.remaining is not None:
                    if failure.remaining <= 0:
                        del self._failures[key]
                        continue
                    failure.remaining -= 1
                return failure.mode
        return None

    def _lookup_route(self, method: str, path: str,
                      query: list[tuple[str, str]]) -> Reply | Responder | None:
        with self._lock:
            for key in (_route_key(method, path, query), _route_key(method, path, None)):
                if key in self._routes:
                    return self._routes[key]
        return None

    def _resolve(self, worker: MockWorker, wanted: str | None) -> tuple[str, dict[str, Any]] | None:
        wanted = wanted or "latest"
        version = worker.tags.get(wanted, wanted)
        data = worker.versions.get(version)
        return None if data is None else (version, data)

    def _envelope(self, worker: MockWorker, version: str) -> dict[str, Any]:
        row: dict[str, Any] = {
            "name": worker.name,
            "description": worker.description,
            "type": "binary",
            "version": version,
            "repo": None,
            "config": {},
            "supported_targets": [],
            "total_downloads": 0,
            "dependencies": [],
            "author": None,
        }
        row.update(worker.envelope)
        return row

    def _catalogue(self, request: RecordedRequest) -> Reply | None:
        if request.method != "GET":
            return None
        parts = [p for p in request.path.split("/") if p]
        if not parts or parts[0] != "w":
            return None
        with self._lock:
            workers = dict(self._workers)
        if len(parts) == 1:
            return Reply(json=self._list(workers, request.query))
        worker = workers.get(parts[1])
        if worker is None or len(parts) > 3 or (len(parts) == 3 and parts[2] != "skills"):
            return None
        resolved = self._resolve(worker, request.query.get("version"))
        if resolved is None:
            return None
        version, data = resolved
        if len(parts) == 3:
            payload: dict[str, Any] = {
                "name": data["bundle_name"] or worker.name,
                "version": version,
                "skills": data["skills"],
            }
            if data["prompts"] is not None:
                payload["prompts"] = data["prompts"]
            return Reply(json=payload)
        return Reply(json={
            "worker": self._envelope(worker, version),
            "api_reference": {"functions": data["functions"], "triggers": data["triggers"]},
            "readme": data["readme"],
        })

    def _list(self, workers: dict[str, MockWorker], query: Mapping[str, str]) -> dict[str, Any]:
        search = query.get("search", "").strip().lower()
        rows = []
        for worker in workers.values():
            if not worker.listed:
                continue
            text = f"{worker.name} {worker.description or ''}".lower()
            if search and not all(term in text for term in search.split()):
                continue
            latest = worker.tags.get("latest") or max(worker.versions)
            row = self._envelope(worker, latest)
            row.pop("version")
            row["latest_version"] = latest
            rows.append(row)
        rows.sort(key=lambda r: (-int(r.get("total_downloads") or 0), r["name"]))
        try:
            start = max(0, int(query.get("cursor", "0")))
        except ValueError:
            start = 0
        page = rows[start:start + self.page_size]
        more = start + self.page_size < len(rows)
        return {
            "workers": page,
            "pagination": {
                "next_cursor": str(start + self.page_size) if more else None,
                "has_more": more,
                "page_size": self.page_size,
            },
        }


class _Handler(QuietHandler):
    owner: MockRegistry

    def serve(self, method: str) -> None:
        owner = self.owner
        parts = urlsplit(self.path)
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        request = RecordedRequest(
            method=method,
            path=parts.path,
            query=dict(pairs),
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
        )
        owner.requests.append(request)
        failure = owner._lookup_failure(method, parts.path, pairs)
        if failure is not None:
            self._misbehave(failure)
            return
        route = owner._lookup_route(method, parts.path, pairs)
        reply: Reply | None
        if route is None:
            reply = owner._catalogue(request)
        elif isinstance(route, Reply):
            reply = route
        else:
            answer = route(request)
            reply = answer if isinstance(answer, Reply) else Reply(json=answer)
        if reply is None:
            reply = Reply(status=404, json={"error": "not found"})
        if reply.delay:
            owner._wait(reply.delay)
        self._send(reply)

    def _send(self, reply: Reply) -> None:
        headers = dict(reply.headers)
        if reply.body is not None:
            data = reply.body.encode("utf-8") if isinstance(reply.body, str) else reply.body
        else:
            data = json.dumps(reply.json).encode("utf-8")
            headers.setdefault("Content-Type", "application/json")
        self.send_response(reply.status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def _misbehave(self, mode: str) -> None:
        self.close_connection = True
        if mode.isdigit():
            status = int(mode)
            self._send(Reply(status=status, json={"error": f"mock failure {status}"}))
        elif mode in ("hang", "timeout"):
            self.owner.hang()
        elif mode == "truncated":
            data = b'{"workers": [{"name": "truncated", "description": "cut short"}]}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data) * 4))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
        elif mode == "malformed":
            self._send(Reply(body=b'{"workers": [ {"name": "oops", ', headers={
                "Content-Type": "application/json"}))
        elif mode == "reset":
            pass
        else:
            raise ValueError(f"unknown failure mode {mode!r}")
