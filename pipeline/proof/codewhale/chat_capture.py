"""A loopback OpenAI-compatible Chat Completions server that records what CodeWhale sends and
answers from a script: the judge's capture server, and the scripted model its fixtures were
written against.

`POST /v1/chat/completions` is recorded and answered with the next scripted `Reply` (streamed
as SSE chunks when the request asks to stream, else one JSON completion), or "ok" when the
script is spent; `GET /v1/models` lists the one model; anything else is recorded and answered
with an empty object. Loopback only: nothing leaves the machine.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any, Final

from pipeline.proof.loopback import LoopbackServer

__all__ = ["CHAT_PATH", "ChatCapture", "Reply", "ToolCall", "chat_requests"]

CHAT_PATH: Final = "/v1/chat/completions"
_DEFAULT_TEXT: Final = "ok"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call the scripted model makes."""

    call_id: str
    name: str
    arguments: str  # JSON text, as the API carries it


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted assistant turn: text, then the calls it makes (none: the turn ends)."""

    text: str = ""
    calls: tuple[ToolCall, ...] = ()
    status: int = 200  # a non-200 answers with an error instead (a failed request)


@dataclass(frozen=True, slots=True)
class Captured:
    """One request the client sent: its path and JSON body (None when not JSON)."""

    path: str
    body: Any


class ChatCapture(LoopbackServer):
    """Records every request; answers chat completions from `script`, in order."""

    thread_name = "codewhale-capture"

    def __init__(self, script: Sequence[Reply] = (), model: str = "capture-model") -> None:
        super().__init__()
        self.model = model
        self.script = tuple(script)
        self.captured: list[Captured] = []
        self._lock = threading.Lock()
        self._next = 0

    def handler(self) -> type[BaseHTTPRequestHandler]:
        return type("_BoundChatHandler", (_ChatHandler,), {"capture": self})

    def record(self, path: str, body: Any) -> Reply:
        """Keep one request; the reply it gets."""
        with self._lock:
            self.captured.append(Captured(path, body))
            if path != CHAT_PATH:
                return Reply()
            reply = self.script[self._next] if self._next < len(self.script) else Reply(_DEFAULT_TEXT)
            self._next += 1
            return reply


def chat_requests(captured: Iterable[Captured]) -> list[dict[str, Any]]:
    """The chat-completion request bodies, in the order they were sent."""
    return [c.body for c in captured if c.path == CHAT_PATH and isinstance(c.body, dict)]


def _chunk(
    model: str, delta: dict[str, Any], finish: str | None, usage: dict[str, int] | None = None
) -> bytes:
    body: dict[str, Any] = {
        "id": "chatcmpl-capture",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage is not None:
        body["usage"] = usage
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def _tool_calls(reply: Reply) -> list[dict[str, Any]]:
    return [
        {
            "index": i,
            "id": c.call_id,
            "type": "function",
            "function": {"name": c.name, "arguments": c.arguments},
        }
        for i, c in enumerate(reply.calls)
    ]


def _usage(body: dict[str, Any]) -> dict[str, int]:
    prompt = len(json.dumps(body.get("messages", []))) // 4
    return {"prompt_tokens": prompt, "completion_tokens": 1, "total_tokens": prompt + 1}


class _ChatHandler(BaseHTTPRequestHandler):
    capture: ChatCapture
    server_version = "CodewhaleCapture/1"

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: tests read what was captured, not stderr."""

    def do_GET(self) -> None:
        self.capture.record(self.path, None)
        models = {
            "object": "list",
            "data": [{"id": self.capture.model, "object": "model", "owned_by": "capture"}],
        }
        self._json(200, models if self.path.startswith("/v1/models") else {})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        path = self.path.split("?", 1)[0].rstrip("/")
        reply = self.capture.record(path, body)
        if path != CHAT_PATH:
            self._json(200, {})
        elif reply.status != 200:
            self._json(reply.status, {"error": {"message": "scripted failure", "type": "server_error"}})
        elif isinstance(body, dict) and body.get("stream"):
            self._stream(reply, body)
        else:
            self._json(200, self._completion(reply, body if isinstance(body, dict) else {}))

    def _completion(self, reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.calls:
            message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in _tool_calls(reply)]
        finish = "tool_calls" if reply.calls else "stop"
        return {
            "id": "chatcmpl-capture",
            "object": "chat.completion",
            "created": 0,
            "model": self.capture.model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": _usage(body),
        }

    def _stream(self, reply: Reply, body: dict[str, Any]) -> None:
        model = self.capture.model
        chunks = [_chunk(model, {"role": "assistant", "content": reply.text}, None)]
        if reply.calls:
            chunks.append(_chunk(model, {"tool_calls": _tool_calls(reply)}, None))
        chunks.append(_chunk(model, {}, "tool_calls" if reply.calls else "stop", _usage(body)))
        payload = b"".join(chunks) + b"data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
