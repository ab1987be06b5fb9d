"""An HTTP server on 127.0.0.1 at an ephemeral port, served from a daemon thread.

The base of the capture server Claude Code resumes against and of the tests' model provider:
a context manager with `start`, `stop` and `base_url`; a subclass says how requests are handled.
"""

from __future__ import annotations

import functools
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Final, Self

__all__ = ["LoopbackServer"]

_SHUTDOWN_SECONDS: Final = 5.0


class _Server(ThreadingHTTPServer):
    """Request threads never block shutdown; a client hanging up mid-reply is not an error."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class LoopbackServer:
    """Serves `handler()` until stopped; what a subclass recorded stays readable after."""

    thread_name = "loopback-server"
    poll_seconds = 0.5  # how soon `stop()` is noticed

    def __init__(self) -> None:
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def handler(self) -> type[BaseHTTPRequestHandler]:
        """The request handler class bound to this server's state."""
        raise NotImplementedError

    def start(self) -> Self:
        """Bind 127.0.0.1 on an ephemeral port and serve from a daemon thread."""
        if self._server is None:
            self._server = _Server(("127.0.0.1", 0), self.handler())
            serve = functools.partial(self._server.serve_forever, poll_interval=self.poll_seconds)
            self._thread = threading.Thread(target=serve, name=self.thread_name, daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is not None:
            server.shutdown()
            server.server_close()
        if thread is not None:
            thread.join(_SHUTDOWN_SECONDS)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>`."""
        if self._server is None:
            raise RuntimeError(f"{type(self).__name__} is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"
