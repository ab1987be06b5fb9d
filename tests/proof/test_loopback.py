"""The loopback server base: serves a subclass's handler on 127.0.0.1, starts once, stops cleanly."""

from __future__ import annotations

import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler

import pytest

from pipeline.proof.loopback import LoopbackServer


class _Hello(LoopbackServer):
    def handler(self) -> type[BaseHTTPRequestHandler]:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("content-length", "5")
                self.end_headers()
                self.wfile.write(b"hello")

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


def test_it_serves_on_loopback_until_stopped() -> None:
    server = _Hello()
    with pytest.raises(RuntimeError, match="_Hello is not running"):
        _ = server.base_url
    with server:
        url = server.base_url
        assert url.startswith("http://127.0.0.1:")
        assert server.start().base_url == url  # starting twice serves once
        with urllib.request.urlopen(url, timeout=5) as reply:
            assert reply.read() == b"hello"
    with pytest.raises(RuntimeError):
        _ = server.base_url
    with pytest.raises(urllib.error.URLError, match="refused"):
        urllib.request.urlopen(url, timeout=2)
