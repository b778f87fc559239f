"""`iii-directory call` turns hostile input into a clean coded error (issue 17, defect 4):
exit 1, one `{"code", "message"}` JSON line on stderr, no traceback — for payloads nested far
deeper than the JSON decoder allows and for `--catalog` files with malformed records."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.timeout(120)]


def call(tmp_path: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("III_")}
    env.update({"HOME": str(home), "LOG_LEVEL": "info"})
    return subprocess.run([sys.executable, "-m", "iii_directory", "call", *args], cwd=tmp_path, env=env,
                          input=stdin, capture_output=True, text=True, timeout=90)


def coded_error(done: subprocess.CompletedProcess[str]) -> dict[str, str]:
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    error = json.loads(done.stderr.strip().splitlines()[-1])
    assert set(error) == {"code", "message"} and error["code"] and error["message"]
    return error


@pytest.mark.parametrize("depth", [1_000, 5_000, 200_000])
@pytest.mark.parametrize("opener", ["[", '{"a":'])
def test_a_deeply_nested_payload_is_a_coded_error(tmp_path: Path, depth: int, opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    nested = opener * depth + "1" + closer * depth
    error = coded_error(call(tmp_path, "directory::skills::list", "-", stdin='{"prefix": ' + nested + "}"))
    assert "nest" in error["message"]
    if len(nested) < 100_000:  # one argv string is capped at 128 KiB
        direct = coded_error(call(tmp_path, "directory::skills::get", '{"id": ' + nested + "}"))
        assert "nest" in direct["message"]


def test_a_payload_just_under_the_decoder_limit_answers_without_a_traceback(tmp_path: Path) -> None:
    nested = "[" * 900 + "]" * 900
    done = call(tmp_path, "directory::search_functions", '{"capabilities": ' + nested + "}")
    assert "Traceback" not in done.stderr, done.stderr
    if done.returncode:
        coded_error(done)


@pytest.mark.parametrize(("records", "names"), [
    ([{"function_id": 5}], "record 0"),
    ([{"function_id": "a::b"}, "not an object"], "record 1"),
    ([{"description": "no id"}], "record 0"),
    ([{"function_id": "a::b", "registered_triggers": 7}], "record 0"),
    ([{"function_id": "a::b", "description": {"x": 1}}], "record 0"),
    ([{"function_id": "a::b", "request_schema": "not a schema"}], "record 0"),
    ([{"function_id": "a::b", "metadata": [1]}], "record 0"),
    ({"function_id": "a::b"}, "JSON array"),
    ("[" * 100_000, "catalog"),
])
def test_a_malformed_catalog_is_a_coded_error(tmp_path: Path, records: object, names: str) -> None:
    catalog = tmp_path / "catalog.json"
    catalog.write_text(records if isinstance(records, str) else json.dumps(records))
    error = coded_error(call(tmp_path, "directory::search_functions", '{"capabilities": ["x"]}',
                             "--catalog", str(catalog)))
    assert names in error["message"] and str(catalog) in error["message"]


def test_a_reader_that_goes_away_ends_the_call_quietly(tmp_path: Path) -> None:
    """`iii-directory call … | head`: the closed pipe ends the process with 141 and no traceback."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("III_")}
    env.update({"HOME": str(home), "LOG_LEVEL": "warning", "IIIDIR_STATIC_LANE": "off"})
    payload = json.dumps({"capabilities": ["send an email to a customer"]})
    process = subprocess.Popen(
        [sys.executable, "-m", "iii_directory", "call", "directory::search_functions", payload],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # the reader is gone before anything was written
    stderr = process.stderr.read().decode("utf-8", "replace")
    assert process.wait(timeout=90) == 141, stderr
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr
