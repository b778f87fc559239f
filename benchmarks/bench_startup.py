"""Start-up of `iii-directory call` and `serve` against a yardstick (issue 32, item 1).

Run::

    python benchmarks/bench_startup.py                      # 7 paired rounds of each figure
    python benchmarks/bench_startup.py --rounds 11 --instructions --json out.json

Figures, every one paired with the yardstick `python -c "import pydantic, yaml, anyio"` measured
in the same round (a loaded host slows both; the ratio moves less than either):

1. `iii-directory call directory::skills::list '{}'` (the console script): CPU seconds (user +
   system, `os.wait4` of the child) and peak RSS (`ru_maxrss`), in a project holding one skill.
2. `iii-directory serve` against the in-process test engine: wall seconds from spawning the
   process to the engine holding every function of the table, the worker's CPU seconds at that
   moment and its peak RSS (VmHWM), in two configurations: `lexical` (the seed and the stored
   configuration say so; no encoder preload) and the default (with the `dense` extra installed,
   the encoder preload runs beside the boot).
3. With `--baseline-src DIR` (a `src/` folder of another tree, e.g. `git archive <rev> src`
   unpacked, bytecode compiled, `_rank`'s built extensions copied in): the same call and serve
   figures of that tree, measured in the same rounds, for a before/after ratio.
4. With `--instructions`: instructions executed (valgrind callgrind) by the call and by the
   yardstick, a figure a loaded host does not change; also those of the other file-backed read
   functions' calls (`READ_CALLS`, this tree only), which take the same short path
   (`quick_call.py`).

The floor (issue 32): the call's CPU ≤ 2× the yardstick's, paired, and peak RSS ≤ 40 MiB; the
last line says whether this run met it.

The `python -X importtime` output of one call and of one serve start is written to
`--importtime-dir` (default `benchmarks/data/startup/`) as `importtime_call.txt` and
`importtime_serve.txt`, and the slowest imports by cumulative time are printed.

Every loop is bounded in count and time; the only traffic is to 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process

HERE = Path(__file__).resolve().parent
YARDSTICK = [sys.executable, "-c", "import pydantic, yaml, anyio"]
CALL_ID = "directory::skills::list"
READ_CALLS = (
    ("directory::skills::get", '{"id": "demo/skills/demo"}'),
    ("directory::skills::index", "{}"),
    ("directory::system-prompts::list", "{}"),
    ("directory::system-prompts::get", '{"name": "iii-minimal"}'),
    ("directory::agents::list", "{}"),
    ("directory::agents::get", '{"id": "iii"}'),
)
"""The other file-backed read functions (`--instructions` counts one call of each)."""
FLOOR_RATIO = 2.0
FLOOR_PEAK_MIB = 40.0
SERVE_TIMEOUT_S = 60.0
MIB = 1024 * 1024


def console_script() -> list[str]:
    """`iii-directory` next to this interpreter (what users run), else `python -m iii_directory`."""
    script = Path(sys.executable).with_name("iii-directory")
    return [str(script)] if script.exists() else [sys.executable, "-m", "iii_directory"]


def project(root: Path) -> dict[str, str]:
    """A project folder with one skill; the environment a run uses (no `III_*` leaks in)."""
    skill = root / "skills" / "demo" / "skills" / "demo" / "SKILL.md"
    skill.parent.mkdir(parents=True, exist_ok=True)
    skill.write_text("---\ntitle: Demo\n---\n# Demo\n\nA demo skill.\n", encoding="utf-8")
    (root / "lexical.yaml").write_text("function_search_mode: lexical\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("III_")}
    env.update({"HOME": str(root / "home"), "III_DIRECTORY_CACHE_DIR": str(root / "cache"),
                "LOG_LEVEL": "warning", "OTEL_ENABLED": "false"})
    return env


def measured(argv: Sequence[str], cwd: Path, env: dict[str, str]) -> dict[str, float]:
    """Run `argv` to its end: wall and CPU seconds and peak RSS (bytes) of that child alone."""
    started = time.perf_counter()
    process = subprocess.Popen(list(argv), cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    stderr = process.stderr.read().decode(errors="replace") if process.stderr else ""
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {process.returncode}: {stderr[-2000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "peak": usage.ru_maxrss * 1024.0}


def cpu_of(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_of(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024.0
    return float("nan")


async def serve_once(root: Path, env: dict[str, str], mode: str, extra: Sequence[str] = ()) -> dict[str, float]:
    """Spawn `serve` against a fresh test engine; seconds to all functions registered, the
    worker's CPU then and its peak RSS."""
    from iii_directory.config import Settings, config_id
    from iii_directory.published import published
    from iii_directory.testing.engine import TestEngine

    wanted = set(published().frames)
    settings = Settings(function_search_mode=mode)  # type: ignore[arg-type]
    async with TestEngine(functions_debounce_s=0.05) as engine:
        engine.configuration.put(config_id(), settings.model_dump(mode="json"))
        argv = [*extra, *console_script(), "serve", "--url", engine.url]
        if mode == "lexical":
            argv += ["--config", str(root / "lexical.yaml")]
        started = time.perf_counter()
        async with spawned(argv, cwd=root, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL) as process:
            await engine.wait_for(lambda: wanted <= {fid for (_ns, fid), e in engine.functions.items()
                                                     if e.owner is not None}, timeout=SERVE_TIMEOUT_S)
            wall = time.perf_counter() - started
            cpu, peak = cpu_of(process.pid), peak_of(process.pid)
    return {"wall": wall, "cpu": cpu, "peak": peak}


@asynccontextmanager
async def spawned(argv: Sequence[str], **options: Any) -> AsyncIterator[Process]:
    """`anyio.open_process(argv, **options)`; on leaving, terminated and awaited (20 s at
    most), and killed when it is still running (also when the body failed)."""
    process = await anyio.open_process(list(argv), **options)
    try:
        yield process
        process.terminate()
        with anyio.fail_after(20):
            await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def importtime(argv: Sequence[str], cwd: Path, env: dict[str, str], out: Path) -> list[tuple[int, str]]:
    """Write the `-X importtime` report of `argv` (a Python command line) to `out`; the 12
    slowest top-level imports (cumulative µs, module)."""
    done = subprocess.run([sys.executable, "-X", "importtime", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)
    lines = [line for line in done.stderr.splitlines() if line.startswith("import time:")]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = []
    for line in lines[1:]:
        _, cumulative, name = line.split(":", 1)[1].split("|")
        if not name.startswith("   "):  # top level: imported by the entry point, not by a module
            rows.append((int(cumulative), name.strip()))
    return sorted(rows, reverse=True)[:12]


async def serve_importtime(root: Path, env: dict[str, str], out: Path) -> None:
    """`-X importtime` of one `serve` start (lexical), stopped a second after it registered."""
    from iii_directory.config import Settings, config_id
    from iii_directory.testing.engine import TestEngine

    log = out.with_suffix(".raw")
    out.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as sink:
        async with TestEngine(functions_debounce_s=0.05) as engine:
            engine.configuration.put(config_id(), Settings(function_search_mode="lexical").model_dump(mode="json"))
            async with spawned(
                    [sys.executable, "-X", "importtime", "-m", "iii_directory", "serve", "--url", engine.url,
                     "--config", str(root / "lexical.yaml")], cwd=root, env=env, stdout=subprocess.DEVNULL,
                    stderr=sink):
                await engine.wait_for(lambda: engine.worker("iii-directory") is not None, timeout=SERVE_TIMEOUT_S)
                await anyio.sleep(1.0)
    lines = [ln for ln in log.read_text(encoding="utf-8", errors="replace").splitlines()
             if ln.startswith("import time:")]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    log.unlink()


def instructions(argv: Sequence[str], cwd: Path, env: dict[str, str]) -> int | None:
    """Instructions executed by `argv` (valgrind callgrind), or None without valgrind."""
    if shutil.which("valgrind") is None:
        return None
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=600)
    for line in done.stderr.splitlines():
        if "Collected :" in line:
            return int(line.rsplit(":", 1)[1].strip())
    return None


def uncompiled() -> int:
    """Modules of `iii_directory` with no bytecode cached for their current source: each one is
    compiled again at every start when `PYTHONDONTWRITEBYTECODE` is set (a wheel install
    compiles them all once)."""
    import importlib.util

    import iii_directory

    count = 0
    for source in Path(iii_directory.__file__).parent.rglob("*.py"):
        cached = Path(importlib.util.cache_from_source(str(source)))
        if not cached.exists() or cached.stat().st_mtime < source.stat().st_mtime:
            count += 1
    return count


def compile_package() -> None:
    """Cache the bytecode of `iii_directory` and `_rank`, as installing a wheel does."""
    import _rank
    import iii_directory

    for package in (iii_directory, _rank):
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(package.__file__).parent)],
                       env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
                       check=True, stdout=subprocess.DEVNULL)


def loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def summary(pairs: list[tuple[dict[str, float], dict[str, float]]], key: str) -> dict[str, float]:
    ours = [p[0][key] for p in pairs]
    yard = [p[1][key] for p in pairs]
    ratios = [a / b for a, b in zip(ours, yard) if b > 0]
    return {"median": statistics.median(ours), "yardstick": statistics.median(yard),
            "ratio_median": statistics.median(ratios) if ratios else float("nan"),
            "ratio_min": min(ratios) if ratios else float("nan")}


def report_line(name: str, pairs: list[tuple[dict[str, float], dict[str, float]]]) -> str:
    """One figure: medians over the rounds and the paired CPU ratio to the yardstick."""
    cpu = summary(pairs, "cpu")
    peak = max(p[0]["peak"] for p in pairs) / MIB
    wall = summary(pairs, "wall")
    return (f"{name:<39} wall {wall['median']:.3f} s   CPU {cpu['median']:.3f} s  (yardstick "
            f"{cpu['yardstick']:.3f} s; paired ratio median {cpu['ratio_median']:.2f}×, best "
            f"{cpu['ratio_min']:.2f}×)   peak RSS {peak:.1f} MiB")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="paired rounds of every figure (≤ 50)")
    parser.add_argument("--instructions", action="store_true", help="also count instructions (valgrind)")
    parser.add_argument("--no-serve", action="store_true", help="skip the serve figures")
    parser.add_argument("--importtime-dir", type=Path, default=HERE / "data" / "startup")
    parser.add_argument("--json", default=None, help="write every figure to this JSON file")
    parser.add_argument("--baseline-src", type=Path, default=None,
                        help="a src/ folder of another tree to measure beside this one")
    parser.add_argument("--compile", action="store_true",
                        help="cache the package's bytecode first (as a wheel install does)")
    args = parser.parse_args(argv)
    rounds = max(1, min(args.rounds, 50))
    if args.compile:
        compile_package()
    results: dict[str, Any] = {"load_before": loadavg(), "python": sys.version.split()[0],
                               "uncompiled_modules": uncompiled()}
    print(f"load average before: {results['load_before']}; modules without cached bytecode: "
          f"{results['uncompiled_modules']}")
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        root = Path(tmp)
        env = project(root)
        call = [*console_script(), "call", CALL_ID, "{}"]
        trees = {"": env}
        if args.baseline_src:
            trees[" [baseline]"] = {**env, "PYTHONPATH": str(args.baseline_src.resolve())}
        for label, tree_env in trees.items():
            measured(call, root, tree_env)
        for label, tree_env in trees.items():
            pairs = [(measured(call, root, tree_env), measured(YARDSTICK, root, env)) for _ in range(rounds)]
            results["call" + label] = pairs
            print(report_line("call skills::list" + label, pairs))
        if not args.no_serve:
            for mode in ("lexical", "hybrid"):
                for label, tree_env in trees.items():
                    serve_pairs = []
                    for _ in range(rounds):
                        ours = anyio.run(serve_once, root, tree_env, mode)
                        serve_pairs.append((ours, measured(YARDSTICK, root, env)))
                    results[f"serve_{mode}{label}"] = serve_pairs
                    print(report_line(f"serve → registered ({mode}){label}", serve_pairs))
        if args.instructions:
            yard_ir = instructions(YARDSTICK, root, env)
            results["instructions"] = {"yardstick": yard_ir}
            for label, tree_env in trees.items():
                ours_ir = instructions(call, root, tree_env)
                results["instructions"]["call" + label] = ours_ir
                if ours_ir and yard_ir:
                    print(f"instructions: call{label} {ours_ir / 1e6:.0f} M, yardstick {yard_ir / 1e6:.0f} M "
                          f"({ours_ir / yard_ir:.2f}×)")
            for function_id, payload in READ_CALLS:
                ours_ir = instructions([*console_script(), "call", function_id, payload], root, env)
                results["instructions"][function_id] = ours_ir
                if ours_ir and yard_ir:
                    print(f"instructions: call {function_id} {ours_ir / 1e6:.0f} M ({ours_ir / yard_ir:.2f}×)")
        out = args.importtime_dir
        top = importtime(["-m", "iii_directory", "call", CALL_ID, "{}"], root, env, out / "importtime_call.txt")
        print(f"slowest imports of call (cumulative µs; full report {out / 'importtime_call.txt'}):")
        for micros, name in top:
            print(f"  {micros:>8}  {name}")
        if not args.no_serve:
            anyio.run(serve_importtime, root, env, out / "importtime_serve.txt")
            print(f"serve's import report: {out / 'importtime_serve.txt'}")
    results["load_after"] = loadavg()
    print(f"load average after: {results['load_after']}")
    cpu = summary(results["call"], "cpu")
    peak = max(p[0]["peak"] for p in results["call"]) / MIB
    met = cpu["ratio_median"] <= FLOOR_RATIO and peak <= FLOOR_PEAK_MIB
    print(f"floor (call CPU ≤ {FLOOR_RATIO:g}× the yardstick, peak RSS ≤ {FLOOR_PEAK_MIB:g} MiB): "
          f"{'met' if met else 'MISSED'} ({cpu['ratio_median']:.2f}×, {peak:.1f} MiB)")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
