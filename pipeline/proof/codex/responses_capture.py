"""A loopback stand-in for the OpenAI Responses API that records what Codex sends.

Codex resumed against it sends the context it rebuilt from a rollout in one `POST /v1/responses`
(the `input` array) and gets a minimal valid streamed reply: `response.created`, one assistant
message, `response.completed`. `GET /v1/models` answers an empty list (Codex may refresh its model
catalogue); any other request an empty JSON object. Standard library only, so it ships with the
package::

    with ResponsesCaptureServer() as api:
        run_codex(base_url=api.base_url + "/v1")
        sent = api.inputs[-1]
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any, Final

from pipeline.proof.loopback import LoopbackServer

__all__ = ["RESPONSES_PATH", "ResponsesCaptureServer", "ResponsesRequest"]

RESPONSES_PATH: Final = "/v1/responses"
MODELS_PATH: Final = "/v1/models"
FAKE_RESPONSE_ID: Final = "resp_fake_0001"
FAKE_ITEM_ID: Final = "msg_fake_0001"
_EMPTY_USAGE: Final = {
    "input_tokens": 1,
    "input_tokens_details": None,
    "output_tokens": 1,
    "output_tokens_details": None,
    "total_tokens": 2,
}


@dataclass(frozen=True, slots=True)
class ResponsesRequest:
    """One request as received: method, path and, for a Responses call, its `input` items."""

    method: str
    path: str
    model: str | None
    input: tuple[Any, ...] | None  # None when the body had no `input` array

    @property
    def is_response(self) -> bool:
        """A Responses API call (`POST /v1/responses`)."""
        return self.method == "POST" and self.path.split("?", 1)[0].rstrip("/") == RESPONSES_PATH


def stream_events(text: str) -> list[dict[str, Any]]:
    """The events of a streamed reply holding one assistant message (what Codex needs to finish)."""
    message = {
        "type": "message",
        "role": "assistant",
        "id": FAKE_ITEM_ID,
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    return [
        {"type": "response.created", "response": {"id": FAKE_RESPONSE_ID}},
        {"type": "response.output_item.done", "output_index": 0, "item": message},
        {"type": "response.completed", "response": {"id": FAKE_RESPONSE_ID, "usage": _EMPTY_USAGE}},
    ]


class ResponsesCaptureServer(LoopbackServer):
    """A context manager running the server; `.base_url`, `.requests` and `.inputs` while it runs."""

    thread_name = "responses-capture-server"
    poll_seconds = 0.05

    def __init__(self, *, reply_text: str = "ok") -> None:
        self.reply_text = reply_text
        self._requests: list[ResponsesRequest] = []
        self._lock = threading.Lock()
        super().__init__()

    def handler(self) -> type[BaseHTTPRequestHandler]:
        """Requests are recorded and answered with this server's reply text."""
        return type("Handler", (_ResponsesHandler,), {"fake": self})

    @property
    def requests(self) -> tuple[ResponsesRequest, ...]:
        """Every request received so far, in arrival order."""
        with self._lock:
            return tuple(self._requests)

    @property
    def inputs(self) -> tuple[tuple[Any, ...], ...]:
        """The `input` array of every Responses call, in arrival order."""
        return tuple(r.input for r in self.requests if r.is_response and r.input is not None)

    def _record(self, request: ResponsesRequest) -> None:
        with self._lock:
            self._requests.append(request)


def _read_body(raw: bytes) -> tuple[str | None, tuple[Any, ...] | None]:
    """The model and `input` items of a JSON body; (None, None) for anything else."""
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        return None, None
    if not isinstance(body, dict):
        return None, None
    model = body.get("model") if isinstance(body.get("model"), str) else None
    items = body.get("input")
    return model, tuple(items) if isinstance(items, list) else None


class _ResponsesHandler(BaseHTTPRequestHandler):
    """Answers the Responses API for one `ResponsesCaptureServer` (bound as `fake`)."""

    fake: ResponsesCaptureServer
    server_version = "ResponsesCaptureServer/1"

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: tests read `.requests`, not stderr."""

    def do_GET(self) -> None:
        self.fake._record(ResponsesRequest("GET", self.path, None, None))
        listing = {"object": "list", "data": [], "models": []}
        self._json(200, listing if self.path.startswith(MODELS_PATH) else {})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        model, items = _read_body(raw)
        request = ResponsesRequest("POST", self.path, model, items)
        self.fake._record(request)
        if not request.is_response:
            self._json(200, {})
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        for event in stream_events(self.fake.reply_text):
            self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
        self.wfile.flush()
        self.close_connection = True  # the stream ends with the body: no content-length to frame it

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
