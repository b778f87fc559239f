"""The workers-registry HTTP client: async httpx, one deadline per request, an in-process TTL
cache (docs/rules/surfaces.md §9.3, §10.1–10.2; docs/rules/kits.md §1.6 reuses the transport).

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
import ssl
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio

from .. import __version__
from ..errors import DirectoryError
from ..lazy import import_httpx
from .registry_records import (
    MAX_RESPONSE_BYTES,
    RegistryFailure,
    RegistryNotFound,
    bad_status,
    build_card,
    info_name_error,
    missing,
    normalize_page,
    not_found_worker,
    too_large,
    undecodable,
    unreachable,
    version_selector,
    worker_detail,
)

if TYPE_CHECKING:
    import httpx  # imported by the first request (~0.1 s of the worker's start-up)

    from ..config import Settings
    from ..runtime import Runtime

log = logging.getLogger(__name__)

USER_AGENT = f"iii-directory/{__version__}"





# --------------------------------------------------------------------------------------------
# The client

_SSL_CONTEXT: ssl.SSLContext | None = None
_TRUSTED = False
_TRUST_LOCK = threading.Lock()


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
    """One verifying TLS context for the process (`PROTOCOL_TLS_CLIENT`: the certificate and
    the host name are checked). Its CA certificates are loaded by `_trust`, before the first
    https request (`_trust_https`), not here: OpenSSL keeps the ~120 parsed certificates in
    ~1.5 MiB of heap, which a worker whose registry is reached over plain http never uses."""
    global _SSL_CONTEXT
    if _SSL_CONTEXT is None:
        _SSL_CONTEXT = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    return _SSL_CONTEXT


def _trust() -> None:
    """Load the CA certificates into the process's context once: certifi's bundle (it ships
    with httpx), else the system's default ones. Loading them is the slow part of a client's
    TLS set-up (tens of milliseconds on a loaded host): run it on a thread."""
    global _TRUSTED
    if _TRUSTED:
        return
    with _TRUST_LOCK:
        if _TRUSTED:
            return
        context = _ssl_context()
        try:
            import certifi

            context.load_verify_locations(cafile=certifi.where())
        except ImportError:  # pragma: no cover - certifi ships with httpx
            context.load_default_certs(ssl.Purpose.SERVER_AUTH)
        _TRUSTED = True


def _trust_https(request: httpx.Request) -> None:
    """The blocking client's request hook: `_trust` before any https request (a redirect's
    too: httpx runs the hook for every request it sends)."""
    if request.url.scheme == "https":
        _trust()


async def _trust_https_async(request: httpx.Request) -> None:
    """The async client's request hook: `_trust` (on a thread) before any https request."""
    if request.url.scheme == "https" and not _TRUSTED:
        await anyio.to_thread.run_sync(_trust)


def warm_up(https: bool = True) -> None:
    """Import httpx (and httpcore, which its transport imports) and build the process's TLS
    context, with its CA certificates when the registry is reached over `https`: the work of a
    worker's first registry request that is not network (~0.1 s idle, three times that on a
    loaded host). `serve` runs it on a thread right after registering, so the first search does
    not do it after its index wait."""
    import httpcore  # noqa: F401  (httpx imports it when the first client is built)

    import_httpx()

    _ssl_context()
    if https:
        _trust()


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
        self._runtime = directory
        directory.settings_listeners.append(self._on_settings)

    def _http(self) -> httpx.AsyncClient:
        """One pooled client per event loop: connections are reused across requests (a new
        client per request made every search pay a TCP + TLS handshake per registry call)."""
        httpx = import_httpx()

        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop or self._client.is_closed:
            mark_sniffio_absent()
            self._client = httpx.AsyncClient(
                verify=_ssl_context(), follow_redirects=True, max_redirects=5, trust_env=True,
                limits=httpx.Limits(max_connections=16, max_keepalive_connections=8),
                event_hooks={"request": [_trust_https_async]},
            )
            self._client_loop = loop
        return self._client

    async def warm(self) -> None:
        """`warm_up()` on a worker thread (the CA certificates too when the configured
        `registry_url` is https), then the pooled client of this event loop."""
        https = self._runtime.settings.registry_url.lower().startswith("https:")
        await anyio.to_thread.run_sync(warm_up, https)
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
        httpx = import_httpx()

        with self._blocking_lock:
            if self._blocking is None or self._blocking.is_closed:
                mark_sniffio_absent()
                self._blocking = httpx.Client(
                    verify=_ssl_context(), follow_redirects=True, max_redirects=5, trust_env=True,
                    limits=httpx.Limits(max_connections=GET_THREADS, max_keepalive_connections=GET_THREADS),
                    event_hooks={"request": [_trust_https]},
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
        httpx = import_httpx()

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
        httpx = import_httpx()

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
        except (httpx.HTTPError, httpx.InvalidURL, OSError, ValueError) as exc:
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
