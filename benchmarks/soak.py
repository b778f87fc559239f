"""Soak: many concurrent callers against one worker through the in-process test engine (issue 11).

Run::

    python benchmarks/soak.py                       # 50 callers for 60 s, the installed default mode
    python benchmarks/soak.py --mode both           # lexical, then hybrid, same machine, same run
    python benchmarks/soak.py --seconds 10 --callers 20 --in-process
    python benchmarks/soak.py --capabilities both   # ordinary, then half the callers sending long ones

`--mode` is the `function_search_mode` the worker runs: `lexical`, `hybrid` or `both` (one soak
each, lexical first, then the hybrid/lexical ratios); the default is the mode an installation
gets: `hybrid` where the `dense` extra is installed, else `lexical`; a lexical worker runs with
`III_DIRECTORY_PRELOAD=0`, as a host without the extra starts no encoder. Every soak starts cold: a
new worker process with an empty vector cache (`III_DIRECTORY_CACHE_DIR` in the work folder), and
callers start the moment its functions are registered, so the model load, the first index and
the first skill embeddings fall inside the measured window (`--warmup N` excludes the first N
seconds' latencies instead; their errors count either way). A cold-start phase report follows
the table: calls/s, search p50 / p99, other functions' p99, errors and RSS per phase
(`--phase-seconds`, default 10).

`--capabilities long` makes half the callers (0, 2, 4, …) send, in every search, 18 capabilities
of the maximum length (`request_limits.CAPABILITY_MAX_CHARS`), each one new; `both` runs the
ordinary soak, then that one, and prints their ratios against the issue-33 floors.

Printed: calls, throughput, p50 / p99 / max per function, errors (must be 0), how many search
answers were hybrid, lexical or judge (and when the first hybrid one came), and the worker's RSS
after boot, at the growth baseline and at the end. The baseline is read an event after the
worker is ready — `RSS_SETTLE_S` after its first search answer and, in hybrid, after its log
says the encoder is loaded — not at a share of the run, so a loaded host that loads the model
late moves the baseline instead of failing a healthy run; when the encoder never loaded,
growth is not judged (and the report says so). The run fails (exit 1) on any error or when RSS
grows by more than the stated bound after the baseline (`--rss-bound-mib`, default 64 MiB).

What runs, what is measured and the growth rule: `iii_directory.testing.soak` (the session,
also the engine of `tests/reliability/`) and `iii_directory.testing.soak_report` (the report).
This file is the command line, with the ratios of two soaks of the same run.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import anyio

from iii_directory.testing.soak import DEFAULT_RSS_BOUND_MIB, installed_default_mode, run_soak
from iii_directory.testing.soak_report import (RSS_SETTLE_S, SEARCH, FunctionStats, SoakReport,
                                               percentile)


def compare(lexical: SoakReport, hybrid: SoakReport) -> str:
    """The issue's ratios of a hybrid soak against the lexical soak of the same run."""
    lex_rate, hyb_rate = lexical.calls / lexical.seconds, hybrid.calls / hybrid.seconds
    lines = [f"hybrid / lexical (same run): calls/s {hyb_rate:.1f} / {lex_rate:.1f} = "
             f"{hyb_rate / max(lex_rate, 1e-9):.0%} (floor ≥ 50 %)"]
    for name in sorted(set(lexical.functions) | set(hybrid.functions)):
        if name == SEARCH:
            continue
        lex = percentile(sorted(lexical.functions.get(name, FunctionStats()).latencies), 0.99)
        hyb = percentile(sorted(hybrid.functions.get(name, FunctionStats()).latencies), 0.99)
        lines.append(f"  {name:<30} p99 {hyb * 1e3:7.0f} ms / {lex * 1e3:7.0f} ms = "
                     f"{hyb / max(lex, 1e-9):.2f}× (floor ≤ 1.5×)")
    search = sorted(hybrid.functions.get(SEARCH, FunctionStats()).latencies)
    lines.append(f"  hybrid search p99 {percentile(search, 0.99) * 1e3:.0f} ms (floor ≤ 3000 ms)")
    if hybrid.cpu_ms_per_call is not None and lexical.cpu_ms_per_call is not None:
        lines.append(f"  worker CPU per call {hybrid.cpu_ms_per_call:.2f} ms / "
                     f"{lexical.cpu_ms_per_call:.2f} ms = "
                     f"{hybrid.cpu_ms_per_call / max(lexical.cpu_ms_per_call, 1e-9):.2f}×")
    return "\n".join(lines)


def compare_long(ordinary: SoakReport, long: SoakReport) -> str:
    """The issue-33 floors of a soak whose half of the callers send maximum-length
    capabilities against the ordinary soak of the same mode and run."""
    rate, long_rate = ordinary.calls / ordinary.seconds, long.calls / long.seconds
    get = percentile(sorted(long.functions.get("directory::skills::get", FunctionStats()).latencies), 0.99)
    lines = [f"{long.mode}, long / ordinary capabilities (same run): calls/s {long_rate:.1f} / {rate:.1f} = "
             f"{long_rate / max(rate, 1e-9):.0%} (floor ≥ 50 %)",
             f"  skills::get p99 with long capabilities {get * 1e3:.0f} ms (floor ≤ 1000 ms)"]
    if ordinary.rss_end and long.rss_end:
        lines.append(f"  worker RSS at the end {long.rss_end / 2**20:.1f} / {ordinary.rss_end / 2**20:.1f} MiB = "
                     f"{long.rss_end / ordinary.rss_end:.2f}× (floor ≤ 1.3×)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="measured duration (default 60)")
    parser.add_argument("--callers", type=int, default=50, help="concurrent callers (default 50)")
    parser.add_argument("--mode", choices=("lexical", "hybrid", "both"), default=None,
                        help="search mode of the worker (default: the installed default, "
                             f"here {installed_default_mode()}); both = lexical then hybrid")
    parser.add_argument("--warmup", type=float, default=None,
                        help="unmeasured seconds at the start (default 0: the cold start is measured)")
    parser.add_argument("--rss-warm-at", type=float, default=None,
                        help="seconds after the start of the RSS sample growth is counted from "
                             f"(default: {RSS_SETTLE_S:.0f} s after the worker is ready — its first search "
                             "answer and, in hybrid, its encoder loaded)")
    parser.add_argument("--capabilities", choices=("ordinary", "long", "both"), default="ordinary",
                        help="long: half the callers send 18 distinct maximum-length capabilities per "
                             "search; both = ordinary then long, with their ratios")
    parser.add_argument("--phase-seconds", type=float, default=10.0, help="cold-start phase length")
    parser.add_argument("--in-process", action="store_true", help="run the worker in this process")
    parser.add_argument("--rss-bound-mib", type=int, default=DEFAULT_RSS_BOUND_MIB,
                        help="allowed RSS growth after warm-up (default %(default)s MiB)")
    parser.add_argument("--drop-every", type=float, default=None, help="abort the worker's socket about every N s")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="also write the report(s) as JSON to this path")
    parser.add_argument("--workdir", help="keep the projects and worker.log in this (new) folder")
    args = parser.parse_args(argv)
    mode = args.mode or installed_default_mode()
    modes = ["lexical", "hybrid"] if mode == "both" else [mode]
    kinds = ["ordinary", "long"] if args.capabilities == "both" else [args.capabilities]
    reports: dict[str, SoakReport] = {}
    with tempfile.TemporaryDirectory(prefix="iii-soak-") as tmp:
        base = Path(args.workdir) if args.workdir else Path(tmp)
        for name in modes:
            for kind in kinds:
                key = name if kind == "ordinary" else f"{name}/long"
                workdir = base / key.replace("/", "-")
                workdir.mkdir(parents=True, exist_ok=True)
                long_callers = args.callers // 2 if kind == "long" else 0
                reports[key] = anyio.run(lambda: run_soak(
                    args.seconds, args.callers, workdir, in_process=args.in_process, seed=args.seed,
                    rss_bound_mib=args.rss_bound_mib, warmup=args.warmup, drop_every=args.drop_every,
                    mode=name, rss_warm_at=args.rss_warm_at, phase_seconds=args.phase_seconds,
                    long_callers=long_callers))
                print(reports[key].table())
                print()
    if "lexical" in reports and "hybrid" in reports:
        print(compare(reports["lexical"], reports["hybrid"]))
    for name in modes:
        if name in reports and f"{name}/long" in reports:
            print(compare_long(reports[name], reports[f"{name}/long"]))
    if args.json:
        payload = {name: report.to_json() for name, report in reports.items()}
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0 if all(report.ok for report in reports.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
