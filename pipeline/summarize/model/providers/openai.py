"""OpenAI-compatible chat completions (`POST <base>/chat/completions`): OpenAI, vLLM, llama.cpp, Ollama.

The key is optional (local servers take none). llama.cpp's server differs from OpenAI's in ways
measured on it: an over-long prompt is HTTP 400 `context_length_exceeded` when not streaming but
HTTP 200 with an empty body when streaming (both are `InputTooLong` here), a streamed answer
carries no `usage` (the reply says so with `usage=None`), and a cut answer ends with
`finish_reason: length` (truncation). `content_filter` and a `refusal` field map to their kinds.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
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

__all__ = ["OpenAIOptions", "OpenAIProvider", "output_bound_field"]

COMPLETIONS_PATH: Final = "/chat/completions"
DONE: Final = "[DONE]"
_TOO_LONG_CODES: Final = frozenset({"context_length_exceeded", "exceed_context_size_error"})
_TOO_LONG: Final = ("maximum context length", "context size", "context length", "too long")


# Reasoning models (o1, o3, o4-mini, gpt-5...) refuse `max_tokens` with a 400 and take
# `max_completion_tokens` instead; a gateway's `vendor/` prefix is allowed before the name.
_COMPLETION_TOKENS_MODEL: Final = re.compile(r"(?:^|/)(?:o[134]|gpt-5)(?:$|[-.:])", re.IGNORECASE)


def output_bound_field(model: str) -> str:
    """The request field bounding the answer's tokens for `model`."""
    return "max_completion_tokens" if _COMPLETION_TOKENS_MODEL.search(model) else "max_tokens"


@dataclass(frozen=True, slots=True)
class OpenAIOptions:
    """Where and how to call a chat-completions endpoint; `base_url` ends before `/chat`."""

    base_url: str
    model: str
    api_key: Secret | None
    stream: bool


class _PromptDetails(msgspec.Struct):
    cached_tokens: int = 0


class _Usage(msgspec.Struct):
    prompt_tokens: int = 0  # cached ones included
    completion_tokens: int = 0
    prompt_tokens_details: _PromptDetails | None = None


class _Message(msgspec.Struct):
    content: str | None = None
    refusal: str | None = None


class _Choice(msgspec.Struct):
    message: _Message | None = None
    delta: _Message | None = None
    finish_reason: str | None = None


class _StreamError(msgspec.Struct):
    type: str | None = None


class _Completion(msgspec.Struct):
    choices: list[_Choice] = msgspec.field(default_factory=list)
    usage: _Usage | None = None
    error: _StreamError | None = None


class OpenAIProvider(HttpProvider):
    """Calls chat completions with the run's shared client."""

    def __init__(self, options: OpenAIOptions, client: httpx.AsyncClient) -> None:
        key = options.api_key
        headers = {"authorization": f"Bearer {key.value}"} if key is not None else {}
        url = options.base_url.rstrip("/") + COMPLETIONS_PATH
        super().__init__(ProviderName.OPENAI, client, url, headers, options.model)
        self._options = options

    async def complete(self, request: ModelRequest) -> ModelReply:
        """One chat-completions call."""
        messages = [{"role": "system", "content": request.system}]
        messages.extend({"role": turn.role.value, "content": turn.text} for turn in request.turns)
        payload: dict[str, object] = {
            "model": self._options.model,
            "messages": messages,
            output_bound_field(self._options.model): request.max_output_tokens,
            "stream": self._options.stream,
        }
        if self._options.stream:
            payload["stream_options"] = {"include_usage": True}
            return await self._streamed(msgspec.json.encode(payload), _read_chunks, _raise_for)
        response = await post_json(self._client, self._url, self._headers, msgspec.json.encode(payload))
        _raise_for(response, response.content)
        try:
            completion = msgspec.json.decode(response.content, type=_Completion)
        except msgspec.DecodeError as exc:
            raise ProviderProtocolError("completion-body", response.status_code) from exc
        if not completion.choices:
            raise ProviderProtocolError("no-choices", response.status_code)
        choice = completion.choices[0]
        message = choice.message or _Message()
        usage = _usage(completion.usage)
        return ModelReply(message.content or "", _stop(choice.finish_reason, message.refusal), usage)


async def _read_chunks(lines: AsyncIterator[str]) -> ModelReply:
    parts: list[str] = []
    refusal: list[str] = []
    finish: str | None = None
    usage: _Usage | None = None
    events = 0
    data = ""
    async for line in lines:
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        events += 1
        if data == DONE:
            break
        try:
            chunk = msgspec.json.decode(data, type=_Completion)
        except msgspec.DecodeError as exc:
            raise ProviderProtocolError("stream-chunk") from exc
        if chunk.error is not None:  # a server error midway: retried like the 500 it stands for
            raise ProviderStatusError(400 if chunk.error.type == "invalid_request_error" else 500)
        usage = chunk.usage or usage
        for choice in chunk.choices[:1]:
            delta = choice.delta or _Message()
            parts.append(delta.content or "")
            refusal.append(delta.refusal or "")
            finish = choice.finish_reason or finish
    if events == 0:  # llama.cpp's answer to an over-long prompt when streaming
        raise InputTooLong(200, "empty-stream")
    if data != DONE and finish is None:  # ended before the last chunk: retried as a dropped connection
        raise ProviderTransportError("stream-cut")
    return ModelReply("".join(parts), _stop(finish, "".join(refusal) or None), _usage(usage))


def _usage(usage: _Usage | None) -> Usage | None:
    if usage is None:
        return None
    cached = usage.prompt_tokens_details.cached_tokens if usage.prompt_tokens_details is not None else 0
    return Usage(usage.prompt_tokens, usage.completion_tokens, cached)


def _raise_for(response: httpx.Response, raw: bytes) -> None:
    if response.status_code == 200:
        return
    if response.status_code in (400, 413):
        code, message = error_fields(raw)
        if code in _TOO_LONG_CODES or any(hint in message for hint in _TOO_LONG):
            raise InputTooLong(response.status_code, code or "context-length")
    raise status_error(response)


def _stop(finish: str | None, refusal: str | None) -> StopKind:
    if refusal:
        return StopKind.REFUSED
    if finish == "length":
        return StopKind.TRUNCATED
    if finish == "content_filter":
        return StopKind.CONTENT_FILTERED
    return StopKind.COMPLETE
