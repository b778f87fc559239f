"""Build a model's optimized ONNX graph in a child process (`python -m _rank._optimize_graph`),
for `_rank.dense.Encoder(optimize_in_child=True)`; re-exported by `_rank.dense`.

Needs only the standard library: the child imports onnxruntime, this process only waits.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

log = logging.getLogger("_rank.dense")  # the encoder's own log: a failed child means building there


OPTIMIZED_MODEL = "model.onnx"
"""The saved optimized graph's file name in its folder (`_rank.dense.optimized_graph_dir`)."""

CHILD_TIMEOUT_S = 300.0
"""How long `build_in_child` waits for the child before killing it and building here."""

CHILD_NICE = 10
"""The child's scheduling niceness increment (POSIX): it gives way to the process it serves."""


def build_in_child(model_file: Path, saved: Path, threads: int, *,
                   timeout: float = CHILD_TIMEOUT_S, weights: str = "float", fuse: bool = False) -> bool:
    """Build and save the optimized graph (`weights`, `fuse` as `_rank.dense.Encoder` takes them)
    in a child process (`python -m _rank._optimize_graph`, at `CHILD_NICE`); True when `saved` holds it afterwards.

    Why: onnxruntime holds the GIL for much of a session build (stalls of up to ~125 ms were
    seen on a loaded 2-core host) and constant folding peaks ~150 MiB above the finished
    session, so optimizing in the process that serves calls stalls its event loop and raises its
    peak RSS. The calling thread only waits. No interpreter (`sys.executable` empty), a child
    that fails or one that runs past `timeout` (killed) → False, logged; the caller builds in
    its own thread instead."""
    import subprocess
    import sys

    if not sys.executable:
        return False
    package_root = str(Path(__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
    command = [sys.executable, "-m", "_rank._optimize_graph", str(model_file), str(saved), str(threads), weights,
               "fused" if fuse else "unfused"]
    try:
        done = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        log.warning("optimizing the ONNX graph in a child process failed (%s); optimizing here", exc)
        return False
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        log.warning("optimizing the ONNX graph in a child process failed (exit %s%s); optimizing here",
                    done.returncode, f": {lines[-1]}" if lines else "")
        return False
    return (saved / OPTIMIZED_MODEL).is_file()
