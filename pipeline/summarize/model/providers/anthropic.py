"""The Anthropic Messages API (`POST /v1/messages`), plain or streamed.

Authenticated with `x-api-key` and pinned to an `anthropic-version`; the base URL is a setting so
a gateway or the local test server can stand in. `stop_reason` maps to `StopKind` (`max_tokens`
is truncation, `refusal` a refusal); a 400 that says the prompt is too long is `InputTooLong`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Final

import httpx
import msgspec

from pipeline.summarize.model.providers.base import (
    InputTooLong,
    ModelReply,
    ModelRequest,
    ProviderName,
    ProviderProtocolError,
    ProviderStatusError,
    ProviderTransportError,
    Secret,
    StopKind,
    Usage,
)
from pipeline.summarize.model.providers.http import HttpProvider, error_fields, post_json, status_error

__all__ = ["AnthropicOptions", "AnthropicProvider"]

MESSAGES_PATH: Final = "/v1/messages"
CACHE_MARK: Final = {"type": "ephemeral"}  # Anthropic's prompt cache, kept five minutes
_TOO_LONG: Final = ("prompt is too long", "too many tokens", "context window", "context length")
_STOPS: Final = {
    "end_turn": StopKind.COMPLETE,
    "stop_sequence": StopKind.COMPLETE,
    "max_tokens": StopKind.TRUNCATED,
    "model_context_window_exceeded": StopKind.TRUNCATED,
    "refusal": StopKind.REFUSED,
}


# An error event mid-stream carries the error type the status would have: the retryable ones are
# retried like that status (Anthropic sends `overloaded_error` mid-stream as it sends a 529).
_STREAM_ERROR_STATUS: Final = {"overloaded_error": 529, "rate_limit_error": 429, "api_error": 500}


@dataclass(frozen=True, slots=True)
class AnthropicOptions:
    """Where and how to call the Messages API."""

    base_url: str
    model: str
    api_key: Secret
    version: str
    stream: bool


class _Usage(msgspec.Struct):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None

    def billed(self) -> Usage:
        read, written = self.cache_read_input_tokens or 0, self.cache_creation_input_tokens or 0
        return Usage(self.input_tokens + read + written, self.output_tokens, read, written)


class _Block(msgspec.Struct):
    type: str
    text: str = ""


class _Message(msgspec.Struct):
    content: list[_Block] = msgspec.field(default_factory=list)
    stop_reason: str | None = None
    usage: _Usage | None = None


class _Delta(msgspec.Struct):
    type: str = ""
    text: str = ""
    stop_reason: str | None = None


class _StreamError(msgspec.Struct):
    type: str = ""


class _Event(msgspec.Struct):
    type: str
    message: _Message | None = None
    delta: _Delta | None = None
    usage: _Usage | None = None
    error: _StreamError | None = None


class AnthropicProvider(HttpProvider):
    """Calls the Messages API with the run's shared client."""

    def __init__(self, options: AnthropicOptions, client: httpx.AsyncClient) -> None:
        headers = {"x-api-key": options.api_key.value, "anthropic-version": options.version}
        url = options.base_url.rstrip("/") + MESSAGES_PATH
        super().__init__(ProviderName.ANTHROPIC, client, url, headers, options.model)
        self._options = options

    async def complete(self, request: ModelRequest) -> ModelReply:
        """One Messages call."""
        body = msgspec.json.encode(
            {
                "model": self._options.model,
                "max_tokens": request.max_output_tokens,
                "system": [_cached(request.system)],
                "messages": [
                    {"role": turn.role.value, "content": [_cached(turn.text)] if index == 0 else turn.text}
                    for index, turn in enumerate(request.turns)
                ],
                "stream": self._options.stream,
            }
        )
        if self._options.stream:
            return await self._streamed(body, _read_events, _raise_for)
        response = await post_json(self._client, self._url, self._headers, body)
        _raise_for(response, response.content)
        try:
            message = msgspec.json.decode(response.content, type=_Message)
        except msgspec.DecodeError as exc:
            raise ProviderProtocolError("message-body", response.status_code) from exc
        text = "".join(block.text for block in message.content if block.type == "text")
        usage = message.usage.billed() if message.usage is not None else None
        return ModelReply(text, _stop(message.stop_reason), usage)


def _cached(text: str) -> dict[str, object]:
    """A text block marked as a prompt-cache breakpoint. The instructions and the first turn (the
    evidence pack) are the prefix a repair call repeats and every chunk of a round shares the
    instructions, so those calls read the prefix from the cache instead of paying for it again."""
    return {"type": "text", "text": text, "cache_control": CACHE_MARK}


async def _read_events(lines: AsyncIterator[str]) -> ModelReply:
    """Text, stop reason and usage from the event stream (`data:` lines; `event:` names repeat them)."""
    parts: list[str] = []
    stop: str | None = None
    input_usage: _Usage | None = None
    output_tokens: int | None = None
    finished = False
    async for line in lines:
        if not line.startswith("data:"):
            continue
        try:
            event = msgspec.json.decode(line[5:].strip(), type=_Event)
        except msgspec.DecodeError as exc:
            raise ProviderProtocolError("stream-event") from exc
        if event.type == "message_start" and event.message is not None:
            input_usage = event.message.usage
        elif event.type == "content_block_delta" and event.delta is not None:
            parts.append(event.delta.text)
        elif event.type == "message_delta":
            stop = event.delta.stop_reason if event.delta is not None else stop
            output_tokens = event.usage.output_tokens if event.usage is not None else output_tokens
        elif event.type == "message_stop":
            finished = True
        elif event.type == "error":
            kind = event.error.type if event.error is not None else ""
            status = _STREAM_ERROR_STATUS.get(kind)
            if status is None:
                raise ProviderProtocolError("stream-error-event")
            raise ProviderStatusError(status)  # retried (and a 429 paused) as if the status had come first
    if not finished:  # the connection ended before message_stop: retried as a dropped connection
        raise ProviderTransportError("stream-cut")
    usage = None
    if input_usage is not None and output_tokens is not None:
        usage = replace(input_usage.billed(), output_tokens=output_tokens)
    return ModelReply("".join(parts), _stop(stop), usage)


def _raise_for(response: httpx.Response, raw: bytes) -> None:
    if response.status_code == 200:
        return
    if response.status_code in (400, 413):
        code, message = error_fields(raw)
        if response.status_code == 413 or any(hint in message for hint in _TOO_LONG):
            raise InputTooLong(response.status_code, code or "prompt-too-long")
    raise status_error(response)


def _stop(reason: str | None) -> StopKind:
    return _STOPS.get(reason or "end_turn", StopKind.COMPLETE)
