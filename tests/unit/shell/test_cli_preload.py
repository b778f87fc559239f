"""`iii-directory serve` starts its encoder preload only once it has registered (the worker's
`after_registration`, tests/wire/test_after_registration.py), never from the command line
before it has connected; other commands never start it."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
from iii_directory.encoder import preload
seen = []
def start(config=None, **_):
    seen.append({"config": config, "loaded": sorted(m for m in (
        "iii_directory.config", "iii_directory.protocol", "iii_directory.worker",
        "iii_directory.functions", "pydantic") if m in sys.modules)})
    return False
preload.start = start
from iii_directory.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "seen": seen}))
"""


def run(*argv: str) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_serve_that_never_registers_starts_no_preload(tmp_path) -> None:
    seed = tmp_path / "seed.yaml"
    seed.write_text("function_search_mode: hybrid\n", encoding="utf-8")
    report = run("serve", "--url", "not a url", "--config", str(seed))
    assert report == {"code": 2, "seen": []}  # the URL is refused before any connection


def test_other_commands_start_no_preload() -> None:
    report = run("--manifest")
    assert report == {"code": 0, "seen": []}


def test_the_preload_follows_the_engine_configuration(monkeypatch) -> None:
    from iii_directory.config import Settings
    from iii_directory.encoder import preload
    from iii_directory.worker import encoder_preload

    started: list[str | None] = []
    monkeypatch.setattr(preload, "start", lambda config=None, **_: started.append(config) or False)
    encoder_preload("seed.yaml")(Settings(function_search_mode="lexical"))
    assert started == []  # a worker the engine configures lexical loads no encoder libraries
    encoder_preload("seed.yaml")(Settings(function_search_mode="hybrid"))
    assert started == ["seed.yaml"]
