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

    now = [0.0]

    class Dripping(Chunked):
        def iter_bytes(self):  # type: ignore[no-untyped-def]
            for _ in range(10):
                now[0] += 1.0  # each chunk arrives a second after the last
                yield b"x"

    client = bare_client()
    client.clock = lambda: now[0]
    answer = Dripping([])
    client._blocking = Sending(answer)  # type: ignore[assignment]
    with pytest.raises(httpx.ReadTimeout):
        client._get_blocking("http://registry/w", None, {}, 3.0)
    assert now[0] == 4.0 and answer.closed  # stopped at the first chunk past 3 s, closed


class Chunked:
    """A streamed answer of `chunks` (blocking and async iteration); records its closing."""

    status_code = 200

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.closed = False

    def iter_bytes(self):  # type: ignore[no-untyped-def]
        yield from self.chunks

    async def aiter_bytes(self):  # type: ignore[no-untyped-def]
        for chunk in self.chunks:
            yield chunk

    def close(self) -> None:
        self.closed = True

    async def aclose(self) -> None:
        self.closed = True


class Sending:
    """A client (blocking or async) whose every request answers `response`."""

    is_closed = False

    def __init__(self, response: Chunked) -> None:
        self.response = response

    def build_request(self, *args: object, **kwargs: object) -> object:
        return object()

    def send(self, request: object, stream: bool = False) -> Chunked:
        return self.response


class AsyncSending(Sending):
    async def send(self, request: object, stream: bool = False) -> Chunked:  # type: ignore[override]
        return self.response


def bare_client() -> registry.RegistryClient:
    from iii_directory.config import Settings
    from iii_directory.directory import Directory
    from iii_directory.port import StandaloneEngine
    from iii_directory.table import FunctionTable

    directory = Directory(settings=Settings(), engine=StandaloneEngine(), table=FunctionTable.merge([]))
    return directory.service(registry.RegistryClient)


def test_the_capped_body_joins_its_chunks_and_refuses_past_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "MAX_RESPONSE_BYTES", 6)
    body = registry.CappedBody(200)
    body.add(b"abc")
    body.add(b"def")  # exactly the cap
    assert body.answer() == (200, b"abcdef")
    with pytest.raises(registry.RegistryFailure) as raised:
        body.add(b"g")
    assert (raised.value.kind, raised.value.status, raised.value.code) == ("too_large", 200, "D320")


@pytest.mark.parametrize("method", ["GET", "POST"])
async def test_both_transports_refuse_an_answer_past_the_cap(method: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The blocking GET and the async request read through the one capped body: an oversized
    answer is `too_large` (D320) and its stream is closed; an answer at the cap is whole."""
    from iii_directory.config import Settings

    monkeypatch.setattr(registry, "MAX_RESPONSE_BYTES", 6)
    settings = Settings(download_timeout_ms=5000)
    for chunks, refused in (([b"abc", b"def"], False), ([b"abc", b"def", b"g"], True)):
        client = bare_client()
        answer = Chunked(chunks)
        client._blocking = Sending(answer)  # type: ignore[assignment]
        monkeypatch.setattr(client, "_http", lambda: AsyncSending(answer))
        body = {"a": 1} if method == "POST" else None
        if refused:
            with pytest.raises(registry.RegistryFailure) as raised:
                await client._request(settings, method, "/w", body=body)
            assert raised.value.kind == "too_large"
        else:
            assert await client._request(settings, method, "/w", body=body) == (200, b"abcdef")
        assert answer.closed
