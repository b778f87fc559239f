"""Compose: what the project declares (read from disk) and the calls an apply makes
(docs/rules/kits.md §2, §5; docs/rules/protocol.md §12).

The compose file is `III_COMPOSE_FILE` when set, else `worker-compose.yaml` in the project root;
the project root for kit state is the compose file's directory. Declarations are read from
disk, so planning works while the Compose daemon is down; `compose::status` only says whether
the daemon answers.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import yaml

from ..content.kits_lock import COMPOSE_FILE, compose_file_path, kit_root  # noqa: F401  (re-exported)
from ..content.visibility import compose_route
from ..errors import DirectoryError
from .ref import is_exact_version

STATUS_TIMEOUT_S = 5.0
ADD_TIMEOUT_S = 60.0
OPERATION_TIMEOUT_S = 10.0
POLL_INTERVAL_S = 0.75
MAX_WAIT_S = 15 * 60.0
MAX_POLL_ERRORS = 10

Caller = Callable[[str, dict[str, Any], float, "str | None"], Awaitable[Any]]
"""`(function_id, payload, timeout_s, namespace) -> result`; raises on failure."""


def compose_lock_path(compose_file: Path) -> Path:
    return compose_file.with_suffix(".lock")


@dataclass(frozen=True)
class DeclaredWorker:
    """A worker the compose file declares, keyed by package name."""

    package: str
    container: str
    selector: str | None
    installed: str | None
    path_worker: bool


def _load_mapping(path: Path) -> dict[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.load(text, Loader=yaml.BaseLoader)  # noqa: S506 - strings, lists, maps only
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    return data if isinstance(data, dict) else None


def package_name(worker: str) -> str:
    """`package://api.workers.iii.dev/state@1` → `state`."""
    name = worker[len("package://"):] if worker.startswith("package://") else worker
    if "@" in name:
        name = name[: name.rindex("@")]
    return name.rsplit("/", 1)[-1]


def is_path_worker(worker: str) -> bool:
    return worker.startswith(("path://", ".", "/"))


def read_declared(compose_file: Path | None = None) -> dict[str, DeclaredWorker]:
    """Workers declared by the compose file, by package name (a later container with the same
    package overwrites). Missing or unparsable files declare nothing."""
    compose_file = compose_file or compose_file_path()
    data = _load_mapping(compose_file)
    if data is None:
        return {}
    containers = data.get("containers")
    if not isinstance(containers, dict):
        return {}
    lock = _load_mapping(compose_lock_path(compose_file)) or {}
    locked = lock.get("containers") if isinstance(lock.get("containers"), dict) else {}
    declared: dict[str, DeclaredWorker] = {}
    for key, body in containers.items():
        body = body if isinstance(body, dict) else {}
        worker = body.get("worker") if isinstance(body.get("worker"), str) else key
        selector = body.get("version") if isinstance(body.get("version"), str) else None
        path_worker = is_path_worker(worker)
        package = key if path_worker else package_name(worker)
        resolved = None
        entry = locked.get(key) if isinstance(locked, dict) else None
        if isinstance(entry, dict) and isinstance(entry.get("resolved"), dict):
            value = entry["resolved"].get("version")
            resolved = value if isinstance(value, str) and value else None
        installed = resolved or (selector if selector and is_exact_version(selector) else None)
        declared[package] = DeclaredWorker(package, key, selector, installed, path_worker)
    return declared


# ---------------------------------------------------------------------------------------------
# Calls


class ComposeFailure(Exception):
    """An operation that ended `failed` / `cancelled`, or whose polling kept failing; the
    message is the last detail."""


def compose_error(message: str) -> DirectoryError:
    return DirectoryError("D515", f"D515 compose_error: {message}")


class Compose:
    """`compose::*` calls with the routing of docs/rules/protocol.md §12 and operation polling."""

    def __init__(
        self,
        call: Caller,
        *,
        poll_interval_s: float = POLL_INTERVAL_S,
        max_wait_s: float = MAX_WAIT_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._call = call
        self.poll_interval_s = poll_interval_s
        self.max_wait_s = max_wait_s
        self._clock = clock

    async def call(self, function_id: str, payload: dict[str, Any], timeout: float) -> Any:
        routed, namespace = compose_route()
        routed.update(payload)
        return await self._call(function_id, routed, timeout, namespace)

    async def status(self) -> str | None:
        """None when the daemon answers `compose::status`, else the failure text."""
        try:
            await self.call("compose::status", {}, STATUS_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001 - any failure means "not running"
            return _describe(exc)
        return None

    async def start(self, function_id: str, payload: dict[str, Any], operation_id: str) -> str:
        """Start an add / remove; the operation id the daemon returns (else the one sent)."""
        result = await self.call(function_id, {**payload, "operation_id": operation_id}, ADD_TIMEOUT_S)
        if isinstance(result, dict) and isinstance(result.get("operation_id"), str) and result["operation_id"]:
            return result["operation_id"]
        return operation_id

    async def wait(self, operation_id: str, on_detail: Callable[[str], Awaitable[None]]) -> None:
        """Poll `compose::operation` until `succeeded`; raise ComposeFailure on `failed` /
        `cancelled` (or after 11 poll errors in a row), D515 after the wait limit."""
        started = self._clock()
        errors = 0
        last_detail = ""
        while True:
            try:
                answer = await self.call(
                    "compose::operation", {"operation_id": operation_id}, OPERATION_TIMEOUT_S
                )
                errors = 0
            except Exception as exc:  # noqa: BLE001 - the operation may not be visible yet
                errors += 1
                if errors > MAX_POLL_ERRORS:
                    raise ComposeFailure(_describe(exc)) from None
                answer = None
            if answer is not None:
                status, detail = _operation_state(answer)
                if detail and detail != last_detail:
                    last_detail = detail
                    await on_detail(detail)
                if status == "succeeded":
                    return
                if status in ("failed", "cancelled"):
                    raise ComposeFailure(detail or last_detail or status)
            elapsed = self._clock() - started
            if elapsed > self.max_wait_s:
                raise compose_error(
                    f"compose operation {operation_id} did not finish within {int(self.max_wait_s)}s; "
                    "check compose::operation and retry the apply."
                )
            await anyio.sleep(self.poll_interval_s)


def _operation_state(answer: Any) -> tuple[str, str]:
    if not isinstance(answer, dict):
        return "running", ""
    status = answer.get("status") if isinstance(answer.get("status"), str) else "running"
    detail = ""
    last_event = answer.get("last_event")
    if isinstance(last_event, dict) and isinstance(last_event.get("detail"), str):
        detail = last_event["detail"]
    if not detail and isinstance(answer.get("phase"), str):
        detail = answer["phase"]
    return status, detail


def _describe(exc: BaseException) -> str:
    message = getattr(exc, "message", None)
    code = getattr(exc, "code", None)
    if isinstance(message, str) and message:
        return f"{code}: {message}" if code and not message.startswith(str(code)) else message
    return str(exc) or exc.__class__.__name__
