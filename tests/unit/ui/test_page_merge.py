"""The page's three-way merge and the worker's (`kits/merge.py`) are one algorithm: on the same
inputs they merge cleanly to the same text, or conflict the same number of times
(docs/console-page.md). The page's `merge3` runs under node; skipped without node."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from iii_directory.kits.merge import three_way

PAGE = Path(__file__).resolve().parents[3] / "src" / "iii_directory" / "ui" / "dist" / "diff.js"
CASES = 400
SCRIPT = """
const page = await import(process.argv[1]);
let input = '';
for await (const chunk of process.stdin) input += chunk;
const out = JSON.parse(input).map(([base, ours, theirs]) => page.merge3(base, ours, theirs));
process.stdout.write(JSON.stringify(out));
"""


def edit(rng: random.Random, lines: list[str]) -> list[str]:
    """A few random line edits: change, insert or delete."""
    out = list(lines)
    for _ in range(rng.randint(0, 3)):
        at = rng.randint(0, len(out))
        action = rng.choice(("change", "insert", "delete"))
        if action == "insert" or not out:
            out.insert(at, f"new {rng.randint(0, 3)}")
        elif action == "change":
            out[min(at, len(out) - 1)] = f"changed {rng.randint(0, 3)}"
        else:
            del out[min(at, len(out) - 1)]
    return out


def text(lines: list[str]) -> str:
    return "".join(f"{line}\n" for line in lines)


def random_triples(seed: int) -> list[tuple[str, str, str]]:
    rng = random.Random(seed)
    triples = []
    for _ in range(CASES):
        base = [f"line {rng.randint(0, 6)}" for _ in range(rng.randint(0, 12))]
        triples.append((text(base), text(edit(rng, base)), text(edit(rng, base))))
    return triples


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_page_and_worker_merge_alike() -> None:
    triples = random_triples(20261205)
    result = subprocess.run(["node", "--input-type=module", "-e", SCRIPT, PAGE.as_uri()], input=json.dumps(triples),
                            capture_output=True, text=True, timeout=60, check=True)
    page = json.loads(result.stdout)
    clean = 0
    for (base, ours, theirs), merged in zip(triples, page, strict=True):
        worker = three_way(base, ours, theirs)
        case = json.dumps([base, ours, theirs])
        assert merged["conflicts"] == worker.conflicts, case
        if worker.status == "clean":
            clean += 1
            assert merged["text"] == worker.text, case
    assert 0 < clean < CASES, "the cases cover clean merges and conflicts"
