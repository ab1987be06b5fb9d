"""A loopback stand-in for the Gemini API that records what Gemini CLI sends.

Gemini CLI pointed at it (`GOOGLE_GEMINI_BASE_URL`) sends the conversation in
`POST /v1beta/models/<model>:streamGenerateContent?alt=sse` (`contents`), after its model router
has asked a small model, through `:generateContent` with a `responseJsonSchema`, how complex the
prompt is. Stream calls are answered from a script of replies (each a list of Gemini `Part`s: text,
function calls), then with a plain text once the script is spent; a schema call gets an object
filled from its schema (so the router accepts it and does not retry); any other `generateContent`
(Gemini CLI's own compression asks for its summary that way) gets the summary text; `countTokens`
a small count. Standard library only, so it ships with the package::

    with GeminiApiServer(replies=((text_part("hi"),),)) as api:
        run_gemini(base_url=api.base_url)
        sent = api.streamed[-1]
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any, Final

from pipeline.proof.loopback import LoopbackServer

__all__ = ["GeminiApiServer", "GeminiRequest", "function_call_part", "text_part"]

STREAM_METHOD: Final = ":streamGenerateContent"
GENERATE_METHOD: Final = ":generateContent"
COUNT_METHOD: Final = ":countTokens"
DEFAULT_REPLY: Final = "ok"
SUMMARY_REPLY: Final = "<state_snapshot>\n<overall_goal>continue the task</overall_goal>\n</state_snapshot>"
DEFAULT_PROMPT_TOKENS: Final = 10
_SCHEMA_DEFAULTS: Final[Mapping[str, Any]] = {
    "STRING": "simple",
    "INTEGER": 10,
    "NUMBER": 10,
    "BOOLEAN": False,
    "ARRAY": [],
}


def text_part(text: str) -> dict[str, Any]:
    """A text `Part` of a scripted reply."""
    return {"text": text}


def function_call_part(name: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """A function call `Part` of a scripted reply (Gemini CLI gives it an id of its own)."""
    return {"functionCall": {"name": name, "args": dict(args)}}


@dataclass(frozen=True, slots=True)
class GeminiRequest:
    """One request as received: method, path and its JSON body (None when it had none)."""

    method: str
    path: str
    body: Mapping[str, Any] | None

    @property
    def model_method(self) -> str:
        """`streamGenerateContent`, `generateContent`, `countTokens`, or '' for anything else."""
        tail = self.path.split("?", 1)[0].rsplit(":", 1)
        return tail[1] if len(tail) == 2 else ""

    @property
    def contents(self) -> tuple[Any, ...] | None:
        """The body's `contents` array, None when absent."""
        contents = self.body.get("contents") if self.body is not None else None
        return tuple(contents) if isinstance(contents, list) else None


def _schema_value(schema: Any) -> Any:
    """A value that satisfies a Gemini response schema (objects filled property by property)."""
    if not isinstance(schema, Mapping):
        return "simple"
    kind = str(schema.get("type", "STRING")).upper()
    if kind == "OBJECT":
        properties = schema.get("properties")
        fields = properties if isinstance(properties, Mapping) else {}
        return {name: _schema_value(field) for name, field in fields.items()}
    if "enum" in schema and isinstance(schema["enum"], list) and schema["enum"]:
        return schema["enum"][0]
    return _SCHEMA_DEFAULTS.get(kind, "simple")


def _response(
    parts: Sequence[Mapping[str, Any]], prompt_tokens: int = DEFAULT_PROMPT_TOKENS
) -> dict[str, Any]:
    candidate = {"content": {"role": "model", "parts": list(parts)}, "finishReason": "STOP", "index": 0}
    usage = {
        "promptTokenCount": prompt_tokens,
        "candidatesTokenCount": 2,
        "totalTokenCount": prompt_tokens + 2,
    }
    return {"candidates": [candidate], "usageMetadata": usage}


class GeminiApiServer(LoopbackServer):
    """A context manager running the server; `.base_url`, `.requests` and `.streamed` while it runs.

    `replies`: the parts of each successive stream reply; `summary`: the text of a plain
    `generateContent` reply (what Gemini CLI's compression receives as its summary);
    `prompt_tokens`: the prompt size each stream reply reports (a large one makes Gemini CLI
    compress its history before the next call).
    """

    thread_name = "gemini-api-server"
    poll_seconds = 0.05

    def __init__(
        self,
        *,
        replies: Sequence[Sequence[Mapping[str, Any]]] = (),
        reply_text: str = DEFAULT_REPLY,
        summary: str = SUMMARY_REPLY,
        prompt_tokens: int = DEFAULT_PROMPT_TOKENS,
    ) -> None:
        self.reply_text = reply_text
        self.prompt_tokens = prompt_tokens
        self.summary = summary
        self._script = list(replies)
        self._requests: list[GeminiRequest] = []
        self._lock = threading.Lock()
        super().__init__()

    def handler(self) -> type[BaseHTTPRequestHandler]:
        """Requests are recorded and answered from this server's script."""
        return type("Handler", (_GeminiHandler,), {"fake": self})

    @property
    def requests(self) -> tuple[GeminiRequest, ...]:
        """Every request received so far, in arrival order."""
        with self._lock:
            return tuple(self._requests)

    @property
    def streamed(self) -> tuple[tuple[Any, ...], ...]:
        """The `contents` of every stream call (the conversation turns), in arrival order."""
        requests = self.requests
        return tuple(r.contents for r in requests if r.model_method == STREAM_METHOD[1:] and r.contents)

    def _record(self, request: GeminiRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _next_reply(self) -> list[Mapping[str, Any]]:
        with self._lock:
            return list(self._script.pop(0)) if self._script else [text_part(self.reply_text)]

    def reply_to(self, request: GeminiRequest) -> dict[str, Any]:
        """The response body for one model call."""
        method = request.model_method
        if method == COUNT_METHOD[1:]:
            return {"totalTokens": 10}
        if method == STREAM_METHOD[1:]:
            return _response(self._next_reply(), self.prompt_tokens)
        config = request.body.get("generationConfig") if request.body else None
        schema = (
            config.get("responseJsonSchema") or config.get("responseSchema")
            if isinstance(config, Mapping)
            else None
        )
        if schema is not None:
            return _response([text_part(json.dumps(_schema_value(schema)))])
        return _response([text_part(self.summary)])


class _GeminiHandler(BaseHTTPRequestHandler):
    """Answers the Gemini API for one `GeminiApiServer` (bound as `fake`)."""

    fake: GeminiApiServer
    server_version = "GeminiApiServer/1"

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: tests read `.requests`, not stderr."""

    def do_GET(self) -> None:
        self.fake._record(GeminiRequest("GET", self.path, None))
        self._json({})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        request = GeminiRequest("POST", self.path, body if isinstance(body, dict) else None)
        self.fake._record(request)
        if not request.model_method:
            self._json({})
            return
        reply = self.fake.reply_to(request)
        if request.model_method != STREAM_METHOD[1:]:
            self._json(reply)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        self.wfile.write(b"data: " + json.dumps(reply).encode() + b"\r\n\r\n")
        self.wfile.flush()
        self.close_connection = True  # the stream ends with the body

    def _json(self, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
