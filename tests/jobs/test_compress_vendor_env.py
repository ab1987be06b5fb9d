"""A model run configured the way the vendors' SDKs are: only by environment variables.

`ANTHROPIC_BASE_URL`/`OPENAI_BASE_URL` and the key variables point the real command line at the
local provider server; `HTTP_PROXY`/`NO_PROXY` send its calls through a loopback forward proxy
(or around it). The server also speaks TLS with a self-signed certificate: it is reached only when
`SSL_CERT_FILE` names that certificate, and through `HTTPS_PROXY` by a `CONNECT` tunnel.
"""

from __future__ import annotations

import http.client
import json
import select
import socket
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from pipeline.proof.loopback import LoopbackServer
from pipeline.testing.invoke import compaction, reports
from pipeline.testing.provider_server import ProviderServer
from pipeline.testing.sessions import build_session
from tests.support.loopback_cert import loopback_tls

PROXY_VARIABLES = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
)
ENDPOINT_VARIABLES = ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY")


class ForwardProxy(LoopbackServer):
    """An HTTP forward proxy on loopback: relays absolute-URI requests and counts them."""

    thread_name = "forward-proxy"
    poll_seconds = 0.02

    def __init__(self) -> None:
        self.relayed: list[str] = []
        self._lock = threading.Lock()
        super().__init__()

    def handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Relay(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                target = urlsplit(self.path)  # a forward proxy is sent the absolute URI
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                with proxy._lock:
                    proxy.relayed.append(target.path)
                headers = {
                    k: v
                    for k, v in self.headers.items()
                    if k.lower() not in ("proxy-connection", "connection")
                }
                upstream = http.client.HTTPConnection(target.hostname or "", target.port or 80, timeout=30)
                upstream.request(
                    "POST", target.path + (f"?{target.query}" if target.query else ""), body, headers
                )
                answer = upstream.getresponse()
                data = answer.read()
                self.send_response(answer.status)
                for name, value in answer.getheaders():
                    if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(name, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                upstream.close()

        return Relay


class TunnelProxy(LoopbackServer):
    """An HTTP proxy on loopback that tunnels `CONNECT host:port` (how a client reaches an https
    endpoint through `HTTPS_PROXY`), recording each tunnel's target; it never sees the plaintext."""

    thread_name = "tunnel-proxy"
    poll_seconds = 0.02

    def __init__(self) -> None:
        self.tunnels: list[str] = []
        self._lock = threading.Lock()
        super().__init__()

    def handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Tunnel(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_CONNECT(self) -> None:
                host, _, port = self.path.rpartition(":")
                with proxy._lock:
                    proxy.tunnels.append(self.path)
                upstream = socket.create_connection((host, int(port)), timeout=30)
                self.send_response(200, "Connection established")
                self.end_headers()
                self.wfile.flush()
                _relay(self.connection, upstream)
                upstream.close()
                self.close_connection = True

        return Tunnel


def _relay(client: socket.socket, upstream: socket.socket) -> None:
    """Copy bytes both ways until either side closes."""
    pair = {client: upstream, upstream: client}
    while True:
        ready, _, _ = select.select(list(pair), [], [], 30)
        if not ready:
            return
        for side in ready:
            data = side.recv(65536)
            if not data:
                return
            pair[side].sendall(data)


def _session(root: Path) -> None:
    path = root / "project" / "s0.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    build_session(path, turns=6, seed=0)


def _run(
    root: Path,
    out: Path,
    provider: str,
    env: dict[str, str],
    model: str = "local-model",
    *extra: str,
    unset: tuple[str, ...] = (),
) -> list[dict[str, Any]]:
    config = out.parent / f"{out.name}.toml"
    config.write_text("[model_summary]\nbackoff_initial_seconds = 0.01\nmax_attempts = 2\n")
    done = compaction(
        "compress", str(root), "--out", str(out), "--min-tokens", "0", "--summarizer", provider,
        "--model", model, "--config", str(config), "--quiet", "--no-verify-resume", *extra,
        env=env, unset=PROXY_VARIABLES + ENDPOINT_VARIABLES + unset,
    )  # fmt: skip
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr[-2000:]
    return list(reports(out))


@pytest.mark.parametrize(
    ("provider", "variables"),
    [
        ("anthropic", {"ANTHROPIC_BASE_URL": "{url}", "ANTHROPIC_API_KEY": "local-key"}),
        ("openai", {"OPENAI_BASE_URL": "{url}/v1", "OPENAI_API_KEY": "local-key"}),
    ],
)
def test_a_run_configured_only_by_the_vendor_variables_reaches_the_local_server(
    tmp_path: Path, provider: str, variables: dict[str, str]
) -> None:
    _session(tmp_path / "root")
    with ProviderServer() as server:
        env = {name: value.replace("{url}", server.base_url) for name, value in variables.items()}
        found = _run(tmp_path / "root", tmp_path / "out", provider, env)
        calls = len(server.requests)
    assert calls >= 1 and [r["status"] for r in found] == ["compressed"]
    assert found[0]["summary"]["writer"]["provider"] == provider


def test_calls_go_through_the_environment_proxy_unless_no_proxy_names_the_host(tmp_path: Path) -> None:
    _session(tmp_path / "root")
    with ProviderServer() as server, ForwardProxy() as proxy:
        env = {"OPENAI_BASE_URL": server.base_url + "/v1", "HTTP_PROXY": proxy.base_url}
        found = _run(tmp_path / "root", tmp_path / "proxied", "openai", env)
        through = len(proxy.relayed)
        served = len(server.requests)
        _run(tmp_path / "root", tmp_path / "direct", "openai", {**env, "NO_PROXY": "127.0.0.1"})
        after = len(proxy.relayed)
        served_after = len(server.requests)
    assert [r["status"] for r in found] == ["compressed"]
    assert through == served >= 1 and all(path.endswith("/chat/completions") for path in proxy.relayed)
    assert after == through and served_after > served  # NO_PROXY: straight to the server


@pytest.mark.parametrize(
    ("provider", "variables"),
    [
        ("anthropic", {"ANTHROPIC_BASE_URL": "{url}", "ANTHROPIC_API_KEY": "local-key"}),
        ("openai", {"OPENAI_BASE_URL": "{url}/v1", "OPENAI_API_KEY": "local-key"}),
    ],
)
@pytest.mark.parametrize("in_place", [False, True])
def test_a_model_that_does_not_exist_stops_the_run_up_front_in_one_line(
    tmp_path: Path, provider: str, variables: dict[str, str], in_place: bool
) -> None:
    _session(tmp_path / "root")
    before = (tmp_path / "root" / "project" / "s0.jsonl").read_bytes()
    where = (
        ["--in-place", "--state-dir", str(tmp_path / "state")]
        if in_place
        else ["--out", str(tmp_path / "out")]
    )
    with ProviderServer(models=("served-model", "other-model")) as server:
        env = {name: value.replace("{url}", server.base_url) for name, value in variables.items()}
        done = compaction(
            "compress", str(tmp_path / "root"), *where, "--min-tokens", "0", "--summarizer", provider,
            "--model", "no-such-model", "--quiet", "--no-verify-resume", "--idle-for", "0",
            env=env, unset=PROXY_VARIABLES + ENDPOINT_VARIABLES,
        )  # fmt: skip
        calls = len(server.requests)
        found = _run(tmp_path / "root", tmp_path / "served", provider, env, model="served-model")
    assert done.returncode == 2 and "no-such-model" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and calls == 0
    assert (
        not (tmp_path / "out").exists()
        and (tmp_path / "root" / "project" / "s0.jsonl").read_bytes() == before
    )
    assert [r["status"] for r in found] == ["compressed"]  # a served model passes the same check


def test_the_window_flags_bound_every_request(tmp_path: Path) -> None:
    _session(tmp_path / "root")
    with ProviderServer() as server:
        env = {"OPENAI_BASE_URL": server.base_url + "/v1"}
        _run(tmp_path / "root", tmp_path / "wide", "openai", env)
        wide = len(server.requests)
        found = _run(
            tmp_path / "root", tmp_path / "narrow", "openai", env, "local-model",
            "--model-context-window", "4000", "--model-max-output", "700",
        )  # fmt: skip
        narrow = server.requests[wide:]
    sent = [json.loads(request.raw) for request in narrow]
    assert [r["status"] for r in found] == ["compressed"]
    assert narrow and wide
    assert all(body["max_tokens"] == 700 for body in sent)
    assert max(request.input_tokens for request in narrow) <= 4000 - 700


@pytest.mark.parametrize(
    ("provider", "variables"),
    [
        ("anthropic", {"ANTHROPIC_BASE_URL": "{url}", "ANTHROPIC_API_KEY": "local-key"}),
        ("openai", {"OPENAI_BASE_URL": "{url}/v1", "OPENAI_API_KEY": "local-key"}),
    ],
)
def test_an_https_endpoint_with_a_private_ca_is_reached_only_when_ssl_cert_file_names_it(
    tmp_path: Path, provider: str, variables: dict[str, str]
) -> None:
    pytest.importorskip("cryptography")
    _session(tmp_path / "root")
    cert, context = loopback_tls(tmp_path / "tls")
    with ProviderServer(tls=context) as server:
        env = {name: value.replace("{url}", server.base_url) for name, value in variables.items()}
        untrusted = _run(
            tmp_path / "root", tmp_path / "untrusted", provider, env, unset=("SSL_CERT_FILE", "SSL_CERT_DIR")
        )
        refused_calls = len(server.requests)
        trusted = _run(tmp_path / "root", tmp_path / "trusted", provider, {**env, "SSL_CERT_FILE": str(cert)})
        calls = len(server.requests)
        assert server.base_url.startswith("https://127.0.0.1:")
    # without the CA no handshake completes: no request arrives, the session is refused, not crashed
    assert refused_calls == 0 and [r["status"] for r in untrusted] == ["refused"]
    assert untrusted[0]["reasons"] == ["summary-provider-failure"]
    assert calls >= 1 and [r["status"] for r in trusted] == ["compressed"]


def test_an_https_endpoint_is_reached_through_https_proxy_unless_no_proxy_names_the_host(
    tmp_path: Path,
) -> None:
    pytest.importorskip("cryptography")
    _session(tmp_path / "root")
    cert, context = loopback_tls(tmp_path / "tls")
    with ProviderServer(tls=context) as server, TunnelProxy() as proxy:
        target = server.base_url.removeprefix("https://")
        env = {
            "OPENAI_BASE_URL": server.base_url + "/v1",
            "SSL_CERT_FILE": str(cert),
            "HTTPS_PROXY": proxy.base_url,
        }
        found = _run(tmp_path / "root", tmp_path / "proxied", "openai", env)
        tunnels, served = list(proxy.tunnels), len(server.requests)
        direct = _run(tmp_path / "root", tmp_path / "direct", "openai", {**env, "NO_PROXY": "127.0.0.1"})
        after, served_after = list(proxy.tunnels), len(server.requests)
    assert [r["status"] for r in found] == ["compressed"] and [r["status"] for r in direct] == ["compressed"]
    assert served >= 1 and tunnels and set(tunnels) == {target}  # every connection went through the proxy
    assert after == tunnels and served_after > served  # NO_PROXY: straight to the server
