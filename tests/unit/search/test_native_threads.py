"""The worker's OpenBLAS thread count (encoder/native_threads.py): one thread unless the
environment names a count, set by `serve` and `call` before anything imports numpy."""

from __future__ import annotations

import json
import subprocess
import sys

from iii_directory.encoder.native_threads import BLAS_THREADS_ENV, limit_blas_threads


def test_one_thread_unless_the_environment_names_a_count() -> None:
    env: dict[str, str] = {}
    assert limit_blas_threads(env) and env == {BLAS_THREADS_ENV: "1"}
    blank = {BLAS_THREADS_ENV: "  "}
    assert limit_blas_threads(blank) and blank[BLAS_THREADS_ENV] == "1"
    chosen = {BLAS_THREADS_ENV: "4"}
    assert not limit_blas_threads(chosen) and chosen == {BLAS_THREADS_ENV: "4"}


PROBE = """
import json, os, sys
from iii_directory.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "blas": os.environ.get("OPENBLAS_NUM_THREADS"),
                  "numpy": "numpy" in sys.modules}))
"""


def run(env_value: str | None, *argv: str) -> dict:
    import os

    env = {k: v for k, v in os.environ.items() if k != BLAS_THREADS_ENV}
    if env_value is not None:
        env[BLAS_THREADS_ENV] = env_value
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True,
                          check=True, env=env)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_command_line_sets_it_before_numpy_loads() -> None:
    report = run(None, "--manifest")
    assert report == {"code": 0, "blas": "1", "numpy": False}
    assert run("3", "--manifest")["blas"] == "3"  # the user's count is kept
