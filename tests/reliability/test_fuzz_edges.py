"""Hostile input at the edges (issue 36, items 1 and 2): frames nested past the published depth
and past the JSON decoder's own limit, and a megabyte in every string field of every function,
over the engine wire and through `iii-directory call`. Every invocation with an id is answered,
no traceback reaches the worker log or the CLI's stderr, and the session survives."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from wire_harness import Wire

from iii_directory import cli
from iii_directory.config import Settings
from iii_directory.functions import build_table
from iii_directory.protocol.nesting import MAX_DATA_DEPTH

pytestmark = [pytest.mark.timeout(900)]

TABLE = build_table()
FUNCTION_IDS = sorted(TABLE.functions)
MEGA = "m" * (1 << 20)
DEEP = (MAX_DATA_DEPTH + 1, 1_000, 100_000)
SAMPLE: dict[str, Any] = {
    "id": "x", "name": "x", "content": "# X\n\nBody.\n", "kit": "iii/x", "path": "skills/x.md",
    "version": "1.0.0", "plan_id": "p", "repo": "https://127.0.0.1:9/r.git", "skill": "x", "worker": "x",
    "function_id": "x::y", "functions": ["x::y"], "capabilities": ["list skills"],
}


def request_schema(function_id: str) -> dict[str, Any]:
    schema = TABLE.functions[function_id].registration().get("request_format")
    return schema if isinstance(schema, dict) else {}


def is_text(prop: dict[str, Any]) -> bool:
    return prop.get("type") == "string" or any(b.get("type") == "string" for b in prop.get("anyOf", ()))


def mega_payloads(function_id: str) -> list[dict[str, Any]]:
    """One payload per string field (or array of strings) of the function's request: its
    required fields at sample values, that field a megabyte long; an extra megabyte key for a
    function that declares no string field."""
    schema = request_schema(function_id)
    props: dict[str, Any] = schema.get("properties") or {}
    required = {name: SAMPLE.get(name, "x") for name in schema.get("required", ())}
    payloads = []
    for name, prop in props.items():
        if is_text(prop):
            payloads.append({**required, name: MEGA})
        elif prop.get("type") == "array" and is_text(prop.get("items") or {}):
            payloads.append({**required, name: [MEGA]})
    return payloads or [{**required, MEGA[:1000]: MEGA}]


def nested_text(depth: int, opener: str) -> str:
    return (opener * depth + "1" + ("]" if opener == "[" else "}") * depth)


def deep_frame(function_id: str, invocation_id: str, depth: int, id_first: bool) -> str:
    """A raw `invokefunction` whose data nests `depth` levels, with `invocation_id` before or
    after the deep value (an engine may order members either way)."""
    opener = "[" if depth % 2 else '{"a":'
    head = {"type": "invokefunction", "function_id": function_id}
    data = '{"x":' + nested_text(depth - 1, opener) + "}"
    if id_first:
        return json.dumps({**head, "invocation_id": invocation_id})[:-1] + ',"data":' + data + "}"
    return json.dumps(head)[:-1] + ',"data":' + data + ',"invocation_id":"' + invocation_id + '"}'


def tracebacks(records: list[logging.LogRecord]) -> list[str]:
    return [r.getMessage() for r in records if r.exc_info or "Traceback" in r.getMessage()]


async def answers_of(live: Wire, ids: set[str], timeout: float = 120) -> dict[str, dict[str, Any]]:
    with anyio.fail_after(timeout):
        while True:
            found = {f.get("invocation_id"): f for f in live.engine.frames_of(live.worker_id, kind="invocationresult")}
            if ids <= set(found):
                return {i: found[i] for i in ids}
            await anyio.sleep(0.02)


async def test_every_function_answers_deep_frames_over_the_wire(live: Wire, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    session = live.worker.connection.sessions
    ids: set[str] = set()
    for n, function_id in enumerate(FUNCTION_IDS):
        for depth in DEEP:
            for id_first in (True, False):
                invocation_id = f"deep-{n}-{depth}-{id_first}"
                ids.add(invocation_id)
                await live.engine.send_raw(live.worker_id, deep_frame(function_id, invocation_id, depth, id_first))
    answers = await answers_of(live, ids)
    assert len(answers) == len(FUNCTION_IDS) * len(DEEP) * 2
    for frame in answers.values():
        assert frame["error"]["code"] == "invocation_failed", frame
        assert f"nests deeper than {MAX_DATA_DEPTH} levels" in frame["error"]["message"]
    assert tracebacks(caplog.records) == []
    assert live.worker.connection.sessions == session, "a deep frame cost the session"
    assert isinstance((await live.client.call("directory::skills::list", {}, timeout=10))["skills"], list)


async def test_data_at_the_published_depth_is_not_refused_for_its_depth(live: Wire) -> None:
    at_limit = json.loads(nested_text(MAX_DATA_DEPTH - 1, "["))
    with pytest.raises(Exception) as info:
        await live.client.call("directory::skills::get", {"id": at_limit}, timeout=10)
    assert 'field "id": expected a string' in str(info.value)


async def test_every_string_field_of_every_function_answers_a_megabyte(
        live: Wire, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    session = live.worker.connection.sessions
    ids: set[str] = set()
    for n, function_id in enumerate(FUNCTION_IDS):
        for k, payload in enumerate(mega_payloads(function_id)):
            invocation_id = f"mega-{n}-{k}"
            ids.add(invocation_id)
            await live.engine.send_raw(live.worker_id, {"type": "invokefunction", "function_id": function_id,
                                                        "invocation_id": invocation_id, "data": payload})
    answers = await answers_of(live, ids, timeout=300)
    for frame in answers.values():
        assert ("result" in frame) != ("error" in frame), frame
        if "error" in frame:
            assert frame["error"]["code"] and frame["error"]["message"]
            assert "Traceback" not in frame["error"]["message"]
    assert tracebacks(caplog.records) == []
    assert live.worker.connection.sessions == session
    outside = [f for f in answers.values() if "registry" in f["function_id"] or "download" in f["function_id"]]
    assert outside and all("longer than" in f.get("error", {}).get("message", "") for f in outside), outside


# --------------------------------------------------------------------------- iii-directory call


@pytest.fixture
def config_file(settings: Settings, tmp_path: Path) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(settings.model_dump(mode="json")))
    return path


def call_in_process(function_id: str, payload: str, config: Path, monkeypatch: pytest.MonkeyPatch,
                    capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(payload))
    code = cli.main(["call", function_id, "-", "--config", str(config)])
    out, err = capsys.readouterr()
    return code, out, err


def test_call_answers_every_function_deep_and_megabyte_without_a_traceback(
        config_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    for function_id in FUNCTION_IDS:
        for depth in (MAX_DATA_DEPTH + 1, 5_000):
            code, _out, err = call_in_process(function_id, '{"x":' + nested_text(depth - 1, "[") + "}",
                                              config_file, monkeypatch, capsys)
            assert code == 1 and "Traceback" not in err, (function_id, err[-500:])
            assert json.loads(err.strip().splitlines()[-1])["message"].endswith(
                f"nests deeper than {MAX_DATA_DEPTH} levels of arrays and objects")
        for payload in mega_payloads(function_id):
            code, _out, err = call_in_process(function_id, json.dumps(payload), config_file, monkeypatch, capsys)
            assert "Traceback" not in err, (function_id, err[-500:])
            if code:
                error = json.loads(err.strip().splitlines()[-1])
                assert set(error) == {"code", "message"}
    assert tracebacks(caplog.records) == []


@pytest.mark.parametrize(("function_id", "payload", "field"), [
    ("directory::registry::workers::list", {"search": MEGA}, "search"),
    ("directory::skills::download_from_registry", {"worker": MEGA}, "worker"),
    ("directory::registry::workers::info", {"name": "x", "version": MEGA}, "version"),
])
def test_the_cli_process_refuses_a_megabyte_registry_field_with_the_validation_error(
        tmp_path: Path, config_file: Path, function_id: str, payload: dict[str, Any], field: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("III_")}
    env.update({"HOME": str(tmp_path / "home"), "LOG_LEVEL": "info"})
    done = subprocess.run([sys.executable, "-m", "iii_directory", "call", function_id, "-", "--config", str(config_file)],
                          input=json.dumps(payload), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    error = json.loads(done.stderr.strip().splitlines()[-1])
    assert error == {"code": "invocation_failed",
                     "message": f'invalid request: field "{field}": longer than 256 characters'}
