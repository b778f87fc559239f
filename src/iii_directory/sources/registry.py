"""The workers-registry HTTP client: async httpx, one deadline per request, an in-process TTL
cache (docs/rules/surfaces.md §9.3, §10.1–§10.2; docs/rules/kits.md §1.6 reuses the transport).

Public surface, obtained with `directory.service(RegistryClient)`:

* `await client.list_workers(settings, search=None, cursor=None)` → the normalised page
  `{workers: [Worker], pagination: {next_cursor, has_more, page_size}}` (cached under
  `worker-list:<search>:<cursor>`);
* `await client.worker_record(settings, name, version=None, tag=None)` → the full record
  `{"body": <GET /w/{name} answer>, "detail": <its worker object, or the body when flat>,
  "skills": <GET /w/{name}/skills answer>}` fetched with two concurrent GETs and
  cached under `worker-info:<name>:<version|tag>=<value>` (the registry search reads the full
  `api_reference` from it);
* `await client.worker_info(settings, name, version=None, tag=None, readme=False)` → the card of
  `directory::registry::workers::info` built from that record;
* `await client.skills_bundle(settings, worker, value)` → `GET /w/{worker}/skills?version=<value>`
  uncached (downloads always fetch fresh bytes);
* `await client.get_json(settings, path, params=None, cache_key=None)`,
  `await client.get_bytes(settings, path, params=None)` and
  `await client.post_json(settings, path, body)` for other endpoints (kits).

Every request carries `User-Agent: iii-directory/<version>` and is bounded as a whole (connect,
send, headers and body) by `download_timeout_ms`. Failures are `RegistryFailure` values, a
`DirectoryError` coded `D320` (`D310` for a 404) whose message never contains the URL or the
response body; the attributes `kind`, `status` and `reason` let other surfaces (kits: `D520`)
re-word them. The cache is cleared on every configuration reload, and keys include the base
URL, so a repointed `registry_url` never serves an old answer.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import re
import ssl
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio

from .. import __version__
from ..errors import DirectoryError, invalid_input, not_found
from ..exclusions import is_excluded

if TYPE_CHECKING:
    import httpx  # imported by the first request (~0.1 s of the worker's start-up)

    from ..config import Settings
    from ..runtime import Runtime

log = logging.getLogger(__name__)

USER_AGENT = f"iii-directory/{__version__}"
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
"""A registry answer larger than this is refused (D320) instead of filling memory."""

WORKER_LIST_NEXT: tuple[tuple[str, str], ...] = (
    ("directory::registry::workers::list", "browse worker names"),
)
RETRY_NEXT = " Next: retry shortly."

_WORKER_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*\Z")
_WORKER_NAME_START = re.compile(r"^[a-z0-9]")


# --------------------------------------------------------------------------------------------
# Errors


class RegistryFailure(DirectoryError):
    """A registry call that failed.

    `kind` is one of `unreachable` (connection error or timeout), `status` (non-2xx other than
    404), `not_found` (404), `decode` (undecodable body) or `too_large`; `status` is the HTTP
    status when there was one; `reason` is a short technical cause for logs (never sent).
    """

    def __init__(self, code: str, message: str, *, kind: str, status: int | None = None,
                 reason: str = "") -> None:
        super().__init__(code, message)
        self.kind = kind
        self.status = status
        self.reason = reason


class RegistryNotFound(RegistryFailure):
    """The registry answered 404; callers re-word it for what they asked for."""


def unreachable(reason: str) -> RegistryFailure:
    return RegistryFailure(
        "D320", "D320 registry_error: could not reach the registry." + RETRY_NEXT,
        kind="unreachable", reason=reason,
    )


def bad_status(status: int) -> RegistryFailure:
    return RegistryFailure(
        "D320", f"D320 registry_error: registry returned HTTP {status}." + RETRY_NEXT,
        kind="status", status=status, reason=f"HTTP {status}",
    )


def undecodable(reason: str, status: int | None = None) -> RegistryFailure:
    return RegistryFailure(
        "D320", "D320 registry_error: could not decode the registry response.",
        kind="decode", status=status, reason=reason,
    )


def too_large(status: int | None) -> RegistryFailure:
    return RegistryFailure(
        "D320",
        f"D320 registry_error: the registry response is larger than {MAX_RESPONSE_BYTES} bytes."
        + RETRY_NEXT,
        kind="too_large", status=status, reason="response too large",
    )


def missing(status: int = 404) -> RegistryNotFound:
    return RegistryNotFound(
        "D310", "D310 not_found: the registry has no such resource.",
        kind="not_found", status=status, reason=f"HTTP {status}",
    )


# --------------------------------------------------------------------------------------------
# Worker names (docs/rules/surfaces.md §9.3 step 1)


def worker_name_problem(name: str) -> str | None:
    """The bare reason a registry worker name is invalid, or None when `^[a-z0-9][a-z0-9_-]*$`
    holds."""
    if not name:
        return "worker name must be non-empty"
    if not _WORKER_NAME_START.match(name):
        return f'worker name must start with a lowercase ASCII letter or digit: "{name}"'
    if not _WORKER_NAME.match(name):
        return f"worker name may only contain lowercase letters, digits, '-', '_': \"{name}\""
    return None


def info_name_error(name: str) -> DirectoryError | None:
    """The D311 error of `workers::info` for a bad name (docs/rules/surfaces.md §10.2), or None."""
    if not name:
        return invalid_input(
            "D311", "registry worker name must be non-empty.", next_steps=WORKER_LIST_NEXT
        )
    if not _WORKER_NAME_START.match(name):
        reason = "it must start with a lowercase ASCII letter or digit"
    elif not _WORKER_NAME.match(name):
        reason = "it may only contain lowercase letters, digits, '-' and '_'"
    else:
        return None
    shown = json.dumps(name, ensure_ascii=False)
    return invalid_input(
        "D311", f"registry worker name {shown} is invalid: {reason}.",
        next_steps=WORKER_LIST_NEXT,
    )


def version_selector(version: str | None, tag: str | None) -> tuple[str, str]:
    """`("version", v)` or `("tag", t)`; neither ⇒ tag `latest`; both ⇒ bare error."""
    if version is not None and tag is not None:
        raise DirectoryError.plain("specify either version OR tag, not both")
    if version is not None:
        return "version", version
    return "tag", tag if tag is not None else "latest"


# --------------------------------------------------------------------------------------------
# Shapes (docs/rules/surfaces.md §10.1)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def normalize_author(raw: Any) -> dict[str, Any] | None:
    """`{name, pfp, verified}` or None; `verified` from `verified`, else `is_verified`."""
    if not isinstance(raw, Mapping):
        return None
    verified = raw.get("verified")
    if not isinstance(verified, bool):
        verified = raw.get("is_verified")
    return {
        "name": _text(raw.get("name")),
        "pfp": _text(raw.get("pfp")),
        "verified": verified if isinstance(verified, bool) else False,
    }


def normalize_worker(raw: Any) -> dict[str, Any] | None:
    """One Worker envelope with the documented defaults; None when there is no `name`."""
    if not isinstance(raw, Mapping):
        return None
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        return None
    version = _text(raw.get("version")) or _text(raw.get("latest_version"))
    targets = raw.get("supported_targets")
    downloads = raw.get("total_downloads")
    dependencies = []
    for dep in raw.get("dependencies") or []:
        if isinstance(dep, Mapping) and isinstance(dep.get("name"), str):
            dep_version = dep.get("version")
            if isinstance(dep_version, (int, float)) and not isinstance(dep_version, bool):
                dep_version = str(dep_version)
            if isinstance(dep_version, str):
                dependencies.append({"name": dep["name"], "version": dep_version})
    config = raw.get("config")
    worker: dict[str, Any] = {
        "name": name,
        "description": _text(raw.get("description")),
        "type": _text(raw.get("type")),
        "version": version,
        "repo": _text(raw.get("repo")),
        "config": config if config is not None else {},
        "supported_targets": [t for t in targets if isinstance(t, str)]
        if isinstance(targets, list) else [],
        "total_downloads": downloads
        if isinstance(downloads, int) and not isinstance(downloads, bool) and downloads >= 0
        else 0,
        "dependencies": dependencies,
        "author": normalize_author(raw.get("author")),
    }
    image = _text(raw.get("image"))
    if image is not None:
        worker["image"] = image
    return worker


def normalize_page(body: Any) -> dict[str, Any]:
    """`{workers, pagination}`: nameless rows dropped, missing pagination defaulted."""
    if not isinstance(body, Mapping):
        raise undecodable("worker list is not an object")
    rows = body.get("workers")
    workers = [w for w in (normalize_worker(r) for r in rows) if w is not None] \
        if isinstance(rows, list) else []
    raw_page = body.get("pagination")
    page = raw_page if isinstance(raw_page, Mapping) else {}
    size = page.get("page_size")
    return {
        "workers": workers,
        "pagination": {
            "next_cursor": _text(page.get("next_cursor")),
            "has_more": page.get("has_more") if isinstance(page.get("has_more"), bool) else False,
            "page_size": size if isinstance(size, int) and not isinstance(size, bool)
            and size >= 0 else 0,
        },
    }


# --------------------------------------------------------------------------------------------
# The card (docs/rules/surfaces.md §10.2)

def worker_detail(body: Any) -> dict[str, Any]:
    """`body.worker` when it is an object, else the body itself (flat payload)."""
    if not isinstance(body, Mapping):
        raise undecodable("worker detail is not an object")
    inner = body.get("worker")
    return dict(inner) if isinstance(inner, Mapping) else dict(body)


def api_entries(detail: Mapping[str, Any], body: Mapping[str, Any], key: str) -> list[Any]:
    """`api_reference.<key>` of the detail (or the body), else a top-level `<key>` list."""
    for holder in (detail, body):
        ref = holder.get("api_reference")
        if isinstance(ref, Mapping) and isinstance(ref.get(key), list):
            return list(ref[key])
    for holder in (detail, body):
        if isinstance(holder.get(key), list):
            return list(holder[key])
    return []


def _entry_name(entry: Mapping[str, Any]) -> str | None:
    for key in ("name", "function_id", "id"):
        value = entry.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def card_rows(entries: list[Any], *, functions: bool) -> list[dict[str, Any]]:
    """Public `{name, description}` rows: schemas and metadata dropped, internal entries (and,
    for functions, search-excluded ids) left out."""
    rows = []
    for entry in entries:
        if not isinstance(entry, Mapping):
            continue
        name = _entry_name(entry)
        if name is None:
            continue
        metadata = entry.get("metadata")
        if functions and is_excluded(name, metadata):
            continue
        if not functions and isinstance(metadata, Mapping) and metadata.get("internal") is True:
            continue
        rows.append({"name": name, "description": _text(entry.get("description"))})
    return rows


def skills_tree(skills_body: Any) -> dict[str, Any]:
    """`{skills: [{path}]}` from a skills payload (contents dropped)."""
    entries = skills_body.get("skills") if isinstance(skills_body, Mapping) else None
    paths = []
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, Mapping) and isinstance(entry.get("path"), str):
            paths.append({"path": entry["path"]})
    return {"skills": paths}


def build_card(record: Mapping[str, Any], name: str, *, readme: bool) -> dict[str, Any]:
    body = record["body"]
    detail = record["detail"]
    worker = normalize_worker(detail) or normalize_worker({**detail, "name": name})
    assert worker is not None
    card: dict[str, Any] = {
        "worker": worker,
        "api_reference": {
            "functions": card_rows(api_entries(detail, body, "functions"), functions=True),
            "triggers": card_rows(api_entries(detail, body, "triggers"), functions=False),
        },
        "skills_tree": skills_tree(record["skills"]),
    }
    if readme:
        text = _text(detail.get("readme")) or _text(body.get("readme"))
        if text is not None:
            card["readme"] = text
    return card


# --------------------------------------------------------------------------------------------
# The client

_SSL_CONTEXT: ssl.SSLContext | None = None


def mark_sniffio_absent() -> None:
    """When `sniffio` is not installed, record it as absent in `sys.modules` (a `None` entry
    makes `import sniffio` fail at once). httpcore asks `import sniffio` on every lock it takes
    (several per request); without the entry each ask searched the whole `sys.path` again, a
    millisecond or more of CPU per registry request under load. Installed, it is left alone."""
    import importlib.util
    import sys

    if "sniffio" not in sys.modules and importlib.util.find_spec("sniffio") is None:
        sys.modules.setdefault("sniffio", None)  # type: ignore[arg-type]


def _ssl_context() -> ssl.SSLContext:
    """One verifying TLS context for the process (loading CA certificates is the slow part of
    creating an httpx client)."""
    global _SSL_CONTEXT
    if _SSL_CONTEXT is None:
        try:
            import certifi

            _SSL_CONTEXT = ssl.create_default_context(cafile=certifi.where())
        except ImportError:  # pragma: no cover - certifi ships with httpx
            _SSL_CONTEXT = ssl.create_default_context()
    return _SSL_CONTEXT


def warm_up() -> None:
    """Import httpx (and httpcore, which its transport imports) and build the process's TLS
    context: the work of a worker's first registry request that is not network (~0.1 s idle,
    three times that on a loaded host). `serve` runs it on a thread right after registering, so
    the first search does not do it after its index wait."""
    import httpcore  # noqa: F401  (httpx imports it when the first client is built)
    import httpx  # noqa: F401

    _ssl_context()


class _Flight:
    """The outcome of one in-flight registry GET, shared by callers asking for the same key."""

    def __init__(self) -> None:
        self._done = anyio.Event()
        self._value: Any = None
        self._error: BaseException | None = None

    def succeed(self, value: Any) -> None:
        self._value = value
        self._done.set()

    def fail(self, error: BaseException) -> None:
        self._error = error
        self._done.set()

    async def result(self) -> Any:
        await self._done.wait()
        if self._error is not None:
            if isinstance(self._error, DirectoryError):
                raise self._error
            raise unreachable("the shared request was cancelled")
        return self._value


GET_THREADS = 16
"""Registry GETs run at once (each on a worker thread of the client's own limiter)."""


class CappedBody:
    """The body of one answer read chunk by chunk, for the blocking GETs and the async requests
    alike: `add` raises `too_large` once it passes `MAX_RESPONSE_BYTES`."""

    def __init__(self, status: int) -> None:
        self.status = status
        self.size = 0
        self._chunks: list[bytes] = []

    def add(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > MAX_RESPONSE_BYTES:
            raise too_large(self.status)
        self._chunks.append(chunk)

    def answer(self) -> tuple[int, bytes]:
        """(status, the whole body)."""
        return self.status, b"".join(self._chunks)


def _list_key(search: str | None, cursor: str | None) -> str:
    return f"worker-list:{search or ''}:{cursor or ''}"


class RegistryClient:
    """Registry access for one `Directory` (create it with `directory.service(RegistryClient)`)."""

    def __init__(self, directory: Runtime) -> None:
        self._cache: dict[str, tuple[float, Any]] = {}
        self._inflight: dict[str, _Flight] = {}
        self._client: httpx.AsyncClient | None = None
        self._blocking: httpx.Client | None = None
        self._blocking_lock = threading.Lock()
        self._limiter: tuple[object, anyio.CapacityLimiter] | None = None
        self._client_loop: object | None = None
        self.clock = time.monotonic
        """The GET threads' clock (a thread whose caller gave up stops at the same deadline)."""
        directory.settings_listeners.append(self._on_settings)

    def _http(self) -> httpx.AsyncClient:
        """One pooled client per event loop: connections are reused across requests (a new
        client per request made every search pay a TCP + TLS handshake per registry call)."""
        import httpx

        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop or self._client.is_closed:
            mark_sniffio_absent()
            self._client = httpx.AsyncClient(
                verify=_ssl_context(), follow_redirects=True, max_redirects=5, trust_env=True,
                limits=httpx.Limits(max_connections=16, max_keepalive_connections=8),
            )
            self._client_loop = loop
        return self._client

    async def warm(self) -> None:
        """`warm_up()` on a worker thread, then the pooled client of this event loop."""
        await anyio.to_thread.run_sync(warm_up)
        self._http()

    async def aclose(self) -> None:
        client, self._client = self._client, None
        blocking, self._blocking = self._blocking, None
        if blocking is not None:
            blocking.close()
        if client is not None and self._client_loop is asyncio.get_running_loop():
            await client.aclose()

    def _blocking_http(self) -> httpx.Client:
        """The pooled blocking client the GET threads share (httpx clients are thread-safe)."""
        import httpx

        with self._blocking_lock:
            if self._blocking is None or self._blocking.is_closed:
                mark_sniffio_absent()
                self._blocking = httpx.Client(
                    verify=_ssl_context(), follow_redirects=True, max_redirects=5, trust_env=True,
                    limits=httpx.Limits(max_connections=GET_THREADS, max_keepalive_connections=GET_THREADS),
                )
            return self._blocking

    def _get_limiter(self) -> anyio.CapacityLimiter:
        """The GET threads' own capacity limiter (one per event loop), so registry requests
        never wait behind the file handlers' threads, nor those behind them."""
        loop = asyncio.get_running_loop()
        if self._limiter is None or self._limiter[0] is not loop:
            self._limiter = (loop, anyio.CapacityLimiter(GET_THREADS))
        return self._limiter[1]

    def _get_blocking(self, url: str, params: Mapping[str, str] | None,
                      headers: Mapping[str, str], timeout_s: float) -> tuple[int, bytes]:
        """One GET on a worker thread: (status, body), `too_large` past the cap; httpx errors
        propagate to `_request`, which maps them as for the async transport. The caller stops
        waiting after `timeout_s` (`_request`); the thread itself stops reading the body at the
        same deadline, so a slow-drip answer does not hold one of the GET threads after it."""
        import httpx

        deadline = self.clock() + timeout_s
        client = self._blocking_http()
        request = client.build_request("GET", url, params=dict(params) if params else None,
                                       headers=dict(headers), timeout=httpx.Timeout(timeout_s))
        try:
            response = client.send(request, stream=True)
        except httpx.RemoteProtocolError:  # a pooled connection the server had closed
            response = client.send(request, stream=True)
        body = CappedBody(response.status_code)
        try:
            for chunk in response.iter_bytes():
                body.add(chunk)
                if self.clock() > deadline:
                    raise httpx.ReadTimeout(f"answer not read within {timeout_s:g} s")
        finally:
            response.close()
        return body.answer()

    # -- cache ---------------------------------------------------------------------------

    def _on_settings(self, old: Settings, new: Settings) -> None:
        """A configuration reload clears the response cache (docs/rules/surfaces.md §2.3)."""
        self.clear_cache()

    def clear_cache(self) -> None:
        self._cache.clear()

    def _cached(self, settings: Settings, key: str) -> Any | None:
        ttl = settings.registry_cache_ttl_ms / 1000.0
        hit = self._cache.get(f"{settings.registry_url} {key}")
        if hit is None or ttl <= 0:
            return None
        stamp, value = hit
        if time.monotonic() - stamp >= ttl:
            return None
        return value

    def _store(self, settings: Settings, key: str, value: Any) -> None:
        if settings.registry_cache_ttl_ms <= 0:
            return
        now = time.monotonic()
        ttl = settings.registry_cache_ttl_ms / 1000.0
        for stale in [k for k, (t, _) in self._cache.items() if now - t >= ttl]:
            del self._cache[stale]
        self._cache[f"{settings.registry_url} {key}"] = (now, value)

    # -- transport -----------------------------------------------------------------------

    async def _request(self, settings: Settings, method: str, path: str, *,
                       params: Mapping[str, str] | None = None,
                       body: Any = None) -> tuple[int, bytes]:
        """One request bounded as a whole by `download_timeout_ms`; returns (status, body).

        Raises `unreachable` on connection errors and timeouts and `too_large` on oversized
        answers; status handling is the caller's."""
        import httpx

        timeout_s = settings.download_timeout_ms / 1000.0
        url = settings.registry_url + path
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        try:
            with anyio.fail_after(timeout_s):
                if method == "GET":
                    return await anyio.to_thread.run_sync(
                        functools.partial(self._get_blocking, url, params, headers, timeout_s),
                        limiter=self._get_limiter(), abandon_on_cancel=True)
                client = self._http()
                request = client.build_request(
                    method, url, params=dict(params) if params else None, headers=headers,
                    json=body if body is not None else None, timeout=httpx.Timeout(timeout_s),
                )
                # only non-idempotent requests come here (a GET retries a stale pooled
                # connection in `_get_blocking`), so none is sent twice
                response = await client.send(request, stream=True)
                body = CappedBody(response.status_code)
                try:
                    async for chunk in response.aiter_bytes():
                        body.add(chunk)
                finally:
                    await response.aclose()
                return body.answer()
        except RegistryFailure:
            raise
        except TimeoutError:
            reason = f"timed out after {settings.download_timeout_ms} ms"
        except (httpx.HTTPError, OSError, ValueError) as exc:
            reason = f"{type(exc).__name__}: {exc}"
        log.warning("registry %s %s failed: %s", method, path, reason)
        raise unreachable(reason)

    @staticmethod
    def _check_status(status: int) -> None:
        if status == 404:
            raise missing(status)
        if not 200 <= status < 300:
            raise bad_status(status)

    @staticmethod
    def _decode(status: int, raw: bytes) -> Any:
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise undecodable(f"{type(exc).__name__}: {exc}", status) from None

    async def get_json(self, settings: Settings, path: str,
                       params: Mapping[str, str] | None = None, *,
                       cache_key: str | None = None) -> Any:
        """GET `{registry_url}{path}` and decode JSON; cached under `cache_key` when given."""
        if cache_key is None:
            return await self._fetch_json(settings, path, params)
        return await self._shared(settings, cache_key,
                                  lambda: self._fetch_json(settings, path, params))

    async def _shared(self, settings: Settings, key: str,
                      fetch: Callable[[], Awaitable[Any]]) -> Any:
        """The cached value of `key`, else one `fetch()` shared by every caller asking for
        `key` meanwhile (they all get its value or its error); the value is then cached."""
        hit = self._cached(settings, key)
        if hit is not None:
            return hit
        slot = f"{settings.registry_url} {key}"
        pending = self._inflight.get(slot)
        if pending is not None:
            return await pending.result()
        flight = self._inflight[slot] = _Flight()
        try:
            value = await fetch()
        except BaseException as exc:
            flight.fail(exc)
            raise
        else:
            self._store(settings, key, value)
            flight.succeed(value)
            return value
        finally:
            if self._inflight.get(slot) is flight:
                del self._inflight[slot]

    async def _fetch_json(self, settings: Settings, path: str,
                          params: Mapping[str, str] | None) -> Any:
        status, raw = await self._request(settings, "GET", path, params=params)
        self._check_status(status)
        return self._decode(status, raw)

    async def get_bytes(self, settings: Settings, path: str,
                        params: Mapping[str, str] | None = None) -> bytes:
        """GET `{registry_url}{path}` and return the raw body (2xx only)."""
        status, raw = await self._request(settings, "GET", path, params=params)
        self._check_status(status)
        return raw

    async def post_json(self, settings: Settings, path: str, body: Any) -> Any:
        """POST a JSON body to `{registry_url}{path}` and decode the JSON answer."""
        status, raw = await self._request(settings, "POST", path, body=body)
        self._check_status(status)
        return self._decode(status, raw)

    # -- registry endpoints ----------------------------------------------------------------

    def cached_list(self, settings: Settings, search: str | None = None,
                    cursor: str | None = None) -> dict[str, Any] | None:
        """What `list_workers` would answer from the cache right now, or None (no request is
        made). Lets the search's registry lane skip a task per cached variant."""
        return self._cached(settings, _list_key(search, cursor))

    def cached_record(self, settings: Settings, name: str) -> dict[str, Any] | None:
        """What `worker_record(settings, name)` (latest version) would answer from the cache
        right now, or None (no request is made)."""
        if info_name_error(name) is not None:
            return None
        kind, value = version_selector(None, None)
        return self._cached(settings, f"worker-info:{name}:{kind}={value}")

    async def list_workers(self, settings: Settings, search: str | None = None,
                           cursor: str | None = None) -> dict[str, Any]:
        """`GET /w[?search=…&cursor=…]` normalised to `{workers, pagination}`."""
        key = _list_key(search, cursor)
        params = {}
        if search:
            params["search"] = search
        if cursor:
            params["cursor"] = cursor

        async def fetch() -> dict[str, Any]:
            try:
                body = await self.get_json(settings, "/w", params or None)
            except RegistryNotFound as exc:
                raise bad_status(exc.status or 404) from None
            return normalize_page(body)

        return await self._shared(settings, key, fetch)

    async def worker_record(self, settings: Settings, name: str, version: str | None = None,
                            tag: str | None = None) -> dict[str, Any]:
        """The full registry record of one worker: `{"body", "detail", "skills"}` from
        `GET /w/{name}?version=<v>` and `GET /w/{name}/skills?version=<v>` run concurrently.

        A bad name raises the D311 of §10.2 (no request is made); a 404 on either call raises
        the D310 of §10.2."""
        name_error = info_name_error(name)
        if name_error is not None:
            raise name_error
        kind, value = version_selector(version, tag)
        key = f"worker-info:{name}:{kind}={value}"

        explicit = version is not None or tag is not None

        async def fetch_record() -> dict[str, Any]:
            return await self._fetch_record(settings, name, value, explicit=explicit)

        return await self._shared(settings, key, fetch_record)

    async def _fetch_record(self, settings: Settings, name: str, value: str, *,
                            explicit: bool) -> dict[str, Any]:
        results: dict[str, Any] = {}
        failures: list[RegistryFailure] = []

        async def fetch(slot: str, path: str) -> None:
            try:
                results[slot] = await self.get_json(settings, path, {"version": value})
            except RegistryFailure as exc:
                failures.append(exc)

        async with anyio.create_task_group() as group:
            group.start_soon(fetch, "body", f"/w/{name}")
            group.start_soon(fetch, "skills", f"/w/{name}/skills")
        if failures:
            nf = next((f for f in failures if isinstance(f, RegistryNotFound)), None)
            if nf is not None:
                raise not_found_worker(name, value if explicit else None) from None
            raise failures[0]
        body = results["body"]
        if not isinstance(body, Mapping):
            raise undecodable("worker detail is not an object")
        if not isinstance(results["skills"], Mapping):
            raise undecodable("skills payload is not an object")
        return {"body": dict(body), "detail": worker_detail(body), "skills": results["skills"]}

    async def worker_info(self, settings: Settings, name: str, version: str | None = None,
                          tag: str | None = None, readme: bool = False) -> dict[str, Any]:
        """The `workers::info` card `{worker, api_reference, skills_tree, readme?}`."""
        record = await self.worker_record(settings, name, version, tag)
        return build_card(record, name, readme=readme)

    async def skills_bundle(self, settings: Settings, worker: str, value: str) -> Any:
        """`GET /w/{worker}/skills?version=<value>` (fresh; a 404 raises RegistryNotFound)."""
        return await self.get_json(settings, f"/w/{worker}/skills", {"version": value})


def not_found_worker(name: str, explicit_value: str | None) -> DirectoryError:
    """D310 of `workers::info`: the worker, or the asked-for version or tag, is unknown."""
    if explicit_value is None:
        return not_found("D310", "registry worker", name, next_steps=WORKER_LIST_NEXT)
    shown = json.dumps(name, ensure_ascii=False)
    version = json.dumps(explicit_value, ensure_ascii=False)
    message = (
        f"D310 not_found: registry worker {shown} has no version or tag {version}."
        " Next: call directory::registry::workers::list to browse worker names."
    )
    return DirectoryError("D310", message)
