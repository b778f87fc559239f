"""The registry client's one-off preparation (`prepare_http`, `mark_sniffio_absent`)."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from iii_directory.sources import registry


def test_sniffio_is_marked_absent_only_when_it_is_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "sniffio", raising=False)
    installed = importlib.util.find_spec("sniffio") is not None
    registry.mark_sniffio_absent()
    if installed:
        import sniffio  # noqa: F401 - still importable
    else:
        assert "sniffio" in sys.modules and sys.modules["sniffio"] is None
        with pytest.raises(ImportError):
            import sniffio  # noqa: F401


def test_a_present_module_is_never_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    marker = object()
    monkeypatch.setitem(sys.modules, "sniffio", marker)
    registry.mark_sniffio_absent()
    assert sys.modules["sniffio"] is marker


def test_prepare_http_loads_the_client_stack_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_SSL_CONTEXT", None)
    registry.prepare_http()
    context = registry._SSL_CONTEXT
    assert context is not None
    assert "httpx" in sys.modules and "httpcore" in sys.modules
    registry.prepare_http()  # idempotent: the same context stays
    assert registry._SSL_CONTEXT is context
