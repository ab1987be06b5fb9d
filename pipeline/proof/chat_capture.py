"""A loopback stand-in for an OpenAI-compatible Chat Completions API that records what is sent.

The one server every judge whose agent speaks Chat Completions resumes against (Qwen Code, pi,
CodeWhale), and the scripted model that makes those agents write the fixtures. An agent resumed
against it sends the history it rebuilt from a session in one `POST /v1/chat/completions` (the
`messages` array). Each call is answered by the `Reply` the server's `script` chooses from the
call's 0-based number and its request: reasoning, text, tool calls, or an HTTP error; streamed as
chunks when the request asks for a stream (the usage figures on a last chunk of their own, as
OpenAI sends them with `stream_options.include_usage`), else one completion. The default script
answers every call with the text `ok`, which is all a judge needs. `GET .../models` lists the
server's model, if it was given one. Standard library only, so it ships with the package::

    with ChatCaptureServer() as api:
        run_agent(base_url=api.base_url + "/v1")
        sent = api.conversations[0]
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import Any, Final

from pipeline.proof.loopback import LoopbackServer

__all__ = [
    "COMPLETIONS_ROUTE",
    "ChatCaptureServer",
    "ChatRequest",
    "Reply",
    "ReplyScript",
    "ToolCall",
    "Usage",
]

COMPLETIONS_ROUTE: Final = "/chat/completions"
_CHARS_PER_TOKEN: Final = 4  # the usage figure is a rough size, as a real server reports one
_ANSWERING_MODEL: Final = "fake-model"  # named in replies when neither request nor server names one


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call the model asks for: its name, its arguments and, if given, its id.

    Arguments given as a mapping are sent as their JSON text; a string is sent verbatim (as an
    agent's own recording may hold it, spacing included). Without an id the call of the `n`th
    completions call at position `i` is `call_<n>_<i>`."""

    name: str
    arguments: Mapping[str, Any] | str
    call_id: str | None = None

    @property
    def arguments_json(self) -> str:
        """The arguments as the wire carries them: JSON text."""
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass(frozen=True, slots=True)
class Usage:
    """The token figures a reply reports (OpenAI's `usage`)."""

    prompt_tokens: int
    completion_tokens: int

    def as_json(self) -> dict[str, int]:
        """The `usage` object of a completion or of a stream's last chunk."""
        total = self.prompt_tokens + self.completion_tokens
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": total,
        }


@dataclass(frozen=True, slots=True)
class Reply:
    """One assistant answer (reasoning, text, tool calls, streamed in that order), or an error.

    `usage` None reports characters / 4 of the request and the reply. A `status` other than 200
    answers an OpenAI-style error object whose message is `text` instead of a completion."""

    text: str = ""
    calls: tuple[ToolCall, ...] = ()
    reasoning: str = ""  # sent as `reasoning_content`, as OpenAI-compatible reasoning models do
    usage: Usage | None = None
    status: int = HTTPStatus.OK

    def __post_init__(self) -> None:
        if self.status != HTTPStatus.OK and not 400 <= self.status <= 599:
            raise ValueError(f"a scripted reply is 200 or an error status (4xx, 5xx), not {self.status}")


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One request as received: method, path and its JSON body (empty unless a JSON object)."""

    method: str
    path: str
    body: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_completion(self) -> bool:
        """A Chat Completions call (`POST .../chat/completions`)."""
        return self.method == "POST" and _route(self.path).endswith(COMPLETIONS_ROUTE)

    @property
    def has_messages(self) -> bool:
        """The body carries a `messages` array (possibly empty)."""
        return isinstance(self.body.get("messages"), list)

    @property
    def messages(self) -> tuple[Any, ...]:
        """The `messages` array of the body; empty when it has none."""
        messages = self.body.get("messages")
        return tuple(messages) if isinstance(messages, list) else ()

    @property
    def model(self) -> str | None:
        """The `model` the body names, if it names one."""
        model = self.body.get("model")
        return model if isinstance(model, str) else None

    @property
    def streams(self) -> bool:
        """The client asked for a streamed reply (`"stream": true`)."""
        return self.body.get("stream") is True


ReplyScript = Callable[[int, ChatRequest], Reply]
"""Chooses the reply to the `n`th completions call (0-based) from its number and request."""


def _always_ok(_number: int, _request: ChatRequest) -> Reply:
    return Reply("ok")


def _route(path: str) -> str:
    return path.split("?", 1)[0].rstrip("/")


class ChatCaptureServer(LoopbackServer):
    """A context manager running the server; `.base_url`, `.requests` and `.conversations`.

    `model` is the one model `GET .../models` lists and every reply names; without it the list is
    empty and a reply names the model its request asked for."""

    thread_name = "chat-capture-server"
    poll_seconds = 0.05

    def __init__(self, script: ReplyScript = _always_ok, *, model: str | None = None) -> None:
        self.script = script
        self.model = model
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
        """The `messages` of every completions call that sent them, in arrival order."""
        return tuple(r.messages for r in self.requests if r.is_completion and r.has_messages)

    def _record(self, request: ChatRequest) -> int:
        """Record a request; its 0-based number among the completions calls."""
        with self._lock:
            self._requests.append(request)
            return sum(1 for r in self._requests if r.is_completion) - 1


def _tool_calls(calls: tuple[ToolCall, ...], number: int) -> list[dict[str, Any]]:
    """The calls as a stream's delta carries them (with `index`; a completion's message drops it)."""
    return [
        {
            "index": index,
            "id": call.call_id or f"call_{number}_{index}",
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments_json},
        }
        for index, call in enumerate(calls)
    ]


def _usage(request: ChatRequest, reply: Reply) -> dict[str, int]:
    if reply.usage is not None:
        return reply.usage.as_json()
    prompt = len(json.dumps(request.messages)) // _CHARS_PER_TOKEN + 1
    # The figures Qwen Code's fixtures were recorded with: reasoning not counted, calls as one array.
    written = len(reply.text) + len(json.dumps([c.arguments for c in reply.calls]))
    return Usage(prompt, written // _CHARS_PER_TOKEN + 1).as_json()


def _finish(reply: Reply) -> str:
    return "tool_calls" if reply.calls else "stop"


def _completion(request: ChatRequest, reply: Reply, number: int, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    if reply.calls:
        message["tool_calls"] = [
            {k: v for k, v in call.items() if k != "index"} for call in _tool_calls(reply.calls, number)
        ]
    return {
        "id": f"chatcmpl-loopback-{number}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(reply)}],
        "usage": _usage(request, reply),
    }


def _chunks(request: ChatRequest, reply: Reply, number: int, model: str) -> list[dict[str, Any]]:
    """One delta per part, the finish reason, then the usage alone on the last chunk."""
    base = {
        "id": f"chatcmpl-loopback-{number}",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model,
    }
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    if reply.reasoning:
        deltas.append({"reasoning_content": reply.reasoning})
    if reply.text:
        deltas.append({"content": reply.text})
    if reply.calls:
        deltas.append({"tool_calls": _tool_calls(reply.calls, number)})
    chunks = [{**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]} for delta in deltas]
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": _finish(reply)}]})
    chunks.append({**base, "choices": [], "usage": _usage(request, reply)})
    return chunks


def _error(reply: Reply) -> dict[str, Any]:
    # The message alone: pi records this body verbatim in the sessions its fixtures hold.
    return {"error": {"message": reply.text or "scripted failure"}}


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
        if not _route(self.path).endswith("/models"):
            self._send(HTTPStatus.OK, "application/json", b"{}")
            return
        listed = (
            [{"id": self.fake.model, "object": "model", "owned_by": "loopback"}] if self.fake.model else []
        )
        self._send(HTTPStatus.OK, "application/json", json.dumps({"object": "list", "data": listed}).encode())

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        request = ChatRequest("POST", self.path, _json_body(raw))
        number = self.fake._record(request)
        if not request.is_completion:
            self._send(HTTPStatus.OK, "application/json", b"{}")
            return
        reply = self.fake.script(number, request)
        model = self.fake.model or request.model or _ANSWERING_MODEL
        if reply.status != HTTPStatus.OK:
            self._send(reply.status, "application/json", json.dumps(_error(reply)).encode())
        elif request.streams:
            events = [f"data: {json.dumps(chunk)}\n\n" for chunk in _chunks(request, reply, number, model)]
            self._send(HTTPStatus.OK, "text/event-stream", "".join([*events, "data: [DONE]\n\n"]).encode())
        else:
            self._send(
                HTTPStatus.OK,
                "application/json",
                json.dumps(_completion(request, reply, number, model)).encode(),
            )

    def _send(self, status: int, content_type: str, data: bytes) -> None:
        # The whole reply is known up front: a length frames even a stream, for every client.
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        if content_type == "text/event-stream":
            self.send_header("cache-control", "no-cache")
        self.end_headers()
        self.wfile.write(data)
