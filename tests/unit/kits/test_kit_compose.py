"""What the project declares to Compose (kits.md §5.1) and the call routing (protocol.md §12)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from iii_directory.kits.compose import Compose, ComposeFailure, compose_file_path, read_declared


def write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def test_declarations(tmp_path: Path) -> None:
    compose = tmp_path / "worker-compose.yaml"
    write(compose, (
        "containers:\n"
        "  kanban:\n    version: ^1.4\n"
        "  db:\n    worker: package://api.workers.iii.dev/state@2\n    version: 0.22.9\n"
        "  mine:\n    worker: path://./build/mine\n"
        "  numeric:\n    version: 1.10\n"
        "  bare: {}\n"
    ))
    write(tmp_path / "worker-compose.lock", "containers:\n  kanban:\n    resolved:\n      version: 1.6.1\n")
    declared = read_declared(compose)
    assert declared["kanban"].selector == "^1.4"
    assert declared["kanban"].installed == "1.6.1"
    assert declared["state"].container == "db"
    assert declared["state"].installed == "0.22.9"
    assert declared["mine"].path_worker is True
    assert declared["numeric"].selector == "1.10"
    assert declared["numeric"].installed is None
    assert declared["bare"].selector is None


def test_missing_or_unparsable_declares_nothing(tmp_path: Path) -> None:
    assert read_declared(tmp_path / "worker-compose.yaml") == {}
    write(tmp_path / "worker-compose.yaml", "containers: [\n")
    assert read_declared(tmp_path / "worker-compose.yaml") == {}


def test_compose_file_location(tmp_path: Path, roots: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    assert compose_file_path() == roots["project"] / "worker-compose.yaml"
    monkeypatch.setenv("III_COMPOSE_FILE", str(tmp_path / "sub" / "c.yaml"))
    assert compose_file_path() == tmp_path / "sub" / "c.yaml"


async def test_routing_and_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, dict[str, Any], str | None]] = []
    answers = iter([
        RuntimeError("not visible yet"),
        {"status": "running", "phase": "pulling"},
        {"status": "running", "phase": "pulling"},
        {"status": "running", "last_event": {"detail": "starting"}},
        {"status": "succeeded"},
    ])

    async def call(fid: str, data: dict[str, Any], timeout: float, namespace: str | None) -> Any:
        seen.append((fid, data, namespace))
        if fid == "compose::operation":
            answer = next(answers)
            if isinstance(answer, Exception):
                raise answer
            return answer
        return {}

    monkeypatch.setenv("III_COMPOSE_NAMESPACE", "ops")
    monkeypatch.setenv("III_COMPOSE_FILE", "/p/worker-compose.yaml")
    compose = Compose(call, poll_interval_s=0)
    op = await compose.start("compose::add", {"workers": [{"worker": "k", "version": "^1"}]}, "kits-add-x")
    assert op == "kits-add-x"
    assert seen[0] == ("compose::add", {"namespace": "ops", "file": "/p/worker-compose.yaml",
                                        "workers": [{"worker": "k", "version": "^1"}],
                                        "operation_id": "kits-add-x"}, "ops")
    details: list[str] = []

    async def on_detail(detail: str) -> None:
        details.append(detail)

    await compose.wait(op, on_detail)
    assert details == ["pulling", "starting"]


async def test_failed_operation_and_poll_errors() -> None:
    async def failing(fid: str, data: dict[str, Any], timeout: float, namespace: str | None) -> Any:
        return {"status": "failed", "last_event": {"detail": "image not found"}}

    async def ignore(_: str) -> None:
        return None

    with pytest.raises(ComposeFailure, match="image not found"):
        await Compose(failing, poll_interval_s=0).wait("op", ignore)

    calls = 0

    async def broken(fid: str, data: dict[str, Any], timeout: float, namespace: str | None) -> Any:
        nonlocal calls
        calls += 1
        raise RuntimeError("gone")

    with pytest.raises(ComposeFailure, match="gone"):
        await Compose(broken, poll_interval_s=0).wait("op", ignore)
    assert calls == 11


async def test_wait_limit() -> None:
    ticks = iter(range(0, 10_000, 1000))

    async def running(fid: str, data: dict[str, Any], timeout: float, namespace: str | None) -> Any:
        return {"status": "running"}

    async def ignore(_: str) -> None:
        return None

    compose = Compose(running, poll_interval_s=0, clock=lambda: float(next(ticks)))
    with pytest.raises(Exception, match="D515 compose_error: compose operation op did not finish within 900s"):
        await compose.wait("op", ignore)
