"""Main-thread CPU of one `directory::search_functions` call, per mode and capability count.

Run::

    python benchmarks/profile_search.py                      # hybrid, lexical, static; 1 and 6 caps
    python benchmarks/profile_search.py --mode hybrid --counts 6 --profile /tmp/h.prof --top 40
    python benchmarks/profile_search.py --bare                # the quality bench's settings
    PYTHONPATH=<other tree>/src python benchmarks/profile_search.py --json other.json

Under load the worker's event loop is the bottleneck: every file-backed call waits in its ready
queue behind search's ranking work (docs/record/performance.md, "Under load"), so what one search call costs the
main thread is the figure to cut. This runs the real handler in standalone mode over the eval
catalog (`/work/shared/eval/catalog.json`, or `--catalog`), warm: every dev-split capability
once to fill the caches (capability vectors, registry answers, skill entries), then `--rounds`
rounds of timed calls — each dev capability alone (`1`), and the dev capabilities in
consecutive groups of six (`6`). Per mode and count it prints the main thread's CPU per call
(`time.thread_time`: the event loop's own work; the encoder and the GET / file threads are not
in it), the process CPU per call (all threads), the wall time (median and p95) and the RSS
after the mode's calls (`VmRSS`, peak `VmHWM`).

The project is the soak's (`iii_directory.testing.soak_project.Project`: 15 skill namespaces × 9 documents, named after the
catalog's first workers) with its `MockRegistry` on loopback, so the skills side lane and the
registry lane run as under the soak; `--bare` uses the quality bench's settings instead (no
skills, registry lane off). `static` is lexical with the static lane forced on, as on a host
without the `dense` extra. `--profile FILE` writes a cProfile of the timed calls of the last
mode and count (and prints the `--top` functions by own time); `--json FILE` writes the figures.
Answers are never compared here: the bench's run files are (`python -m iii_directory.bench
--json`).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import anyio


EVAL = Path("/work/shared/eval")
GROUP = 6


def dev_capabilities(cases_path: Path) -> list[str]:
    """Every capability of the dev split's cases, in case order, repeats dropped."""
    cases = json.loads(cases_path.read_text(encoding="utf-8"))["cases"]
    seen: dict[str, None] = {}
    for case in cases:
        if case["split"] == "dev":
            seen.update(dict.fromkeys(case["capabilities"]))
    return list(seen)


def calls_of(capabilities: list[str], count: int) -> list[list[str]]:
    """The calls of one count: each capability alone, or consecutive groups of `count`."""
    return [capabilities[i:i + count] for i in range(0, len(capabilities), count)
            if len(capabilities[i:i + count]) == count]


def memory() -> dict[str, float]:
    """The process's `VmRSS` and `VmHWM` in MiB (Linux)."""
    out: dict[str, float] = {}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) / 1024.0
    except OSError:
        pass
    return out


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


async def measure_mode(mode: str, catalog: list[dict[str, Any]], capabilities: list[str],
                       counts: Sequence[int], rounds: int, bare: bool, scratch: Path,
                       profile: cProfile.Profile | None) -> dict[str, Any]:
    from iii_directory.bench import bench_settings
    from iii_directory.directory import Directory
    from iii_directory.search.service import SearchService
    from iii_directory.standalone import standalone_engine

    local_mode = "lexical" if mode == "static" else mode
    with ExitStack() as stack:
        if bare:
            settings = bench_settings(local_mode, None, scratch)
        else:
            from iii_directory.testing.registry import MockRegistry
            from iii_directory.testing.soak_project import Project, publish_registry

            registry = stack.enter_context(MockRegistry())
            publish_registry(registry)
            project = Project(scratch / "project")
            namespaces = sorted({r["function_id"].split("::", 1)[0] for r in catalog})[:15]
            project.seed(namespaces)
            settings = project.settings(registry.url, local_mode)
        directory = Directory(settings=settings, engine=standalone_engine(catalog))
        service = directory.service(SearchService)
        service.static.enabled = mode == "static" or None

        async def search(caps: list[str]) -> dict[str, Any]:
            return await directory.invoke("directory::search_functions", {"capabilities": caps})

        await service.ensure_ready(directory.context(), views=True)
        for capability in capabilities:  # warm: vectors, registry answers, skill entries
            await search([capability])
        for group in calls_of(capabilities, GROUP):
            await search(group)
        await service.settle()
        figures: dict[str, Any] = {}
        for count in counts:
            calls = calls_of(capabilities, count)
            main_cpu: list[float] = []
            process_cpu: list[float] = []
            wall: list[float] = []
            reported: set[str] = set()
            last = profile is not None and count == counts[-1]
            for _ in range(rounds):
                for caps in calls:
                    if last:
                        profile.enable()  # type: ignore[union-attr]
                    t0, p0, w0 = time.thread_time(), time.process_time(), time.perf_counter()
                    response = await search(caps)
                    t1, p1, w1 = time.thread_time(), time.process_time(), time.perf_counter()
                    if last:
                        profile.disable()  # type: ignore[union-attr]
                    main_cpu.append((t1 - t0) * 1000.0)
                    process_cpu.append((p1 - p0) * 1000.0)
                    wall.append((w1 - w0) * 1000.0)
                    reported.add(response["search_mode"])
            figures[str(count)] = {
                "calls": len(main_cpu),
                "main_cpu_ms_mean": statistics.fmean(main_cpu),
                "main_cpu_ms_median": statistics.median(main_cpu),
                "process_cpu_ms_mean": statistics.fmean(process_cpu),
                "wall_ms_median": statistics.median(wall),
                "wall_ms_p95": percentile(wall, 0.95),
                "search_mode": "/".join(sorted(reported)),
            }
        await service.stop()
        figures["memory_mib"] = memory()
        return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", action="append", choices=("hybrid", "lexical", "static"),
                        help="repeatable (default: hybrid, lexical, static)")
    parser.add_argument("--counts", type=int, nargs="+", default=[1, GROUP],
                        help="capabilities per call: 1 (each alone) and/or groups of N")
    parser.add_argument("--rounds", type=int, default=3, help="timed passes over the calls")
    parser.add_argument("--catalog", type=Path, default=EVAL / "catalog.json")
    parser.add_argument("--cases", type=Path, default=EVAL / "cases.json")
    parser.add_argument("--bare", action="store_true",
                        help="the quality bench's settings: no skills, registry lane off")
    parser.add_argument("--profile", type=Path, help="write a cProfile of the last mode and count")
    parser.add_argument("--top", type=int, default=30, help="profile rows to print")
    parser.add_argument("--json", type=Path, help="write the figures")
    args = parser.parse_args(argv)

    catalog = json.loads(args.catalog.read_text(encoding="utf-8"))
    capabilities = dev_capabilities(args.cases)
    modes = args.mode or ["hybrid", "lexical", "static"]
    results: dict[str, Any] = {}
    for mode in modes:
        profile = cProfile.Profile() if args.profile and mode == modes[-1] else None
        with tempfile.TemporaryDirectory(prefix="iii-profile-") as scratch:
            results[mode] = anyio.run(measure_mode, mode, catalog, capabilities, args.counts,
                                      args.rounds, args.bare, Path(scratch), profile)
        for count in args.counts:
            row = results[mode][str(count)]
            print(f"{mode:<8} {count:>2} caps  main-thread CPU {row['main_cpu_ms_mean']:6.2f} ms/call "
                  f"(median {row['main_cpu_ms_median']:5.2f})  process CPU "
                  f"{row['process_cpu_ms_mean']:6.2f}  wall p50 {row['wall_ms_median']:6.2f} / p95 "
                  f"{row['wall_ms_p95']:6.2f} ms  [{row['calls']} calls, {row['search_mode']}]")
        rss = results[mode]["memory_mib"]
        print(f"{mode:<8} RSS {rss.get('VmRSS', 0):.1f} MiB (peak {rss.get('VmHWM', 0):.1f})")
        if profile is not None:
            profile.dump_stats(str(args.profile))
            pstats.Stats(profile).sort_stats("tottime").print_stats(args.top)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
