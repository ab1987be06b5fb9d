"""The provider server's wire formats: Anthropic Messages and OpenAI chat completions, plain and streamed.

The handler asks its host for the next `Answer`, waits the host's latency plus the answer's
delay, and writes the answer in the protocol the path names, including each protocol's error
envelope, `retry-after`, stop reasons, usage, and llama.cpp's ways of refusing a long prompt.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar, Final, Protocol

from pipeline.testing._provider_answers import (
    Answer,
    Behavior,
    ServedRequest,
    WireUsage,
    answer_text,
    cache_prefixes,
    prompt_text,
    tokens_of,
)

__all__ = ["ANTHROPIC", "OPENAI", "ServerHost", "handler_for"]

ANTHROPIC: Final = "anthropic"
OPENAI: Final = "openai"
_ANTHROPIC_ROUTE: Final = "/v1/messages"
_OPENAI_ROUTE: Final = "/chat/completions"
_ERROR_TYPES: Final = {429: "rate_limit_error", 500: "api_error", 529: "overloaded_error", 503: "api_error"}
_ANTHROPIC_STOPS: Final = {
    Behavior.TRUNCATED: "max_tokens",
    Behavior.REFUSAL: "refusal",
    Behavior.CONTENT_FILTER: "refusal",  # the Messages API has no content filter; a refusal is nearest
}
_OPENAI_STOPS: Final = {Behavior.TRUNCATED: "length", Behavior.CONTENT_FILTER: "content_filter"}
REFUSAL_TEXT: Final = "I can't help with that."
_ANTHROPIC_STREAM_ERROR: Final = {
    "type": "error",
    "error": {"type": "overloaded_error", "message": "Overloaded"},
}
_OPENAI_STREAM_ERROR: Final = {"error": {"message": "The server had an error", "type": "server_error"}}


class ServerHost(Protocol):
    """What the handler needs of the server."""

    latency: float
    context_window: int | None
    models: tuple[str, ...] | None  # served models (GET /models); None: an empty catalog, any name served

    def _next_answer(self) -> tuple[int, Answer]: ...

    def _record(self, request: ServedRequest) -> None: ...

    def _cache_use(self, key: str, prefixes: tuple[str, ...], *, writes: bool) -> tuple[int, int]: ...


class _Handler(BaseHTTPRequestHandler):
    """Answers provider requests for the server `host` names (bound by `handler_for`)."""

    host: ClassVar[ServerHost]
    protocol_version = "HTTP/1.1"  # keep-alive, as a real API serves the shared client
    server_version = "ProviderServer/1"
    _pending_delay = 0.0

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: tests read the recorded requests."""

    def do_GET(self) -> None:
        served = self.host.models
        route = self.path.split("?", 1)[0].rstrip("/")
        if served is not None and "/models/" in route:  # Anthropic's one-model lookup
            model = route.rsplit("/", 1)[1]
            if model not in served:
                self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "model"}})
                return
            self._json(200, {"type": "model", "id": model})
            return
        listed = [{"id": model, "object": "model"} for model in served or ()]
        self._json(200, {"data": listed, "has_more": False} if "/models" in route else {})

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        arrived = time.monotonic()
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        route = self.path.split("?", 1)[0].rstrip("/")
        if route.endswith("/count_tokens"):
            self._json(200, {"input_tokens": 10})
            return
        protocol = ANTHROPIC if route == _ANTHROPIC_ROUTE else OPENAI if route.endswith(_OPENAI_ROUTE) else ""
        if not protocol:
            self._json(200, {})
            return
        body = _json_object(raw)
        _, answer = self.host._next_answer()
        self._pending_delay = self.host.latency + answer.delay
        status, behavior, billed, write = self._answer(protocol, body, answer)
        # recorded before the reply goes out, so a caller that has its reply also sees the record
        stream = bool(body.get("stream"))
        reported = answer.usage and status == 200 and _reports_usage(protocol, body, behavior)
        served = ServedRequest(arrived, protocol, stream, raw, status, behavior, *_figures(billed), reported)
        self.host._record(served)
        write()

    def _answer(
        self, protocol: str, body: dict[str, Any], answer: Answer
    ) -> tuple[int, Behavior, WireUsage, Callable[[], object]]:
        """What to answer (status, behavior, billed tokens) and the writer that sends it."""
        prompt = prompt_text(body)
        input_tokens = tokens_of(prompt)
        behavior = answer.behavior
        if self.host.context_window is not None and input_tokens > self.host.context_window:
            behavior = Behavior.CONTEXT_EXCEEDED
        if behavior is Behavior.STATUS:
            write = functools.partial(self._error, protocol, answer.status, answer.retry_after)
            return answer.status, behavior, WireUsage(0, 0), write
        stream = bool(body.get("stream"))
        if behavior is Behavior.CONTEXT_EXCEEDED:
            status = 200 if stream and protocol == OPENAI else 400
            return (
                status,
                behavior,
                WireUsage(0, 0),
                functools.partial(self._too_long, protocol, stream, input_tokens),
            )
        text = answer_text(behavior, prompt)
        limit = int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)
        if limit and tokens_of(text) > limit:  # a real model stops at its bound
            text, behavior = text[: limit * 4], Behavior.TRUNCATED
        key = f"{protocol}:{body.get('model')}"
        read, written = self.host._cache_use(
            key, cache_prefixes(protocol, body), writes=protocol == ANTHROPIC
        )
        billed = WireUsage(input_tokens, tokens_of(text), read, written)
        send = self._anthropic if protocol == ANTHROPIC else self._openai
        return (
            200,
            behavior,
            billed,
            functools.partial(send, body, text, behavior, billed if answer.usage else None),
        )

    # anthropic ----------------------------------------------------------------------------
    def _anthropic(
        self, body: dict[str, Any], text: str, behavior: Behavior, usage: WireUsage | None
    ) -> None:
        stop = _ANTHROPIC_STOPS.get(behavior, "end_turn")
        tokens = _anthropic_usage(usage) if usage else None
        message: dict[str, Any] = {
            "id": "msg_local",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": [{"type": "text", "text": text}],
            "stop_reason": stop,
        }
        if tokens is not None:
            message["usage"] = tokens
        if not body.get("stream"):
            self._json(200, message)
            return
        start = {**message, "content": [], "stop_reason": None}
        if tokens is not None:
            start["usage"] = {**tokens, "output_tokens": 0}
        delta: dict[str, Any] = {"type": "message_delta", "delta": {"stop_reason": stop}}
        if tokens is not None:
            delta["usage"] = {"output_tokens": tokens["output_tokens"]}
        events: list[dict[str, Any]] = [
            {"type": "message_start", "message": start},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            *(
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": part}}
                for part in _pieces(text)
            ),
            {"type": "content_block_stop", "index": 0},
            delta,
            {"type": "message_stop"},
        ]
        events = _broken_stream(events, behavior, _ANTHROPIC_STREAM_ERROR)
        self._events(f"event: {event['type']}\ndata: {json.dumps(event)}" for event in events)

    # openai -------------------------------------------------------------------------------
    def _openai(self, body: dict[str, Any], text: str, behavior: Behavior, usage: WireUsage | None) -> None:
        finish = _OPENAI_STOPS.get(behavior, "stop")
        refusal = REFUSAL_TEXT if behavior is Behavior.REFUSAL else None
        tokens = _openai_usage(usage) if usage else None
        if not body.get("stream"):
            message = {"role": "assistant", "content": None if refusal else text, "refusal": refusal}
            completion: dict[str, Any] = {
                "id": "chatcmpl-local",
                "object": "chat.completion",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            }
            if tokens is not None:
                completion["usage"] = tokens
            self._json(200, completion)
            return
        chunks: list[dict[str, Any]] = [{"choices": [{"index": 0, "delta": {"role": "assistant"}}]}]
        if refusal:
            chunks.append({"choices": [{"index": 0, "delta": {"refusal": refusal}}]})
        chunks.extend({"choices": [{"index": 0, "delta": {"content": part}}]} for part in _pieces(text))
        chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        wants_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        if tokens is not None and wants_usage:
            chunks.append({"choices": [], "usage": tokens})
        if behavior in (Behavior.STREAM_CUT, Behavior.STREAM_ERROR):
            self._events(
                f"data: {json.dumps(chunk)}"
                for chunk in _broken_stream(chunks, behavior, _OPENAI_STREAM_ERROR)
            )
            return
        self._events([*(f"data: {json.dumps(chunk)}" for chunk in chunks), "data: [DONE]"])

    # errors -------------------------------------------------------------------------------
    def _error(self, protocol: str, status: int, retry_after: float | None) -> None:
        kind = _ERROR_TYPES.get(status, "api_error")
        extra = {} if retry_after is None else {"retry-after": f"{retry_after:g}"}
        if protocol == ANTHROPIC:
            self._json(status, {"type": "error", "error": {"type": kind, "message": f"local {kind}"}}, extra)
        else:
            self._json(status, {"error": {"message": f"local {kind}", "type": kind, "code": status}}, extra)

    def _too_long(self, protocol: str, stream: bool, tokens: int) -> None:
        message = f"prompt is too long: {tokens} tokens > {self.host.context_window} maximum"
        if protocol == ANTHROPIC:
            self._json(400, {"type": "error", "error": {"type": "invalid_request_error", "message": message}})
            return
        if stream:  # llama.cpp: 200 and nothing at all
            self._events(())
            return
        error = {"message": message, "type": "invalid_request_error", "code": "context_length_exceeded"}
        self._json(400, {"error": error})

    # writing ------------------------------------------------------------------------------
    def _wait(self) -> None:
        """The answer's latency, once: a stream's headers come first, as a real server's do."""
        delay, self._pending_delay = self._pending_delay, 0.0
        time.sleep(delay)

    def _events(self, events: Iterable[str]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        self._wait()
        for event in events:
            self.wfile.write(f"{event}\n\n".encode())
        self.wfile.flush()

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._wait()
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def _broken_stream(
    events: list[dict[str, Any]], behavior: Behavior, error: dict[str, Any]
) -> list[dict[str, Any]]:
    """The first half of a stream, then nothing (a cut) or the protocol's error event."""
    if behavior not in (Behavior.STREAM_CUT, Behavior.STREAM_ERROR):
        return events
    half = events[: max(2, len(events) // 2)]
    return half if behavior is Behavior.STREAM_CUT else [*half, error]


def _anthropic_usage(usage: WireUsage) -> dict[str, int]:
    """Anthropic's usage: `input_tokens` excludes what was read from or written to the cache."""
    read, written = usage.cache_read_tokens, usage.cache_write_tokens
    return {
        "input_tokens": usage.input_tokens - read - written,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": written,
        "output_tokens": usage.output_tokens,
    }


def _openai_usage(usage: WireUsage) -> dict[str, Any]:
    """OpenAI's usage: `prompt_tokens` includes the cached ones, which its details count."""
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_tokens},
    }


def _figures(billed: WireUsage) -> tuple[int, int, int, int]:
    return billed.input_tokens, billed.output_tokens, billed.cache_read_tokens, billed.cache_write_tokens


def _reports_usage(protocol: str, body: dict[str, Any], behavior: Behavior) -> bool:
    """Whether an answered request's usage reaches the caller (a broken stream's never does)."""
    if behavior in (Behavior.STREAM_CUT, Behavior.STREAM_ERROR, Behavior.CONTEXT_EXCEEDED):
        return False
    wants = bool((body.get("stream_options") or {}).get("include_usage"))
    return protocol == ANTHROPIC or not body.get("stream") or wants


def handler_for(host: ServerHost) -> type[BaseHTTPRequestHandler]:
    """A handler class bound to one server (instantiated per request)."""
    return type("Handler", (_Handler,), {"host": host})


def _json_object(raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _pieces(text: str) -> list[str]:
    """A text in three deltas, as a stream sends it."""
    third = max(1, len(text) // 3)
    return [text[i : i + third] for i in range(0, len(text), third)] or [""]
