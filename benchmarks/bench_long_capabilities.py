"""Maximum-length capabilities through one `iii-directory serve` (issue 33): memory and stalls.

Run::

    python benchmarks/bench_long_capabilities.py --mode lexical --capabilities 5000
    python benchmarks/bench_long_capabilities.py --mode hybrid --capabilities 5000

The soak's project and engine (`iii_directory.testing.soak`: 56-function catalog, 135 skills, mock
registry, the worker as a subprocess). One caller sends `directory::search_functions` calls of
18 new capabilities of the maximum length (`request_limits.CAPABILITY_MAX_CHARS`, each one
distinct: `soak.long_capability`), one call after another, until `--capabilities` were sent;
the worker's RSS is read every `--every` capabilities. Meanwhile a pinger calls
`directory::skills::get` back to back; its latencies while a search was in flight are the
"pinger during one maximum-size search" figure, beside the pinger's latencies alone (3 s before
the first search: what this host's load alone costs). Printed: RSS per checkpoint, growth after the
first `--filled` capabilities (the text memos are full by then: `text_memo.BUDGET`), search
latency, the pinger's p50 / p99 / max, and the search answers by mode.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

import anyio

from iii_directory.search.request_limits import CAPABILITY_MAX_CHARS, MAX_CAPABILITIES
from iii_directory.testing import soak, soak_report

MIB = 1024 * 1024


async def run(mode: str, capabilities: int, every: int, filled: int, workdir: Path) -> dict[str, object]:
    checkpoints: list[tuple[int, float]] = []
    searches: list[float] = []
    pings: list[float] = []
    idle: list[float] = []
    modes: Counter[str] = Counter()
    async with soak.SoakSession(workdir, mode=mode) as session:
        client, pid = session.client, session.worker_pid
        assert client is not None
        in_flight = False
        done = False
        if mode != "lexical":  # measure the hybrid lane: wait (bounded) for the first hybrid answer
            with anyio.move_on_after(180):
                while (await client.call(soak_report.SEARCH, {"capabilities": ["send an email"]},
                                         timeout=30))["search_mode"] != "hybrid":
                    await anyio.sleep(0.5)

        async def pinger() -> None:
            while not done:
                started = time.perf_counter()
                busy = in_flight
                await client.call("directory::skills::get", {"id": session.skill_ids[0]}, timeout=30)
                if busy and in_flight:
                    pings.append(time.perf_counter() - started)
                await anyio.sleep(0.002)

        with anyio.move_on_after(3.0):  # the pinger alone first: this host's own latency
            while True:
                started = time.perf_counter()
                await client.call("directory::skills::get", {"id": session.skill_ids[0]}, timeout=30)
                idle.append(time.perf_counter() - started)
                await anyio.sleep(0.002)
        sent = serial = 0
        checkpoints.append((0, (soak_report.rss_of(pid) or 0) / MIB))
        async with anyio.create_task_group() as group:
            group.start_soon(pinger)
            while sent < capabilities:
                serial += MAX_CAPABILITIES
                batch = [soak.long_capability(serial - n) for n in range(MAX_CAPABILITIES)]
                in_flight = True
                started = time.perf_counter()
                answer = await client.call(soak_report.SEARCH, {"capabilities": batch}, timeout=30)
                searches.append(time.perf_counter() - started)
                in_flight = False
                modes[answer["search_mode"]] += 1
                before, sent = sent, sent + len(batch)
                if sent // every > before // every:
                    checkpoints.append((sent, (soak_report.rss_of(pid) or 0) / MIB))
            done = True
    base = next((rss for n, rss in checkpoints if n >= filled), checkpoints[-1][1])
    pings.sort()
    idle.sort()
    return {"mode": mode, "checkpoints": checkpoints, "growth_after_filled_mib": checkpoints[-1][1] - base,
            "search_p50_ms": statistics.median(searches) * 1e3, "modes": dict(modes),
            "ping_p50_ms": soak_report.percentile(pings, 0.5) * 1e3, "ping_p99_ms": soak_report.percentile(pings, 0.99) * 1e3,
            "ping_max_ms": (pings[-1] if pings else 0.0) * 1e3, "pings": len(pings),
            "idle_p50_ms": soak_report.percentile(idle, 0.5) * 1e3, "idle_p99_ms": soak_report.percentile(idle, 0.99) * 1e3}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=("lexical", "hybrid"), default="lexical")
    parser.add_argument("--capabilities", type=int, default=5000)
    parser.add_argument("--every", type=int, default=500)
    parser.add_argument("--filled", type=int, default=1000,
                        help="capabilities after which the growth is counted (default %(default)s)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="iii-long-") as tmp:
        result = anyio.run(run, args.mode, args.capabilities, args.every, args.filled, Path(tmp))
    print(f"mode {result['mode']}: {args.capabilities} distinct {CAPABILITY_MAX_CHARS}-character capabilities")
    print("  RSS MiB by capabilities sent: " + ", ".join(f"{n}: {rss:.1f}" for n, rss in result["checkpoints"]))  # type: ignore[union-attr]
    print(f"  growth after {args.filled}: {result['growth_after_filled_mib']:.1f} MiB (floor ≤ 64 MiB)")
    print(f"  search p50 {result['search_p50_ms']:.0f} ms; answers by mode {result['modes']}")
    print(f"  skills::get during a search: {result['pings']} calls, p50 {result['ping_p50_ms']:.1f} ms, "
          f"p99 {result['ping_p99_ms']:.1f} ms, max {result['ping_max_ms']:.1f} ms (floor ≤ 50 ms); "
          f"alone before the searches p50 {result['idle_p50_ms']:.1f} ms, p99 {result['idle_p99_ms']:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
