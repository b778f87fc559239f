"""Shared helpers of the reliability tests: fuzz sizes, tree snapshots, subprocess plumbing.

Sizes: every fuzz test runs `fuzz_examples()` generated inputs — a CI size by default, and at
least 10,000 when the environment sets `NIGHTLY=1` (`FUZZ_EXAMPLES=<n>` overrides both).
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterable
from pathlib import Path

from hypothesis import HealthCheck, settings

CI_EXAMPLES = 150
NIGHTLY_EXAMPLES = 10_000
REPO = Path(__file__).resolve().parents[2]


def fuzz_examples(ci: int = CI_EXAMPLES) -> int:
    """How many generated inputs one fuzz test runs (see the module docstring)."""
    override = os.environ.get("FUZZ_EXAMPLES", "").strip()
    if override:
        return max(1, int(override))
    if os.environ.get("NIGHTLY", "").strip() not in ("", "0"):
        return max(ci, NIGHTLY_EXAMPLES)
    return ci


def fuzz_settings(ci: int = CI_EXAMPLES) -> settings:
    """Hypothesis settings of one fuzz test: its example count, no deadline (a 2-core CI box
    is noisy), and fixtures shared by every example (they are read-only or reset per example)."""
    return settings(
        max_examples=fuzz_examples(ci),
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                               HealthCheck.data_too_large, HealthCheck.filter_too_much],
        derandomize=False,
        database=None,
    )


def tree(root: Path) -> dict[str, bytes]:
    """Every regular file under `root` (relative POSIX path → content); symlinks not followed."""
    found: dict[str, bytes] = {}
    if not root.exists():
        return found
    for folder, dirs, files in os.walk(root):
        for name in files:
            path = Path(folder) / name
            if path.is_symlink() or not path.is_file():
                continue
            found[path.relative_to(root).as_posix()] = path.read_bytes()
    return found


def assert_unchanged(before: dict[str, bytes], root: Path, allowed: Iterable[str] = ()) -> None:
    """No file under `root` appeared, vanished or changed, except the relative paths `allowed`."""
    after = tree(root)
    skip = set(allowed)
    changed = sorted(k for k in set(before) | set(after)
                     if k not in skip and before.get(k) != after.get(k))
    assert not changed, f"files changed outside the roots: {changed[:10]}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def child_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a worker or driver subprocess: no inherited `III_*`, HOME isolated,
    the test-helper folders importable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("III_")}
    paths = [str(REPO / "tests" / "reliability"), str(REPO / "tests" / "unit" / "kits")]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env.update({"HOME": str(home), "PYTHONPATH": os.pathsep.join(paths), "OTEL_ENABLED": "false",
                "PYTHONUNBUFFERED": "1"})
    env.update(extra)
    return env


PYTHON = sys.executable
