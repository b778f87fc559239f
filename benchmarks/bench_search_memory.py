"""Hybrid search memory and start-up (issue 16), against `iii-directory serve` as users run it.

Run::

    python benchmarks/bench_search_memory.py            # 200 sequential searches, then restart

Three figures, each beside the matching lexical one measured in the same run:

1. `serve` worker RSS (and peak, VmHWM) after 200 sequential `directory::search_functions` calls
   of 1–18 capabilities, from a cold start (empty vector cache), through the test engine with the
   soak's project (56-function catalog, 135 skills).
2. Start to the first hybrid answer with the vector cache warm: a second worker process on the
   same project; the clock starts when the worker process is spawned and stops at the first
   search answer whose `search_mode` is `hybrid` (searches are sent one after another until
   then). The harness's own set-up before the spawn (the test engine, the mock registry, the
   project's files) is reported apart (`set-up`), not in the figure.
3. Peak RSS of one `iii-directory call directory::search_functions` CLI process (hybrid, warm
   cache; `ru_maxrss` of the child).

The start-up figure is split in two: spawn → registered (interpreter start-up, imports, the
connection and the configuration boot) and registered → first hybrid answer. `--startups N`
measures only that figure, N times on one warm project (warmed by `--searches` hybrid
searches), and prints every run and the medians::

    python benchmarks/bench_search_memory.py --startups 5 --searches 20

The package's bytecode is compiled first (as a wheel install does; without it a host that sets
`PYTHONDONTWRITEBYTECODE` compiles every edited module again at every start, ~0.1 s of CPU).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from iii_directory.testing import soak, soak_report

MIB = 1024 * 1024
SEARCH = "directory::search_functions"


cpu_seconds = soak_report.cpu_of
"""User + system CPU seconds of a process so far: a start-up figure that a loaded host changes
less than wall time."""


def vm_hwm(pid: int) -> int | None:
    """Peak resident set size in bytes (`VmHWM`); None where it cannot be read."""
    return soak_report.status_bytes(pid, "VmHWM")


async def sequential(workdir: Path, mode: str, searches: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    async with soak.SoakSession(workdir, mode=mode) as session:
        assert session.client is not None
        modes: dict[str, int] = {}
        for _ in range(searches):
            capabilities = rng.sample(soak.CAPABILITIES, rng.randint(1, 18))
            answer = await session.client.call(SEARCH, {"capabilities": capabilities}, timeout=60.0)
            modes[answer["search_mode"]] = modes.get(answer["search_mode"], 0) + 1
        pid = session.worker_pid
        return {"mode": mode, "searches": searches, "search_modes": modes,
                "rss": soak_report.rss_of(pid), "peak": vm_hwm(pid)}


async def first_hybrid_answer(workdir: Path, settle_s: float = 0.0) -> dict[str, Any]:
    """Seconds from spawning a worker on a warm project to its first hybrid answer (the worker
    then runs `settle_s` longer, so its background embeddings reach the disk cache)."""
    set_up = time.perf_counter()
    async with soak.SoakSession(workdir, mode="hybrid") as session:
        assert session.client is not None and session.worker is not None
        started = getattr(session.worker, "spawned_at", None) or set_up
        registered = time.perf_counter() - started
        attempts = 0
        while True:
            attempts += 1
            answer = await session.client.call(SEARCH, {"capabilities": ["send an email"]}, timeout=60.0)
            if answer["search_mode"] == "hybrid":
                break
            await anyio.sleep(0.02)
        elapsed = time.perf_counter() - started
        pid = session.worker_pid
        cpu = cpu_seconds(pid)
        await anyio.sleep(settle_s)
        return {"seconds": elapsed, "registered_after": registered, "answer_after_registered": elapsed - registered,
                "set_up": started - set_up, "attempts": attempts, "worker_cpu": cpu,
                "rss": soak_report.rss_of(pid), "peak": vm_hwm(pid)}


def cli_call(workdir: Path, mode: str) -> dict[str, Any]:
    """Peak RSS of one CLI search in `workdir` (its project, config and vector cache)."""
    project = soak.Project(workdir)
    config = workdir / f"cli-{mode}.json"
    settings = project.settings("http://127.0.0.1:9", mode).model_dump(mode="json")
    config.write_text(json.dumps(settings), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("III_")}
    env.update({"HOME": str(project.home), "OTEL_ENABLED": "false",
                "III_DIRECTORY_CACHE_DIR": str(workdir / "vectors"), "LOG_LEVEL": "warning"})
    payload = json.dumps({"capabilities": ["send an email to a customer", "forecast the weather"]})
    # a fresh parent per call, so ru_maxrss of its children is this CLI process alone
    probe = ("import json, resource, subprocess, sys, time; t = time.perf_counter(); "
             "done = subprocess.run(sys.argv[1:], capture_output=True, text=True, check=True); "
             "print(json.dumps({'stdout': done.stdout, 'seconds': time.perf_counter() - t, "
             "'peak_kib': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))")
    done = subprocess.run([sys.executable, "-c", probe, sys.executable, "-m", "iii_directory", "call",
                           SEARCH, payload, "--config", str(config)], cwd=workdir, env=env,
                          capture_output=True, check=True, text=True)
    report = json.loads(done.stdout)
    answer = json.loads(report["stdout"])
    return {"mode": answer["search_mode"], "peak_kib": report["peak_kib"], "seconds": report["seconds"]}


def compile_package() -> None:
    """Compile the package's bytecode once (a wheel install does), so no start compiles it."""
    import _rank
    import iii_directory

    folders = [str(Path(package.__file__).parent) for package in (iii_directory, _rank)]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *folders], check=False, capture_output=True)


def startups(count: int, searches: int, seed: int, json_path: str | None) -> int:
    """`count` warm starts of `serve` on one project, each split spawn → registered → first
    hybrid answer; prints every run, the medians (with the worker's CPU seconds and RSS at the
    answer) and the load average around them, then the README row."""
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="iii-search-startup-") as tmp:
        workdir = Path(tmp) / "hybrid"
        warm = anyio.run(sequential, workdir, "hybrid", searches, seed)
        anyio.run(first_hybrid_answer, workdir, 15.0)  # every background embedding on disk
        measured_from = os.getloadavg()
        runs = [anyio.run(first_hybrid_answer, workdir) for _ in range(count)]
    load_after = os.getloadavg()
    for run in runs:
        print(f"spawn → registered {run['registered_after']:.3f} s → first hybrid answer "
              f"+{run['answer_after_registered']:.3f} s = {run['seconds']:.3f} s "
              f"(worker CPU {run['worker_cpu']:.2f} s, {run['attempts']} searches; RSS {run['rss'] / MIB:.0f} MiB; "
              f"harness set-up before the spawn {run['set_up']:.3f} s)")
    medians = {key: statistics.median(r[key] for r in runs)
               for key in ("registered_after", "answer_after_registered", "seconds", "worker_cpu", "rss",
                           "set_up")}
    print(f"median of {count}: registered {medians['registered_after']:.3f} s, first hybrid answer "
          f"+{medians['answer_after_registered']:.3f} s = {medians['seconds']:.3f} s, worker CPU "
          f"{medians['worker_cpu']:.2f} s, RSS {medians['rss'] / MIB:.0f} MiB; set-up before the spawn "
          f"{medians['set_up']:.3f} s (warm-up: {warm['searches']} searches, {warm['search_modes']})")
    print(f"load average: {load_before[0]:.1f} before the warm-up, {measured_from[0]:.1f} → "
          f"{load_after[0]:.1f} over the starts")
    print(f"README: first hybrid answer after a warm restart (median of {count}) "
          f"{medians['seconds']:.2f} s wall, {medians['worker_cpu']:.2f} s worker CPU, "
          f"{medians['rss'] / MIB:.0f} MiB RSS; registered after {medians['registered_after']:.2f} s; "
          f"load {measured_from[0]:.1f}–{load_after[0]:.1f} (floor ≤ 0.6 s on a quiet 2-core machine)")
    if json_path:
        Path(json_path).write_text(json.dumps({"runs": runs, "medians": medians,
                                               "load": [measured_from[0], load_after[0]]}, indent=2) + "\n",
                                   encoding="utf-8")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="also write the figures as JSON to this path")
    parser.add_argument("--startups", type=int, default=0,
                        help="only the start-up split: this many warm starts on one project")
    args = parser.parse_args(argv)
    compile_package()
    if args.startups:
        return startups(args.startups, args.searches, args.seed, args.json)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="iii-search-memory-") as tmp:
        root = Path(tmp)
        for mode in ("lexical", "hybrid"):
            results[f"serve_{mode}"] = anyio.run(sequential, root / mode, mode, args.searches, args.seed)
        results["first_hybrid_answer_warm"] = anyio.run(first_hybrid_answer, root / "hybrid")
        results["cli_lexical"] = cli_call(root / "lexical", "lexical")
        results["cli_hybrid"] = cli_call(root / "hybrid", "hybrid")

    def mib(value: int | None) -> str:
        return "n/a" if value is None else f"{value / MIB:.0f} MiB"

    for mode in ("lexical", "hybrid"):
        r = results[f"serve_{mode}"]
        print(f"serve, {r['searches']} sequential searches ({mode}): RSS {mib(r['rss'])}, "
              f"peak {mib(r['peak'])}; answers by search_mode {r['search_modes']}")
    first = results["first_hybrid_answer_warm"]
    print(f"start → first hybrid answer (135 skills, warm cache): {first['seconds']:.2f} s "
          f"(registered after {first['registered_after']:.2f} s, answer "
          f"+{first['answer_after_registered']:.2f} s, worker CPU {first['worker_cpu']:.2f} s, "
          f"{first['attempts']} searches); "
          f"RSS {mib(first['rss'])}")
    for mode in ("lexical", "hybrid"):
        r = results[f"cli_{mode}"]
        peak = "n/a" if r["peak_kib"] is None else f"{r['peak_kib'] / 1024:.0f} MiB"
        print(f"CLI call ({mode}, answered {r['mode']}): peak RSS {peak}, {r['seconds']:.2f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
