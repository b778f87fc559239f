"""Child-process entry of `_rank.dense.build_in_child`: build and save a model's optimized graph.

    python -m _rank._optimize_graph MODEL_FILE SAVED_DIR THREADS [WEIGHTS [fused|unfused]]

Lowers its own priority by `dense.CHILD_NICE` (POSIX), then `dense.build_optimized_graph`
(WEIGHTS one of `dense.WEIGHTS`, default "float"; attention fused or not, default unfused).
Exit 0 when SAVED_DIR holds the optimized graph afterwards, 1 when it does not, 2 on bad
arguments.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

USAGE = "usage: python -m _rank._optimize_graph MODEL_FILE SAVED_DIR THREADS [float|int8 [fused|unfused]]"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if (len(args) not in (3, 4, 5) or not args[2].isdigit() or int(args[2]) < 1
            or args[3:4] not in ([], ["float"], ["int8"]) or args[4:] not in ([], ["fused"], ["unfused"])):
        print(USAGE, file=sys.stderr)
        return 2
    model_file, saved, threads = Path(args[0]), Path(args[1]), int(args[2])
    weights = args[3] if len(args) >= 4 else "float"
    fuse = args[4:] == ["fused"]
    if not model_file.is_file():
        print(f"no model file {model_file}", file=sys.stderr)
        return 2
    from . import dense

    if hasattr(os, "nice"):
        try:
            os.nice(dense.CHILD_NICE)
        except OSError:  # pragma: no cover - a refused nice only means normal priority
            pass
    dense.build_optimized_graph(model_file, saved, threads, weights, fuse)
    return 0 if (saved / dense.OPTIMIZED_MODEL).is_file() else 1


if __name__ == "__main__":
    sys.exit(main())
