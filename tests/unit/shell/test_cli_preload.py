"""`iii-directory serve` starts its encoder preload before it imports the configuration, the
protocol or the worker (their imports then overlap the preload's native work)."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
from iii_directory.search import preload
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


def test_serve_starts_the_preload_before_the_heavy_imports(tmp_path) -> None:
    seed = tmp_path / "seed.yaml"
    seed.write_text("function_search_mode: hybrid\n", encoding="utf-8")
    report = run("serve", "--url", "not a url", "--config", str(seed))
    assert report["code"] == 2  # the URL is refused after the preload started
    assert report["seen"][0] == {"config": str(seed), "loaded": []}


def test_other_commands_start_no_preload() -> None:
    report = run("--manifest")
    assert report == {"code": 0, "seen": []}
