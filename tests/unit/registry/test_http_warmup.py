"""The registry client's transport: sniffio marked absent once, GETs on its own threads."""

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


async def test_gets_run_on_threads_of_the_clients_own_limiter(monkeypatch: pytest.MonkeyPatch) -> None:
    """A registry GET is a blocking request on a worker thread (no event-loop turns per
    request step under load), entered through the client's own limiter, not anyio's default
    one the file handlers use; the answer and the cache are as before."""
    import threading

    import anyio

    from iii_directory.config import Settings
    from iii_directory.directory import Directory
    from iii_directory.port import StandaloneEngine
    from iii_directory.table import FunctionTable
    from iii_directory.testing.registry import MockRegistry

    threads: list[bool] = []
    real = registry.RegistryClient._get_blocking

    def spy(self, *args):
        threads.append(threading.current_thread() is threading.main_thread())
        return real(self, *args)

    monkeypatch.setattr(registry.RegistryClient, "_get_blocking", spy)
    with MockRegistry() as server:
        server.add_worker("resend", version="1.0.0", description="Email delivery.")
        settings = Settings(registry_url=server.url, download_timeout_ms=5000)
        directory = Directory(settings=settings, engine=StandaloneEngine(), table=FunctionTable.merge([]))
        client = directory.service(registry.RegistryClient)
        page = await client.list_workers(settings, search="email")
        assert [w["name"] for w in page["workers"]] == ["resend"]
        assert threads == [False]
        limiter = client._get_limiter()
        assert limiter is not anyio.to_thread.current_default_thread_limiter()
        assert limiter.total_tokens == registry.GET_THREADS
        assert client._get_limiter() is limiter  # one per event loop
        await client.list_workers(settings, search="email")  # cached: no request, no thread
        assert threads == [False] and server.count("/w") == 1
        await client.aclose()
        assert client._blocking is None


def test_a_get_thread_stops_reading_a_slow_answer_at_its_deadline() -> None:
    """The thread of a GET whose caller gave up does not keep reading: past the request's
    deadline the next chunk ends it (clock injected, no sleeping)."""
    import httpx

    from iii_directory.config import Settings
    from iii_directory.directory import Directory
    from iii_directory.port import StandaloneEngine
    from iii_directory.table import FunctionTable

    now = [0.0]
    closed: list[bool] = []

    class Dripping:
        status_code = 200

        def iter_bytes(self):  # type: ignore[no-untyped-def]
            for _ in range(10):
                now[0] += 1.0  # each chunk arrives a second after the last
                yield b"x"

        def close(self) -> None:
            closed.append(True)

    class Client:
        is_closed = False

        def build_request(self, *args: object, **kwargs: object) -> object:
            return object()

        def send(self, request: object, stream: bool = False) -> Dripping:
            return Dripping()

    directory = Directory(settings=Settings(), engine=StandaloneEngine(), table=FunctionTable.merge([]))
    client = directory.service(registry.RegistryClient)
    client.clock = lambda: now[0]
    client._blocking = Client()  # type: ignore[assignment]
    with pytest.raises(httpx.ReadTimeout):
        client._get_blocking("http://registry/w", None, {}, 3.0)
    assert now[0] == 4.0 and closed == [True]  # stopped at the first chunk past 3 s, closed
