"""`call` leaves the interpreter's last collections nothing to walk: at exit every object still
alive is frozen (`cli.skip_final_collections`), once per process however often it calls. Not
timed: it checks what runs at exit, in a child process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PROBE = """
import atexit, gc, json, sys
seen = {}
atexit.register(lambda: print(json.dumps({"frozen": gc.get_freeze_count(), **seen})))  # runs last
from iii_directory import cli
before = atexit._ncallbacks()
codes = [cli.main(["call", "directory::skills::list", "{}"]) for _ in range(3)]
seen.update(codes=codes, added=atexit._ncallbacks() - before, frozen_before_exit=gc.get_freeze_count())
"""


def test_a_call_freezes_the_heap_at_exit_once(tmp_path: Path) -> None:
    skill = tmp_path / "skills" / "demo" / "skills" / "demo" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\ntitle: Demo\n---\n# Demo\n\nA demo skill.\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("III_")}
    env.update({"HOME": str(tmp_path / "home"), "LOG_LEVEL": "warning"})
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, env=env, capture_output=True,
                          text=True, check=True, timeout=120)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["codes"] == [0, 0, 0]
    assert report["added"] == 1  # one exit hook, not one per call
    assert report["frozen_before_exit"] == 0  # nothing is frozen while the process still works
    assert report["frozen"] > 1000  # the heap the imports built, frozen before the last collections
