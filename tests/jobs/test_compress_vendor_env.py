"""A model run configured the way the vendors' SDKs are: only by environment variables.

`ANTHROPIC_BASE_URL`/`OPENAI_BASE_URL` and the key variables point the real command line at the
local provider server; `HTTP_PROXY`/`NO_PROXY` send its calls through a loopback forward proxy
(or around it), as httpx's environment trust does for `HTTPS_PROXY` on a vendor's https endpoint.
"""

from __future__ import annotations

import http.client
import json
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


def _session(root: Path) -> None:
    path = root / "project" / "s0.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    build_session(path, turns=6, seed=0)


def _run(
    root: Path, out: Path, provider: str, env: dict[str, str], model: str = "local-model", *extra: str
) -> list[dict[str, Any]]:
    config = out.parent / f"{out.name}.toml"
    config.write_text("[model_summary]\nbackoff_initial_seconds = 0.01\nmax_attempts = 2\n")
    done = compaction(
        "compress", str(root), "--out", str(out), "--min-tokens", "0", "--summarizer", provider,
        "--model", model, "--config", str(config), "--quiet", "--no-verify-resume", *extra,
        env=env, unset=PROXY_VARIABLES + ENDPOINT_VARIABLES,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
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
