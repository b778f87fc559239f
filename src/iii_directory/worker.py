"""The worker: the function table wired to the engine connection.

* `LiveEngine` — the `EnginePort` adapter over a `protocol.Connection` (calls, void calls,
  trigger fan-out, live binding changes). Calls to `engine::*` and `configuration::*` are sent in
  namespace `default`; other calls in the worker's own namespace when it has one.
* `register_table` — trigger types first, then functions, then the bindings whose
  `enabled(settings)` holds.
* `Worker` — boot order: connect (the connection sends `engine::workers::register`) →
  configuration boot (`config_boot`) → registrations → (once their frames are on the socket)
  the `after_registration(settings)` callback → `Directory.start()` hooks. After a
  reattach the connection replays everything; the worker then re-reads its configuration and
  refreshes its catalog once (the bindings may have missed events while disconnected).
* `serve_main(url, config)` — the `iii-directory serve` entry point.
"""

from __future__ import annotations

import gc
import logging
import os
import platform
import signal
import sys
import uuid
from collections.abc import Callable, Mapping
from typing import Any

import anyio

from . import DESCRIPTION, WORKER_NAME, __version__
from .config import InvalidSettings, Settings, config_id, load_settings, project_root
from .config_boot import RetryPolicy, SeedUnreadable, boot_settings, read_seed
from .context import CallInfo
from .directory import Directory
from .functions import build_table
from .port import DEFAULT_CALL_TIMEOUT_S
from .protocol.backoff import Backoff
from .protocol.connection import DEFAULT_URL, Connection, Invocation, validate_url
from .protocol.errors import EngineCallError, NamespaceConflict
from .published import published
from .table import FunctionSpec, FunctionTable

log = logging.getLogger("iii_directory.worker")

ENGINE_PREFIXES = ("engine::", "configuration::")
REFRESH_AFTER_REATTACH: tuple[tuple[str, dict[str, Any]], ...] = (
    ("directory::on-config-change", {}),
    ("directory::on-functions-change", {"event": "reattached"}),
)
DEFAULT_SHUTDOWN_GRACE_S = 10.0


def env_text(name: str) -> str | None:
    """An environment variable, trimmed; blank counts as unset."""
    value = os.environ.get(name, "").strip()
    return value or None


def worker_info(name: str | None = None, namespace: str | None = None) -> dict[str, Any]:
    """The `engine::workers::register` payload (docs/rules/protocol.md §3)."""
    project = project_root().name or None
    return {
        "runtime": "python",
        "version": __version__,
        "name": name or env_text("III_WORKER_NAME") or WORKER_NAME,
        "os": f"{platform.system()} {platform.release()} ({platform.machine()})",
        "pid": os.getpid(),
        "isolation": env_text("III_ISOLATION"),
        "namespace": namespace,
        "telemetry": {"language": "python", "project_name": project, "framework": "iii-directory"},
        "description": DESCRIPTION,
    }


class LiveEngine:
    """`EnginePort` over the live connection (see `iii_directory.port`)."""

    standalone = False

    def __init__(self, connection: Connection, namespace: str | None = None) -> None:
        self.connection = connection
        self.namespace = namespace
        self._binding_ids: dict[str, str] = {}

    def _namespace_for(self, function_id: str, namespace: str | None) -> str | None:
        if function_id.startswith(ENGINE_PREFIXES):
            return "default"
        return namespace or self.namespace

    async def call(
        self,
        function_id: str,
        data: Any,
        *,
        timeout: float = DEFAULT_CALL_TIMEOUT_S,
        namespace: str | None = None,
        baggage: str | None = None,
        traceparent: str | None = None,
    ) -> Any:
        return await self.connection.call(
            function_id, data, timeout=timeout, namespace=self._namespace_for(function_id, namespace),
            baggage=baggage, traceparent=traceparent,
        )

    async def fire(
        self,
        function_id: str,
        data: Any,
        *,
        namespace: str | None = None,
        baggage: str | None = None,
        traceparent: str | None = None,
    ) -> None:
        self.connection.fire(function_id, data, namespace=self._namespace_for(function_id, namespace),
                             baggage=baggage, traceparent=traceparent)

    def emit(self, trigger_type: str, payload: Mapping[str, Any]) -> None:
        self.connection.emit(trigger_type, dict(payload))

    def binding_id(self, key: str) -> str:
        """The binding id for a key: a UUID chosen once and kept for the process lifetime."""
        return self._binding_ids.setdefault(key, str(uuid.uuid4()))

    def bind(self, key: str, trigger_type: str, function_id: str, config: Mapping[str, Any], active: bool) -> None:
        binding_id = self.binding_id(key)
        if active:
            self.connection.bind(binding_id, trigger_type, function_id, dict(config))
        else:
            self.connection.unbind(binding_id)

    async def set_binding(self, key: str, trigger_type: str, function_id: str,
                          config: Mapping[str, Any], active: bool) -> None:
        self.bind(key, trigger_type, function_id, config, active)


_GENERATED: dict[int, tuple[FunctionSpec, dict[str, Any]]] = {}


def function_registration(spec: FunctionSpec) -> dict[str, Any]:
    """The frame of `spec`: the published one (`Published.frame`), else generated once
    per spec object (the specs are immutable module constants) and kept for the next table
    that registers it."""
    cached = _GENERATED.get(id(spec))
    if cached is not None and cached[0] is spec:
        return dict(cached[1])
    frame = published().frame(spec)
    if frame is not None:
        return frame
    cached = (spec, spec.registration())
    _GENERATED[id(spec)] = cached
    return dict(cached[1])


def register_table(connection: Connection, engine: LiveEngine, table: FunctionTable, settings: Settings) -> None:
    """Send (and keep for replay) every registration of the table: trigger types, functions
    (their published frames: `published.py`), then the bindings enabled for `settings`."""
    for trigger_type in table.trigger_types:
        connection.register_trigger_type(trigger_type.registration())
    for spec in table.functions.values():
        connection.register_function(function_registration(spec))
    published.cache_clear()  # the connection keeps the frames as text; nothing else reads them
    for binding in table.bindings:
        if binding.enabled(settings):
            engine.bind(binding.key, binding.trigger_type, binding.function_id, binding.config(settings), True)


async def invoke(directory: Directory, invocation: Invocation) -> Any:
    """Run one incoming invocation through `Directory.invoke` (validation, handler,
    serialisation); a `DirectoryError` travels as its coded ErrorBody."""
    info = CallInfo(baggage=invocation.baggage, traceparent=invocation.traceparent, metadata=invocation.metadata)
    return await directory.invoke(invocation.function_id, invocation.data, info)


class Worker:
    """One `iii-directory serve` process: connection, configuration, registrations, hooks."""

    def __init__(
        self,
        url: str,
        *,
        config_path: str | None = None,
        table: FunctionTable | None = None,
        backoff: Backoff | None = None,
        retry: RetryPolicy = RetryPolicy(),
        shutdown_grace_s: float = DEFAULT_SHUTDOWN_GRACE_S,
        ping_interval: float | None = 20.0,
        name: str | None = None,
        after_registration: Callable[[Settings], object] | None = None,
    ) -> None:
        self.url = validate_url(url)
        self.after_registration = after_registration
        self.config_path = config_path
        self.table = table or build_table()
        self.retry = retry
        self.shutdown_grace_s = shutdown_grace_s
        self.namespace = env_text("III_NAMESPACE")
        self.connection = Connection(
            self.url,
            worker_info=worker_info(name, self.namespace),
            on_invoke=self._on_invoke,
            on_session=self._on_session,
            backoff=backoff,
            ping_interval=ping_interval,
        )
        self.engine = LiveEngine(self.connection, self.namespace)
        self.directory: Directory | None = None
        self.ready = anyio.Event()
        self._stop = anyio.Event()
        self._fatal: BaseException | None = None

    async def _on_invoke(self, invocation: Invocation) -> Any:
        if self.directory is None:  # functions are registered only once the directory exists
            raise RuntimeError("worker is still booting")
        return await invoke(self.directory, invocation)

    async def _on_session(self, reattached: bool) -> None:
        """After a reattach and replay, catch up on what the bindings may have missed while
        disconnected: re-read the configuration and refresh the search catalog once."""
        if not reattached or self.directory is None:
            return
        for function_id, payload in REFRESH_AFTER_REATTACH:
            if function_id not in self.table.functions:
                continue
            try:
                await self.directory.invoke(function_id, payload)
            except Exception as exc:  # noqa: BLE001 - a refresh failure is only logged
                log.warning("%s after reattach failed: %s", function_id, exc)

    async def _frames_sent(self) -> None:
        """Return once the frames queued so far are on the socket (the answering task, which
        opened the first-answer gate, pushes its result frame before a woken chore runs)."""
        await anyio.lowlevel.checkpoint()
        await self.connection.wait_sent()

    def stop(self) -> None:
        """Ask the worker to shut down (returns at once; `run()` finishes the shutdown)."""
        self._stop.set()

    async def run(self) -> None:
        """Serve until `stop()`. Raises NamespaceConflict (the engine refused the worker name)
        or InvalidSettings (the stored configuration does not parse)."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._run_connection)
            tg.start_soon(self._boot)
            await self._stop.wait()
            await self.connection.stop(self.shutdown_grace_s)
            if self.directory is not None:
                with anyio.move_on_after(self.shutdown_grace_s) as deadline:
                    await self.directory.stop()
                if deadline.cancelled_caught:
                    log.warning("stop hooks still running after %.1fs; cancelled", self.shutdown_grace_s)
            tg.cancel_scope.cancel()
        if self._fatal is not None:
            raise self._fatal
        log.info("iii-directory stopped")

    async def _run_connection(self) -> None:
        try:
            await self.connection.run()
        except (NamespaceConflict, ValueError) as exc:
            self._fatal = exc
        self._stop.set()

    async def _boot(self) -> None:
        try:
            await self.connection.wait_connected()
            seed = read_seed(self.config_path)
            settings = await boot_settings(self.engine.call, config_id(), seed, self.retry)
        except InvalidSettings as exc:
            log.error("stored configuration is invalid: %s", exc)
            self._fatal = exc
            self._stop.set()
            return
        except SeedUnreadable as exc:
            log.error("%s", exc)
            self._fatal = exc
            self._stop.set()
            return
        except (NamespaceConflict, EngineCallError):  # the connection ended before a session
            return
        if settings.function_search_mode == "lexical":
            limit_worker_threads()
            limit_arenas(HEAP_ARENAS)
        directory = Directory(settings=settings, engine=self.engine, table=self.table)
        if settings.function_search_mode != "lexical":  # chores wait for the first answer
            directory.first_answer.arm(after_open=self._frames_sent)
        register_table(self.connection, self.engine, self.table, settings)
        self.directory = directory
        log.info("registered %d functions, %d trigger types", len(self.table.functions), len(self.table.trigger_types))
        if self.after_registration is not None:
            await self.connection.wait_sent()
            try:
                self.after_registration(settings)
            except Exception:  # noqa: BLE001 - a failed hint must not stop the boot
                log.exception("after-registration callback failed")
        await directory.start()
        self.ready.set()


def resolve_url(url: str | None) -> str:
    """`--url`, else `III_URL`, else `ws://127.0.0.1:49134`."""
    return (url or "").strip() or env_text("III_URL") or DEFAULT_URL


async def _watch_signals(worker: Worker) -> None:
    try:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for signum in signals:
                log.info("received %s; shutting down", signal.Signals(signum).name)
                worker.stop()
                return
    except NotImplementedError:  # platforms without signal receivers (Windows)
        await anyio.sleep_forever()


GC_YOUNG_THRESHOLD = 10_000
"""Net container allocations between two collections of the youngest generation (CPython's
default is 700) once `serve` has started."""


def settle_heap() -> None:
    """Tune the cyclic garbage collector for serving, once start-up is done: one full
    collection (the start-up's cycles, gathered while `serve` kept the collector off), then
    every object alive now (modules, the function table, settings, registration frames) moves
    to the permanent generation (`gc.freeze`), so the full collections a busy worker runs no
    longer walk them, and the youngest generation is collected every `GC_YOUNG_THRESHOLD`
    allocations instead of 700 — a search call allocates thousands of short-lived containers,
    which reference counting frees anyway; the collector is on again. Measured in the
    50-caller soak: the collector took ~8 % of the worker's CPU."""
    gc.collect()
    gc.freeze()
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, middle, oldest)
    gc.enable()


START_UP_GC_OFF_S = 10.0  # chosen: well past a warm restart's first answer under load (1–2 s)
"""Seconds after `serve` starts its event loop at which the collector is on again even if the
heap was never settled (a worker that cannot reach its engine keeps retrying)."""


async def _collector_on_after(delay: float = START_UP_GC_OFF_S) -> None:
    """`gc.enable()` after `delay` seconds (`cli.cmd_serve` turned it off; `settle_heap`
    normally turns it on first)."""
    await anyio.sleep(delay)
    gc.enable()


WORKER_THREADS = 8  # chosen: docs/record/performance.md ("The lexical soak worker under 60 MiB")
"""AnyIO's default thread limiter of a worker the engine configures `lexical` at boot (AnyIO's own
default is 40): the blocking file and search work of every surface that runs
`anyio.to_thread.run_sync` without a limiter of its own. Each worker thread keeps a glibc arena
and a stack; on a 2-core host more threads than this add memory, not throughput. A hybrid worker
keeps AnyIO's default: its cold start (the vector cache read, the static lane) queued behind the
file calls and answered hybrid 2–3 s later in the soak (docs/record/performance.md)."""


def limit_worker_threads(tokens: int = WORKER_THREADS) -> None:
    """Set the running event loop's default AnyIO thread limiter to `tokens` threads."""
    anyio.to_thread.current_default_thread_limiter().total_tokens = tokens


HEAP_ARENAS = 2  # chosen: docs/record/performance.md ("The lexical soak worker under 55 MiB")
"""glibc malloc arenas of a worker the engine configures `lexical` at boot
(`native_heap.limit_arenas`; glibc's default is eight per core): the main heap and one that
every other thread shares. The registry lane's GET threads and the AnyIO threads allocate mostly
while holding the GIL, so they rarely contend for it; with an arena each, a cold worker's first
seconds (25 threads) left 15 arenas of live blocks and free fragments behind. A hybrid worker
keeps glibc's default, as it keeps AnyIO's thread limit (the encoder's threads allocate without
the GIL); a worker started lexical keeps both limits if its configuration later turns hybrid."""


def limit_arenas(count: int) -> None:
    """Cap the C allocator's arenas at `count` (`native_heap.limit_arenas`)."""
    from .native_heap import limit_arenas as cap

    cap(count)


START_UP_RELEASE_AGAIN_S = 30.0  # chosen: a worker's first calls import and build what they use
"""Seconds after `ready` at which the start-up pages are handed back a second time
(`_settle_heap_when_ready`): the first calls' lazy imports, first validators and first static
index have run by then in any worker that has callers."""


def release_start_up_memory() -> int:
    """`encoder.mapped_pages.release_start_up_pages` (the start-up pages of shared libraries and
    of the static table), then `native_heap.trim` (the free pages inside the C allocator's
    arenas); returns the bytes advised. Reads `/proc/self/smaps` and walks every arena: it runs
    on a thread of its own (`_settle_heap_when_ready`)."""
    from .encoder.mapped_pages import release_start_up_pages
    from .native_heap import trim

    advised = release_start_up_pages()
    trim()
    return advised


async def _settle_heap_when_ready(worker: Worker, again_after: float = START_UP_RELEASE_AGAIN_S) -> None:
    """Once the worker is ready and its first-answer gate is open (`first_answer.py`: a hybrid
    worker's first search answer, or the gate's limit): `settle_heap`, then hand back the memory
    only start-up used (`release_start_up_memory`), and once more `again_after` seconds later. The release runs on
    a worker thread under a limiter of its own (one token), so the event loop goes on serving
    while `smaps` is parsed, and the file calls' default thread limiter lends it no token.
    Figures: docs/record/performance.md, "Where a soak worker's memory goes"."""
    await worker.ready.wait()
    if worker.directory is not None:
        await worker.directory.first_answer.wait()
    settle_heap()
    own = anyio.CapacityLimiter(1)
    await anyio.to_thread.run_sync(release_start_up_memory, limiter=own)
    await anyio.sleep(again_after)
    await anyio.to_thread.run_sync(release_start_up_memory, limiter=own)


def encoder_preload(config: str | None) -> Callable[[Settings], None]:
    """`serve`'s `after_registration`: start the encoder preload (`encoder/preload.py`) once the
    registration frames are on the socket (its imports hold the GIL and would delay them), and
    only when the configuration the engine gave is not `lexical` (nor the local seed's)."""

    def start(settings: Settings) -> None:
        if settings.function_search_mode == "lexical":
            return
        from .encoder import preload

        preload.start(config)

    return start


def serve_main(url: str | None, config: str | None) -> int:
    """Run `iii-directory serve`; returns the process exit code."""
    target = resolve_url(url)
    try:
        validate_url(target)
    except ValueError as exc:
        print(f"iii-directory: {exc}", file=sys.stderr)
        return 2
    try:  # a named config that cannot be used stops the worker before it connects
        seed = read_seed(config)
        if seed is not None:
            load_settings(seed)
    except SeedUnreadable as exc:
        print(f"iii-directory: {exc}", file=sys.stderr)
        return 1
    except InvalidSettings as exc:
        print(f"iii-directory: invalid configuration in config file {config}: {exc}", file=sys.stderr)
        return 1

    async def main() -> None:
        worker = Worker(target, config_path=config, after_registration=encoder_preload(config))
        async with anyio.create_task_group() as tg:
            tg.start_soon(_watch_signals, worker)
            tg.start_soon(_settle_heap_when_ready, worker)
            tg.start_soon(_collector_on_after)
            try:
                await worker.run()
            finally:
                tg.cancel_scope.cancel()

    try:
        anyio.run(main)
    except (NamespaceConflict, SeedUnreadable) as exc:
        print(f"iii-directory: {exc}", file=sys.stderr)
        return 1
    except InvalidSettings as exc:
        print(f"iii-directory: invalid configuration: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:
        print(f"iii-directory: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0
