"""A loopback stand-in for an OpenAI-compatible Chat Completions API that records what is sent.

Qwen Code resumed against it sends the history it rebuilt from a session in one
`POST /v1/chat/completions` (the `messages` array). Each call is answered by a `Reply` chosen by
the server's `script` (a function of the request's number and body): assistant text, tool calls,
or both, streamed as chunks when the request asks for a stream, with a usage figure of characters
/ 4. The default script answers every call with the text `ok`, which is all a judge needs; tests
script tool calls to make an agent write real sessions. `GET .../models` answers an empty list.
Standard library only, so it ships with the package::

    with ChatCaptureServer() as api:
        run_qwen(base_url=api.base_url + "/v1")
        sent = api.conversations[0]
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Final

from pipeline.proof.loopback import LoopbackServer

__all__ = ["COMPLETIONS_ROUTE", "ChatCaptureServer", "ChatRequest", "Reply", "ReplyScript", "ToolCall"]

COMPLETIONS_ROUTE: Final = "/chat/completions"
_CHARS_PER_TOKEN: Final = 4  # the usage figure is a rough size, as a real server reports one


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call the model asks for: its name and JSON arguments."""

    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Reply:
    """One assistant answer: reasoning, text, tool calls (streamed in that order)."""

    text: str = ""
    calls: tuple[ToolCall, ...] = ()
    reasoning: str = ""  # sent as `reasoning_content`, as OpenAI-compatible reasoning models do


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One request as received: method, path and, for a completions call, its body."""

    method: str
    path: str
    body: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_completion(self) -> bool:
        """A Chat Completions call (`POST .../chat/completions`)."""
        return self.method == "POST" and self.path.split("?", 1)[0].rstrip("/").endswith(COMPLETIONS_ROUTE)

    @property
    def messages(self) -> tuple[Any, ...]:
        """The `messages` array of the body; empty when it has none."""
        messages = self.body.get("messages")
        return tuple(messages) if isinstance(messages, list) else ()


ReplyScript = Callable[[int, ChatRequest], Reply]
"""Chooses the reply to the `n`th completions call (0-based) from its request."""


def _always_ok(_number: int, _request: ChatRequest) -> Reply:
    return Reply("ok")


class ChatCaptureServer(LoopbackServer):
    """A context manager running the server; `.base_url`, `.requests` and `.conversations`."""

    thread_name = "chat-capture-server"
    poll_seconds = 0.05

    def __init__(self, script: ReplyScript = _always_ok) -> None:
        self.script = script
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
        """The `messages` of every completions call, in arrival order."""
        return tuple(r.messages for r in self.requests if r.is_completion)

    def _record(self, request: ChatRequest) -> int:
        """Record a request; its 0-based number among the completions calls."""
        with self._lock:
            self._requests.append(request)
            return sum(1 for r in self._requests if r.is_completion) - 1


def _tool_call_deltas(calls: tuple[ToolCall, ...], number: int) -> list[dict[str, Any]]:
    return [
        {
            "index": index,
            "id": f"call_{number}_{index}",
            "type": "function",
            "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
        }
        for index, call in enumerate(calls)
    ]


def _usage(request: ChatRequest, reply: Reply) -> dict[str, int]:
    prompt = len(json.dumps(request.messages)) // _CHARS_PER_TOKEN + 1
    completion = (
        len(reply.text) + len(json.dumps([c.arguments for c in reply.calls]))
    ) // _CHARS_PER_TOKEN + 1
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _completion(request: ChatRequest, reply: Reply, number: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    if reply.calls:
        message["tool_calls"] = _tool_call_deltas(reply.calls, number)
    finish = "tool_calls" if reply.calls else "stop"
    return {
        "id": f"chatcmpl-loopback-{number}",
        "object": "chat.completion",
        "created": 0,
        "model": request.body.get("model", "fake-model"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": _usage(request, reply),
    }


def _chunks(request: ChatRequest, reply: Reply, number: int) -> list[dict[str, Any]]:
    base = {"id": f"chatcmpl-loopback-{number}", "object": "chat.completion.chunk", "created": 0}
    base["model"] = request.body.get("model", "fake-model")
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    if reply.reasoning:
        deltas.append({"reasoning_content": reply.reasoning})
    if reply.text:
        deltas.append({"content": reply.text})
    if reply.calls:
        deltas.append({"tool_calls": _tool_call_deltas(reply.calls, number)})
    chunks = [{**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]} for delta in deltas]
    finish = "tool_calls" if reply.calls else "stop"
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    chunks.append({**base, "choices": [], "usage": _usage(request, reply)})
    return chunks


def _json_body(raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


class _ChatHandler(BaseHTTPRequestHandler):
    """Answers Chat Completions for one `ChatCaptureServer` (bound as `fake`)."""

    fake: ChatCaptureServer
    server_version = "ChatCaptureServer/1"

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: tests read `.requests`, not stderr."""

    def do_GET(self) -> None:
        self.fake._record(ChatRequest("GET", self.path))
        self._json(200, {"object": "list", "data": []} if "/models" in self.path else {})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        request = ChatRequest("POST", self.path, _json_body(raw))
        number = self.fake._record(request)
        if not request.is_completion:
            self._json(200, {})
            return
        reply = self.fake.script(number, request)
        if not request.body.get("stream"):
            self._json(200, _completion(request, reply, number))
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        for chunk in _chunks(request, reply, number):
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
