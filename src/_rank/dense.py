"""Dense lane (being built): MiniLM encoder and vector index. Needs the `dense` extra."""

from __future__ import annotations

try:
    import numpy  # noqa: F401
    import onnxruntime  # noqa: F401
    import tokenizers  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "_rank.dense needs the optional 'dense' extra "
        "(pip install 'iii-directory[dense]'): " + str(exc)
    ) from exc
