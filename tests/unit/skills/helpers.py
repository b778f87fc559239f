"""Helpers for the skills tests: files on disk, a peer-capable engine, one-line invocations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from iii_directory.directory import Directory
from iii_directory.errors import DirectoryError
from iii_directory.port import EngineCallError, StandaloneEngine


def write(root: Path, rel: str, content: str | bytes = "# Title\n\nBody.\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


class PeerEngine(StandaloneEngine):
    """A connected-engine stand-in: answers `compose::status` from `containers` (or raises
    `failure`) and counts the calls; records emitted events like the standalone one."""

    standalone = False

    def __init__(self) -> None:
        super().__init__()
        self.containers: list[dict[str, Any]] | None = []
        self.status_payload: Any = None
        self.failure: EngineCallError | None = None
        self.calls: list[tuple[str, Any, str | None]] = []

    async def call(self, function_id: str, data: Any, **kwargs: Any) -> Any:
        self.calls.append((function_id, data, kwargs.get("namespace")))
        if function_id == "compose::status":
            if self.failure is not None:
                raise self.failure
            if self.status_payload is not None:
                return self.status_payload
            return {"containers": self.containers}
        return await super().call(function_id, data, **kwargs)

    def status_calls(self) -> int:
        return sum(1 for fid, _, _ in self.calls if fid == "compose::status")

    def installed(self, *names: str) -> None:
        self.containers = [{"container": n, "status": "running"} for n in names]


async def call(directory: Directory, function_id: str, data: dict[str, Any] | None = None) -> Any:
    return await directory.invoke(function_id, data or {})


async def error(directory: Directory, function_id: str, data: dict[str, Any]) -> DirectoryError:
    with pytest.raises(DirectoryError) as caught:
        await directory.invoke(function_id, data)
    return caught.value


async def ids(directory: Directory, **request: Any) -> list[str]:
    result = await call(directory, "directory::skills::list", request)
    return [row["id"] for row in result["skills"]]
