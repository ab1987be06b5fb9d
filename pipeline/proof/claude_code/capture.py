"""The capture server: a loopback stand-in for the Anthropic Messages API that records requests.

Claude Code resumed against it sends the context it rebuilt and gets a minimal valid reply, so
no real API call is ever made. `CaptureServer` serves HTTP on 127.0.0.1 at an ephemeral port
from a background thread, records every request, and answers `POST /v1/messages` with a minimal
valid reply (server-sent events when the request asks for `stream`, one JSON document
otherwise). `POST /v1/messages/count_tokens` gets a token count, any other path an empty JSON
object. A message request that breaks the Messages API's tool-pairing rules (`api_rules`) is
answered as the API answers it: HTTP 400, its error envelope and its own sentence (the request is
recorded first, with the violations, so a caller still reads what was sent). Queued `Fault`s
replace the next message replies: HTTP 429 with `retry-after`, 500, 529, or a reply held back for
a while. A body over the API's request size limit (32 MB) is answered 413 `request_too_large`, as
the API answers it, and recorded without its body: Claude Code then trims or compacts what it
sends, as it would for a real user, and a giant session's context is never held here. Standard
library only, so it ships with the package::

    with CaptureServer(faults=[Fault.rate_limited(retry_after=0)]) as api:
        run_client(base_url=api.base_url)
        body = api.message_requests[-1].body
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler
from typing import Any, Final

from pipeline.proof.claude_code.api_rules import ApiViolation, api_violations, error_envelope
from pipeline.proof.loopback import LoopbackServer

__all__ = ["MAX_REQUEST_BYTES", "CaptureServer", "Fault", "RecordedRequest"]

MESSAGES_PATH: Final = "/v1/messages"
COUNT_TOKENS_PATH: Final = "/v1/messages/count_tokens"
FAKE_MESSAGE_ID: Final = "msg_fake_0001"
FAKE_REQUEST_ID: Final = "req_fake"
# The Messages API refuses larger request bodies (documented as 32 MB; taken as MiB) with a 413.
MAX_REQUEST_BYTES: Final = 32 * 1024 * 1024
_DRAIN_CHUNK: Final = 1 << 20  # an oversized body is read and dropped this much at a time
TOO_LARGE: Final = "Request exceeds the maximum allowed number of bytes. The maximum request size is 32 MB."
# Error types of the API's error envelope, by status (what clients key their retry logic on).
_ERROR_TYPES: Final = {
    400: "invalid_request_error",
    401: "authentication_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass(frozen=True, slots=True)
class Fault:
    """One injected deviation for the next message request: an error status, a delay, or both.

    `status` 200 with a `delay` is a slow but valid reply; any other status answers with the API's
    error envelope (and `retry-after` when given) after the delay.
    """

    status: int = 200
    delay: float = 0.0
    retry_after: float | None = None

    @classmethod
    def rate_limited(cls, retry_after: float = 0.0) -> Fault:
        """HTTP 429 with a `retry-after` header (seconds)."""
        return cls(status=429, retry_after=retry_after)

    @classmethod
    def server_error(cls) -> Fault:
        """HTTP 500, an `api_error`."""
        return cls(status=500)

    @classmethod
    def overloaded(cls) -> Fault:
        """HTTP 529, an `overloaded_error`."""
        return cls(status=529)

    @classmethod
    def slow(cls, seconds: float) -> Fault:
        """A valid reply held back for `seconds`."""
        return cls(delay=seconds)


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request as received: method, path (with query), headers, raw body and parsed JSON body."""

    method: str
    path: str
    headers: tuple[tuple[str, str], ...]
    raw: bytes
    body: Any = field(default=None)
    fault: Fault | None = None
    rejected: tuple[ApiViolation, ...] = ()  # the API rules it breaks, when answered with a 400

    @property
    def is_message(self) -> bool:
        """A Messages API call (`POST /v1/messages`, not `count_tokens`)."""
        route = self.path.split("?", 1)[0].rstrip("/")
        return self.method == "POST" and route == MESSAGES_PATH

    def header(self, name: str) -> str | None:
        """The first value of a header, case-insensitively."""
        wanted = name.lower()
        return next((value for key, value in self.headers if key.lower() == wanted), None)


class CaptureServer(LoopbackServer):
    """A context manager running the server; `.base_url` and `.requests` while it runs."""

    thread_name = "capture-server"
    poll_seconds = 0.05

    def __init__(
        self,
        *,
        reply_text: str = "ok",
        faults: Iterable[Fault] = (),
        keep: Callable[[Any], bool] | None = None,
        api_rules: bool = True,
    ) -> None:
        self.reply_text = reply_text
        self.api_rules = api_rules  # answer a request breaking the API's rules with its 400
        # Which bodies are kept (None: all, raw and parsed). A resume reads two of a dozen requests,
        # each up to the size limit, parsed: those `keep` accepts (its probe's), and the message
        # call with the most messages (a compaction's, the first of equals); the others are
        # recorded without their body once answered, and no raw body is kept.
        self.keep = keep
        self._largest: tuple[int, int] | None = None  # (messages, index) of the largest call kept
        self._faults: deque[Fault] = deque(faults)
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        super().__init__()

    def handler(self) -> type[BaseHTTPRequestHandler]:
        """Requests are recorded and answered from this server's faults and reply text."""
        return _handler_for(self)

    # inspection and control ----------------------------------------------------------------
    @property
    def requests(self) -> tuple[RecordedRequest, ...]:
        """Every request received so far, in arrival order."""
        with self._lock:
            return tuple(self._requests)

    @property
    def message_requests(self) -> tuple[RecordedRequest, ...]:
        """The Messages API calls among `requests`."""
        return tuple(request for request in self.requests if request.is_message)

    def inject(self, *faults: Fault) -> None:
        """Queue faults for the next message requests, one each, after those already queued."""
        with self._lock:
            self._faults.extend(faults)

    # used by the handler -------------------------------------------------------------------
    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            if self.keep is not None:
                request = self._kept(request)
            self._requests.append(request)

    def _kept(self, request: RecordedRequest) -> RecordedRequest:
        """The request, or a body-less copy when neither `keep` nor the largest call needs it."""
        body = request.body
        accepted = self.keep is not None and self.keep(body)
        size = len(body.get("messages") or ()) if request.is_message and isinstance(body, dict) else -1
        request = replace(request, raw=b"")  # a reader of parsed bodies: the raw copy is not kept
        if size >= 0 and (self._largest is None or size > self._largest[0]):
            if self._largest is not None:
                self._drop(self._largest[1])
            self._largest = (size, len(self._requests))
            return request
        return request if accepted else replace(request, body=None)

    def _drop(self, at: int) -> None:
        """Let go of a largest call a larger one replaced, unless `keep` wants it."""
        request = self._requests[at]
        if self.keep is not None and not self.keep(request.body):
            self._requests[at] = replace(request, body=None)

    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self._faults.popleft() if self._faults else None


def _message(model: str, content: list[dict[str, Any]], stop_reason: str | None) -> dict[str, Any]:
    return {
        "id": FAKE_MESSAGE_ID,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def _stream_events(model: str, text: str) -> list[tuple[str, dict[str, Any]]]:
    """The event sequence of a one-text-block streamed reply."""
    return [
        ("message_start", {"type": "message_start", "message": _message(model, [], None)}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 1},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]


class _CaptureHandler(BaseHTTPRequestHandler):
    """Answers the Messages API for one `CaptureServer` (bound as `fake` by `_handler_for`)."""

    fake: CaptureServer
    server_version = "CaptureServer/1"

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: tests read `.requests`, not stderr."""

    def do_GET(self) -> None:
        self._record(b"", None)
        self._json(200, {"data": [], "has_more": False} if self.path.startswith("/v1/models") else {})

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.end_headers()

    def do_POST(self) -> None:
        size = int(self.headers.get("content-length") or 0)
        if size > MAX_REQUEST_BYTES:
            self._drain(size)
            self._record(b"", None)
            self._json(413, {"type": "error", "error": {"type": _ERROR_TYPES[413], "message": TOO_LARGE}})
            return
        raw = self.rfile.read(size)
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        route = self.path.split("?", 1)[0].rstrip("/")
        fault = self.fake._next_fault() if route == MESSAGES_PATH else None
        rejected = self._violations(body) if route == MESSAGES_PATH else ()
        self._record(raw, body, fault, rejected)
        if route == COUNT_TOKENS_PATH:
            self._json(200, {"input_tokens": 10})
        elif route != MESSAGES_PATH:
            self._json(200, {})
        else:
            self._reply(body if isinstance(body, dict) else {}, fault, rejected)

    def _violations(self, body: Any) -> tuple[ApiViolation, ...]:
        if (
            not self.fake.api_rules
            or not isinstance(body, dict)
            or not isinstance(body.get("messages"), list)
        ):
            return ()
        return api_violations(body["messages"])

    def _drain(self, size: int) -> None:
        """Read a body without keeping it, so the connection stays usable for the next request."""
        while size > 0:
            chunk = self.rfile.read(min(size, _DRAIN_CHUNK))
            if not chunk:
                return
            size -= len(chunk)

    def _record(
        self, raw: bytes, body: Any, fault: Fault | None = None, rejected: tuple[ApiViolation, ...] = ()
    ) -> None:
        headers = tuple(self.headers.items())
        self.fake._record(RecordedRequest(self.command, self.path, headers, raw, body, fault, rejected))

    def _reply(self, body: dict[str, Any], fault: Fault | None, rejected: tuple[ApiViolation, ...]) -> None:
        if fault is not None and fault.delay > 0:
            time.sleep(fault.delay)
        if fault is not None and fault.status != 200:
            kind = _ERROR_TYPES.get(fault.status, "api_error")
            extra = {} if fault.retry_after is None else {"retry-after": f"{fault.retry_after:g}"}
            error = {"type": "error", "error": {"type": kind, "message": f"fake {kind}"}}
            self._json(fault.status, error, extra)
            return
        if rejected:  # the API answers the first rule a request breaks
            self._json(400, error_envelope(rejected[0], FAKE_REQUEST_ID))
            return
        model = str(body.get("model") or "claude-fake")
        if body.get("stream"):
            self._stream(model)
        else:
            self._json(200, _message(model, [{"type": "text", "text": self.fake.reply_text}], "end_turn"))

    def _stream(self, model: str) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        for event, data in _stream_events(model, self.fake.reply_text):
            self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", FAKE_REQUEST_ID)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def _handler_for(fake: CaptureServer) -> type[BaseHTTPRequestHandler]:
    """A handler class bound to one fake (the server instantiates it per request)."""
    return type("Handler", (_CaptureHandler,), {"fake": fake})
