"""Scriptable stand-ins for the directory's collaborators, served by the `TestEngine`
(docs/rules/protocol.md §11, §12, §18): Compose, the judge, the harness pre-generate hook, the console
asset triggers and the worker-operations `worker` trigger provider.

Each fake installs itself on an engine (`TestEngine.install_compose()` etc.) and records what it
received. Every fake function honours per-function `delays` (seconds) and `failures`
(an `EngineCallError` raised instead of answering).
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from ..protocol.errors import EngineCallError

if TYPE_CHECKING:
    from .engine_records import Binding, Delivery, EngineHost


@dataclass
class _Scripted:
    """Recorded calls plus per-function delays and failures."""

    calls: list[tuple[str, Any]] = field(default_factory=list)
    delays: dict[str, float] = field(default_factory=dict)
    failures: dict[str, EngineCallError] = field(default_factory=dict)

    async def _enter(self, function_id: str, data: Any) -> None:
        self.calls.append((function_id, copy.deepcopy(data)))
        delay = self.delays.get(function_id)
        if delay:
            await anyio.sleep(delay)
        failure = self.failures.get(function_id)
        if failure is not None:
            raise failure

    def calls_to(self, function_id: str) -> list[Any]:
        return [data for fid, data in self.calls if fid == function_id]


class ComposeFake(_Scripted):
    """`compose::status / add / remove / operation` over an in-memory container set.

    * `containers` — name → row (`{"container": name, …}`) returned by `status`;
    * `down = True` makes `status` fail like a stopped daemon;
    * `outcome` — final status of new operations (`succeeded` | `failed` | `cancelled`), reached
      after `polls_until_done` `compose::operation` polls (0 = at once); on success `add`
      creates the containers and `remove` deletes them;
    * `failure_detail` — `last_event.detail` of a failed operation.
    """

    def __init__(self, engine: EngineHost, containers: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        super().__init__()
        self.engine = engine
        self.containers: dict[str, dict[str, Any]] = {k: dict(v) for k, v in (containers or {}).items()}
        self.down = False
        self.outcome = "succeeded"
        self.polls_until_done = 0
        self.failure_detail = "compose operation failed"
        self.operations: dict[str, dict[str, Any]] = {}
        for name, fn in (("compose::status", self.status), ("compose::add", self.add),
                         ("compose::remove", self.remove), ("compose::operation", self.operation)):
            engine.add_function(name, fn, worker_name="compose", description=f"Fake {name}")

    def set_containers(self, *names: str) -> None:
        self.containers = {name: {"container": name, "state": "running"} for name in names}

    async def status(self, data: Any) -> Any:
        await self._enter("compose::status", data)
        if self.down:
            raise EngineCallError("compose_unavailable", "cannot reach the container daemon")
        return {"containers": [dict(row, container=name) for name, row in sorted(self.containers.items())]}

    def _start(self, data: Any, apply: Callable[[], None]) -> dict[str, Any]:
        operation_id = (data or {}).get("operation_id") or str(uuid.uuid4())
        self.operations[operation_id] = {"polls": 0, "apply": apply, "applied": False}
        return {"operation_id": operation_id}

    async def add(self, data: Any) -> Any:
        await self._enter("compose::add", data)
        workers = [w for w in (data or {}).get("workers") or [] if isinstance(w, dict)]

        def apply() -> None:
            for item in workers:
                name = str(item.get("worker"))
                self.containers[name] = {"container": name, "version": item.get("version"), "state": "running"}
        return self._start(data, apply)

    async def remove(self, data: Any) -> Any:
        await self._enter("compose::remove", data)
        names = [str(w) for w in (data or {}).get("workers") or []]

        def apply() -> None:
            for name in names:
                self.containers.pop(name, None)
        return self._start(data, apply)

    async def operation(self, data: Any) -> Any:
        await self._enter("compose::operation", data)
        operation_id = (data or {}).get("operation_id")
        record = self.operations.get(operation_id) if isinstance(operation_id, str) else None
        if record is None:
            raise EngineCallError("NOT_FOUND", f"operation '{operation_id}' not found")
        record["polls"] += 1
        if record["polls"] <= self.polls_until_done:
            return {"status": "running", "phase": "working"}
        if self.outcome == "succeeded" and not record["applied"]:
            record["apply"]()
            record["applied"] = True
        reply: dict[str, Any] = {"status": self.outcome, "phase": "done"}
        if self.outcome == "failed":
            reply["last_event"] = {"detail": self.failure_detail}
        return reply


class JudgeFake(_Scripted):
    """`judge::evaluate` and `judge::models::list`.

    Answers come from `answer(question, evaluation) -> answer dict` (default: every boolean
    question false with probability 0, every choice question its first option); `reply` may be
    set to a fixed whole reply instead. `models` is the `models::list` answer."""

    def __init__(self, engine: EngineHost) -> None:
        super().__init__()
        self.model = "fake-judge"
        self.models: list[dict[str, Any]] = [{"id": "fake-judge", "context_window": 32768, "default": True}]
        self.reply: Any = None
        self.answer: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]] = self.default_answer
        engine.add_function("judge::evaluate", self.evaluate, worker_name="judge", description="Fake judge")
        engine.add_function("judge::models::list", self.models_list, worker_name="judge", description="Fake judge models")

    @staticmethod
    def default_answer(question: dict[str, Any], _evaluation: dict[str, Any]) -> dict[str, Any]:
        if question.get("type") == "choice":
            options = list((question.get("options") or {}).keys())
            best = options[0] if options else None
            return {"value": best, "probabilities": {best: 1.0} if best else {}}
        return {"value": False, "probability": 0.0}

    async def evaluate(self, data: Any) -> Any:
        await self._enter("judge::evaluate", data)
        if self.reply is not None:
            return copy.deepcopy(self.reply)
        results = []
        for evaluation in (data or {}).get("evaluations") or []:
            answers = {q.get("id"): self.answer(q, evaluation) for q in evaluation.get("questions") or []}
            results.append({"id": evaluation.get("id"), "answers": answers})
        return {"status": "ok", "model": self.model, "results": results}

    async def models_list(self, data: Any) -> Any:
        await self._enter("judge::models::list", data)
        return {"models": copy.deepcopy(self.models)}


class HarnessFake:
    """Provides `harness::hook::pre-generate` and records the bindings made to it."""

    TRIGGER_TYPE = "harness::hook::pre-generate"

    def __init__(self, engine: EngineHost) -> None:
        self.engine = engine
        engine.add_trigger_type(self.TRIGGER_TYPE, description="Runs before each model generation.",
                                worker_name="harness")

    @property
    def bindings(self) -> list[Binding]:
        return self.engine.bindings_of(self.TRIGGER_TYPE, active_only=True)

    def fire(self, payload: Any) -> Delivery:
        """Run the hook: invoke every bound function with `payload`."""
        return self.engine.fire_trigger(self.TRIGGER_TYPE, payload)


class ConsoleFake:
    """Provides `console:script`, `console:style` and `console:module`; `fetch(kind, path)` asks
    the bound content function for an asset the way the console does."""

    TRIGGER_TYPES = ("console:script", "console:style", "console:module")

    def __init__(self, engine: EngineHost) -> None:
        self.engine = engine
        for kind in self.TRIGGER_TYPES:
            engine.add_trigger_type(kind, description=f"Console UI contribution ({kind})", worker_name="console")

    def bindings(self, kind: str) -> list[Binding]:
        return self.engine.bindings_of(kind, active_only=True)

    async def fetch(self, kind: str, path: str) -> Any:
        for binding in self.bindings(kind):
            if isinstance(binding.config, dict) and binding.config.get("path") == path:
                return await self.engine.invoke(binding.function_id, {"path": path}, namespace=binding.namespace)
        raise LookupError(f"no {kind} binding for {path}")


def _selects(config: Any, event: Mapping[str, Any]) -> bool:
    """`worker` binding filter: AND across `operations` / `stages` / `workers`, OR within one
    list; an empty or absent list selects everything."""
    if not isinstance(config, dict):
        return True
    for key, value in (("operations", event.get("operation")), ("stages", event.get("stage")),
                       ("workers", event.get("worker"))):
        wanted = config.get(key)
        if isinstance(wanted, list) and wanted and value not in wanted:
            return False
    return True


class WorkerOpsFake:
    """Provides the `worker` trigger type (the worker-operations sidecar) and emits events."""

    TRIGGER_TYPE = "worker"

    def __init__(self, engine: EngineHost) -> None:
        self.engine = engine
        engine.add_trigger_type(self.TRIGGER_TYPE, description="Worker operation progress events.",
                                worker_name="iii-worker-ops")

    def emit(self, event: Mapping[str, Any]) -> Delivery:
        payload = dict(event)
        return self.engine.fire_trigger(self.TRIGGER_TYPE, payload, select=lambda b: _selects(b.config, payload))

    def emit_add(self, worker: str, *, stage: str = "done", **extra: Any) -> Delivery:
        """`{"operation": "add", "worker": …, "stage": …, "timestamp_ms": …, "caller_mode": "cli", …}`."""
        import time

        event = {"operation": "add", "worker": worker, "stage": stage, "timestamp_ms": int(time.time() * 1000),
                 "caller_mode": "cli", **extra}
        return self.emit(event)
