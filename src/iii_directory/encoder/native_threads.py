"""How many threads the native libraries under the encoder start (docs/startup.md, "Warm restart").

Rule: the worker's numpy work is single-threaded by design (the vector index scores with
`einsum` loops, `_rank.dense`; the encoder's ONNX session has its own intra-op setting), so
OpenBLAS, which numpy's wheels link, gets one thread unless the environment already names a
count. OpenBLAS reads `OPENBLAS_NUM_THREADS` once, when numpy's core library loads; its pool of
one thread per core took a third or more of `import numpy`'s process CPU on a 2-core host (84–100
ms with it, 50–58 without), and a pooled product of a few hundred rows woke both threads for far
longer than one thread takes to compute it. `limit_blas_threads` therefore runs at the start of `serve` and `call`, before
anything imports numpy; a value the user set is kept.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

BLAS_THREADS_ENV = "OPENBLAS_NUM_THREADS"
"""The variable OpenBLAS reads for its thread count when it loads."""

BLAS_THREADS = "1"  # chosen: the worker runs no BLAS-threaded work (see the module doc)


def limit_blas_threads(environ: MutableMapping[str, str] | None = None) -> bool:
    """Set `OPENBLAS_NUM_THREADS=1` in `environ` (default: this process's environment) unless
    it holds a non-blank value; returns whether it set it. Child processes (the ONNX graph
    build) inherit it."""
    env = os.environ if environ is None else environ
    if env.get(BLAS_THREADS_ENV, "").strip():
        return False
    env[BLAS_THREADS_ENV] = BLAS_THREADS
    return True
