"""`iii-directory serve` as users run it (a subprocess against the test engine) fed hostile
invocations of every function (issue 36, items 1 and 2): `data` nested past the published
depth and past the JSON decoder's limit, and a megabyte in each string field. Every invocation
with an id is answered, the session stays, and the worker's log holds no traceback."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from wire_harness import serve_subprocess

from iii_directory.config import Settings, config_id
from iii_directory.functions import build_table
from iii_directory.protocol.nesting import MAX_DATA_DEPTH
from iii_directory.testing.engine import TestEngine

pytestmark = [pytest.mark.wire, pytest.mark.timeout(300)]

FUNCTION_IDS = sorted(build_table().functions)
MEGA = "m" * (1 << 20)


def deep(function_id: str, invocation_id: str, depth: int) -> str:
    head = json.dumps({"type": "invokefunction", "function_id": function_id, "invocation_id": invocation_id})
    return head[:-1] + ',"data":{"x":' + "[" * (depth - 1) + "]" * (depth - 1) + "}}"


async def test_serve_answers_deep_and_megabyte_invocations_of_every_function_without_a_traceback(
        settings: Settings, roots: dict[str, Path], tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    async with TestEngine(functions_debounce_s=0.05) as engine:
        engine.configuration.put(config_id(), settings.model_dump(mode="json"))
        async with serve_subprocess(engine.url, roots["home"], tmp_path, log) as process:
            await engine.wait_for(lambda: all(engine.function(f) is not None for f in FUNCTION_IDS), timeout=90)
            conn = engine.worker("iii-directory")
            assert conn is not None
            frames: dict[str, str] = {}
            for n, function_id in enumerate(FUNCTION_IDS):
                for depth in (MAX_DATA_DEPTH + 1, 100_000):
                    frames[f"deep-{n}-{depth}"] = deep(function_id, f"deep-{n}-{depth}", depth)
            for n, (function_id, field) in enumerate([
                    ("directory::registry::workers::list", "search"),
                    ("directory::registry::workers::info", "name"),
                    ("directory::skills::download_from_registry", "worker"),
                    ("directory::skills::download", "version"),
                    ("directory::skills::download_from_repo", "branch"),
                    ("directory::engine::functions::info", "function_id")]):
                data = {"repo": "https://127.0.0.1:9/r.git", "skill": "x", "worker": "x", field: MEGA}
                frames[f"mega-{n}"] = json.dumps({"type": "invokefunction", "function_id": function_id,
                                                  "invocation_id": f"mega-{n}", "data": data})
            for frame in frames.values():
                await engine.send_raw(conn, frame)
            with anyio.fail_after(120):
                while not set(frames) <= {f.get("invocation_id")
                                          for f in engine.frames_of(conn.worker_id, kind="invocationresult")}:
                    await anyio.sleep(0.05)
            answers = {f["invocation_id"]: f for f in engine.frames_of(conn.worker_id, kind="invocationresult")}
            for invocation_id in frames:
                error = answers[invocation_id]["error"]
                expected = "nests deeper than" if invocation_id.startswith("deep") else "longer than"
                assert error["code"] == "invocation_failed" and expected in error["message"], error
            assert engine.worker("iii-directory") is conn, "the session did not survive"
            async with engine.client() as client:
                assert isinstance((await client.call("directory::skills::list", {}))["skills"], list)
    content = log.read_text(encoding="utf-8", errors="replace")
    assert "connected to engine" in content
    assert "Traceback" not in content, content[-3000:]
