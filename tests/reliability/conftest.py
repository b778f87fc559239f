"""Reliability tests (issue 11): load, faults, crash safety and fuzzing.

The helpers next to this file (`reliability_support`, `crash_driver`, `shared_writer`) are
imported by module name, so this folder goes on `sys.path` (any pytest import mode)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
