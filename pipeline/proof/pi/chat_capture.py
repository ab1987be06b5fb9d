"""A loopback stand-in for an OpenAI-compatible Chat Completions API that records what pi sends.

pi (`api: "openai-completions"` in its `models.json`) resumed against it sends the context it
rebuilt from a session in one `POST /v1/chat/completions` (the `messages` array) and reads a
streamed reply. Each reply is chosen by `script` from the request (default: one assistant text),
so the same server also plays the scripted model that makes pi write real sessions: text, tool
calls, or an HTTP error. Standard library only, so it ships with the package::

    with ChatCaptureServer() as api:
        run_pi(base_url=api.base_url + "/v1")
        sent = api.conversations[-1]
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Final

from pipeline.proof.loopback import LoopbackServer

__all__ = ["CHAT_PATH", "ChatCaptureServer", "ChatReply", "ChatRequest", "ToolCall"]

CHAT_PATH: Final = "/v1/chat/completions"
_FAKE_ID: Final = "chatcmpl-fake"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call the scripted model makes: its id, tool name and JSON arguments."""

    call_id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ChatReply:
    """What the model answers to one request: text, tool calls, or an HTTP error status."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    error_status: int | None = None
    prompt_tokens: int = 1
    completion_tokens: int = 1


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One request as received: method, path and, for a chat call, its body's model and messages."""

    method: str
    path: str
    model: str | None
    messages: tuple[Any, ...] | None  # None when the body had no `messages` array
    body: Any = field(default=None, compare=False)

    @property
    def is_chat(self) -> bool:
        """A Chat Completions call (`POST /v1/chat/completions`)."""
        return self.method == "POST" and self.path.split("?", 1)[0].rstrip("/") == CHAT_PATH


Script = Callable[[ChatRequest], ChatReply]


def _text_reply(text: str) -> Script:
    return lambda request: ChatReply(text=text)


def stream_chunks(reply: ChatReply, model: str) -> list[dict[str, Any]]:
    """The `chat.completion.chunk` events of one streamed reply, usage on the last."""
    base = {"id": _FAKE_ID, "object": "chat.completion.chunk", "created": 0, "model": model}
    delta: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        delta["tool_calls"] = [
            {
                "index": index,
                "id": call.call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for index, call in enumerate(reply.tool_calls)
        ]
    finish = "tool_calls" if reply.tool_calls else "stop"
    usage = {
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "total_tokens": reply.prompt_tokens + reply.completion_tokens,
    }
    return [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
        {**base, "choices": [], "usage": usage},
    ]


class ChatCaptureServer(LoopbackServer):
    """A context manager running the server; `.base_url`, `.requests`, `.conversations` while it runs."""

    thread_name = "chat-capture-server"
    poll_seconds = 0.05

    def __init__(self, *, script: Script | None = None, reply_text: str = "ok") -> None:
        self.script = script or _text_reply(reply_text)
        self._requests: list[ChatRequest] = []
        self._lock = threading.Lock()
        super().__init__()

    def handler(self) -> type[BaseHTTPRequestHandler]:
        """Requests are recorded and answered by this server's script."""
        return type("Handler", (_ChatHandler,), {"fake": self})

    @property
    def requests(self) -> tuple[ChatRequest, ...]:
        """Every request received so far, in arrival order."""
        with self._lock:
            return tuple(self._requests)

    @property
    def conversations(self) -> tuple[tuple[Any, ...], ...]:
        """The `messages` array of every chat call, in arrival order."""
        return tuple(r.messages for r in self.requests if r.is_chat and r.messages is not None)

    def _record(self, request: ChatRequest) -> None:
        with self._lock:
            self._requests.append(request)


def _read_body(raw: bytes) -> tuple[Any, str | None, tuple[Any, ...] | None]:
    """The body, model and `messages` of a JSON body; (None, None, None) for anything else."""
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        return None, None, None
    if not isinstance(body, dict):
        return None, None, None
    model = body.get("model") if isinstance(body.get("model"), str) else None
    messages = body.get("messages")
    return body, model, tuple(messages) if isinstance(messages, list) else None


class _ChatHandler(BaseHTTPRequestHandler):
    """Answers Chat Completions for one `ChatCaptureServer` (bound as `fake`)."""

    fake: ChatCaptureServer
    server_version = "ChatCaptureServer/1"

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: tests read `.requests`, not stderr."""

    def do_GET(self) -> None:
        self.fake._record(ChatRequest("GET", self.path, None, None))
        self._json(200, {"object": "list", "data": []})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        body, model, messages = _read_body(raw)
        request = ChatRequest("POST", self.path, model, messages, body)
        self.fake._record(request)
        if not request.is_chat:
            self._json(200, {})
            return
        reply = self.fake.script(request)
        if reply.error_status is not None:
            self._json(reply.error_status, {"error": {"message": reply.text or "scripted failure"}})
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        for chunk in stream_chunks(reply, model or "fake-model"):
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True  # the stream ends with the body: no content-length to frame it

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
