"""Browser benchmark of the Directory page at a thousand skills (issue 21 §11).

Not a test: it starts the same stack as the click-through (in-process engine, console stand-in,
`iii-directory serve`, the harness server) on a project holding `--skills` skills, then drives
headless Chromium with `bench_ui_page.mjs` and prints one JSON line per page variant:

* `filter_work_ms` — the synchronous work of a filter keystroke's input event;
* `filter_frame_ms` — the keystroke to the next painted frame (includes the wait for vsync);
* `filter_settle_ms` — the keystroke to the last DOM change it caused (the list updated);
* `editor_work_ms` / `editor_frame_ms` / `editor_settle_ms` — the same for the skill body;
* `open_ms` — a click on a row to the editor showing that skill (worker round trip included;
  `open_rpc_ms_median` is that round trip alone, from the harness bridge's call log);
* `js_heap_mb` — the page's used JS heap at the end (Chromium `performance.memory`).

Two variants run in the same process one after the other: `--baseline <git ref>` (default
`main`, its `ui/dist` taken with `git show`) and the working tree's `ui/dist`, so figures are
quoted as ratios measured on the same loaded machine.

    .venv/bin/python benchmarks/bench_ui_page.py --skills 1000
    .venv/bin/python benchmarks/bench_ui_page.py --skills 1000 --vendor tests/ui/harness/.vendor-production
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "tests" / "wire"), str(REPO / "tests" / "ui")]

from harness_server import VENDOR, HarnessServer  # noqa: E402
from wire_harness import WORKER_BOOT_TIMEOUT_S, fast_worker, wait_registered  # noqa: E402

from iii_directory.config import Settings, config_id  # noqa: E402
from iii_directory.testing.console import ConsoleStandIn  # noqa: E402
from iii_directory.testing.engine import TestEngine  # noqa: E402
from iii_directory.ui.assets import ASSETS, WATCH_ENV, packaged_dir  # noqa: E402

WORDS = ("ticket", "board", "deploy", "review", "notes", "search", "index", "queue", "backup", "report")


def make_project(root: Path, count: int) -> Path:
    """`count` skills over 20 namespaces, each a title, a first paragraph and a few more lines."""
    project = root / "project"
    (project / "agents").mkdir(parents=True)
    for i in range(count):
        ns = f"team{i % 20:02d}"
        word = WORDS[i % len(WORDS)]
        path = project / "skills" / ns / f"{word}-{i:04d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = "\n".join(f"Step {k}: handle the {word} for case {i} and record it." for k in range(12))
        path.write_text(f"# {word.title()} {i:04d}\n\nHow to {word} things in {ns}, case {i}.\n\n{body}\n")
    (project / "worker-compose.yaml").write_text("containers: {}\n")
    return project


def baseline_dist(ref: str, into: Path) -> Path:
    into.mkdir(parents=True)
    listed = subprocess.run(["git", "ls-tree", "--name-only", f"{ref}:src/iii_directory/ui/dist"], cwd=REPO, check=True,
                            capture_output=True, text=True).stdout.split()
    for name in listed:
        text = subprocess.run(["git", "show", f"{ref}:src/iii_directory/ui/dist/{name}"], cwd=REPO, check=True,
                              capture_output=True, text=True).stdout
        (into / name).write_text(text)
    return into


async def run_variant(label: str, dist: Path, project: Path, home: Path, rounds: int, vendor: Path) -> dict[str, object]:
    watched = home.parent / f"watch-{label}"
    shutil.copytree(dist, watched)
    os.environ[WATCH_ENV] = str(watched)
    settings = Settings(
        skills_folder=str(project / "skills"), agents_folder=str(project / "agents"),
        global_agents_folder=str(home / ".iii" / "agents"), local_skills_folder=str(project / "skills" / "iii"),
        agents_skills_folder=str(project / ".agents" / "skills"), filter_unregistered=False, auto_download=False,
        function_search_mode="lexical",
    )
    async with TestEngine() as engine, ConsoleStandIn(engine) as console:
        engine.configuration.put(config_id(), settings.model_dump(mode="json"))
        worker = fast_worker(engine.url)
        async with anyio.create_task_group() as tg:
            tg.start_soon(worker.run)
            with anyio.fail_after(WORKER_BOOT_TIMEOUT_S):
                await worker.ready.wait()
            await wait_registered(engine, worker)
            await engine.wait_for(lambda: len(console.assets) == len(ASSETS), timeout=10)
            server = HarnessServer(console, project, {}, vendor)
            await tg.start(server.run)
            env = dict(os.environ, III_UI_HARNESS_URL=server.url, III_BENCH_ROUNDS=str(rounds))
            result = await anyio.run_process(["node", str(REPO / "benchmarks" / "bench_ui_page.mjs")], env=env, check=False,
                                             stderr=subprocess.STDOUT)
            gets = sorted((c["ended"] - c["started"]) * 1000 for c in server.calls
                          if c.get("function_id") == "directory::skills::get" and "ended" in c)
            worker.stop()
            tg.cancel_scope.cancel()
    output = result.stdout.decode("utf-8", "replace").strip().splitlines()
    if result.returncode != 0 or not output:
        raise SystemExit(f"{label}: the browser run failed:\n" + "\n".join(output[-40:]))
    figures = json.loads(output[-1])
    figures["open_rpc_ms_median"] = round(gets[len(gets) // 2], 1) if gets else None
    return {"variant": label, **figures}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3, help="passes over each measured action")
    parser.add_argument("--baseline", default="main", help="git ref whose ui/dist is measured first ('' to skip)")
    parser.add_argument("--vendor", type=Path, default=VENDOR,
                        help="React's ES modules: tests/ui/harness/.vendor (development build, the default) or "
                        ".vendor-production (`node tests/ui/harness/build-vendor.mjs --production`)")
    args = parser.parse_args()
    vendor = args.vendor.resolve()  # before the chdir into the project below
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        project = make_project(root, args.skills)
        home = root / "home"
        (home / ".iii" / "agents").mkdir(parents=True)
        os.environ["HOME"] = str(home)
        os.environ["III_COMPOSE_FILE"] = str(project / "worker-compose.yaml")
        os.chdir(project)
        variants = []
        if args.baseline:
            variants.append((f"baseline {args.baseline}", baseline_dist(args.baseline, root / "dist-baseline")))
        variants.append(("working tree", packaged_dir()))
        rows = []
        for label, dist in variants:
            row = await run_variant(label.replace(" ", "-"), dist, project, home, args.rounds, vendor)
            row["variant"] = label
            row["react"] = args.vendor.name
            rows.append(row)
            print(json.dumps(row), flush=True)
        if len(rows) == 2:
            keys = [k for k in rows[0] if k.endswith("_ms")]
            ratios = {k: round(rows[0][k]["median"] / max(rows[1][k]["median"], 0.01), 1) for k in keys}  # type: ignore[index]
            print(json.dumps({"baseline_over_working_tree_median": ratios, "skills": args.skills}), flush=True)


if __name__ == "__main__":
    anyio.run(main)
