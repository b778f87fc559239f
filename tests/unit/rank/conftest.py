"""Fixtures for `_rank`: every behavioural test runs against each available implementation."""

from __future__ import annotations

from types import ModuleType

import pytest

from _rank import _reference

try:
    from _rank import _core
except ImportError:  # the compiled core is optional
    _core = None  # type: ignore[assignment]

COMPILED: ModuleType | None = _core if getattr(_core, "COMPLETE", False) else None


def _params() -> list[object]:
    return [
        pytest.param(_reference, id="python"),
        pytest.param(
            COMPILED,
            id="cython",
            marks=pytest.mark.skipif(COMPILED is None, reason="the compiled core is not built"),
        ),
    ]


@pytest.fixture(params=_params())
def impl(request: pytest.FixtureRequest) -> ModuleType:
    """The reference module or the compiled core (both expose the same functions)."""
    return request.param
