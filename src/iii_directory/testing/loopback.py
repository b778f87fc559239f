"""What the loopback test servers share: a threaded HTTP server on 127.0.0.1 with a free port,
started on first use and closed with the test (`with` or `async with`), and a "hang" that holds
a request open until the server closes (at most `HANG_LIMIT_S`)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

HANG_LIMIT_S = 120.0


class LoopbackHTTPServer(ThreadingHTTPServer):
    """127.0.0.1 on a free port; request threads are daemons and closing never waits for them."""

    daemon_threads = True
    block_on_close = False
    # The stdlib default backlog of 5 drops connections when a worker under load opens dozens
    # at once (a search fans out up to 12 registry requests); dropped ones hang until timeout.
    request_queue_size = 1024


class QuietHandler(BaseHTTPRequestHandler):
    """HTTP/1.1, no access log; GET, POST, PUT and DELETE all go to `serve(method)`."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return

    def serve(self, method: str) -> None:
        raise NotImplementedError

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        self.serve("GET")

    def do_POST(self) -> None:  # noqa: N802
        self.serve("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self.serve("PUT")

    def do_DELETE(self) -> None:  # noqa: N802
        self.serve("DELETE")


class LoopbackService:
    """Start / close / context-manager lifecycle; subclasses build the server in `_serve`."""

    thread_name = "loopback"

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._server: ThreadingHTTPServer | None = None

    def _serve(self) -> ThreadingHTTPServer:
        raise NotImplementedError

    def _closed(self) -> None:
        """Clean-up after the server has stopped (nothing by default)."""

    def start(self) -> Self:
        if self._server is None:
            self._server = self._serve()
            threading.Thread(target=self._server.serve_forever, args=(0.05,),
                             name=self.thread_name, daemon=True).start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        self._closed()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self.start()

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    @property
    def port(self) -> int:
        """The listening port (starts the server when needed)."""
        server = self.start()._server
        assert server is not None
        return int(server.server_address[1])

    def _wait(self, seconds: float) -> None:
        """Sleep, cut short when the server closes."""
        self._stop.wait(seconds)

    def hang(self) -> None:
        """Hold the calling request thread until the server closes or `HANG_LIMIT_S` passes."""
        self._stop.wait(HANG_LIMIT_S)
