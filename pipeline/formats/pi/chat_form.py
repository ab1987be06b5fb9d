"""pi's context as pi 1.6.0 sends it over OpenAI Chat Completions to the judge's model.

What the real pi sends for `fake/fake-model` (a custom `openai-completions` provider, text input
only) is the golden this module is held to: `transformMessages` (images in user and tool messages
replaced by a placeholder, thinking of another model dropped, errored or aborted assistant turns
skipped, tool calls left unanswered given a synthetic error result, Responses-style `call|item`
ids shortened) then `convertMessages` (assistant text joined into one string, tool calls with
their arguments as compact JSON, consecutive tool results as `tool` messages). System messages
are pi's system prompt, sent before the history, and are not part of it here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

import orjson

from pipeline.formats.pi.agent_messages import AgentMessage

__all__ = ["JUDGE_MODEL", "ChatMessage", "MessageOrigin", "Model", "chat_messages", "js_json"]

USER_IMAGE_PLACEHOLDER: Final = "(image omitted: model does not support images)"
TOOL_IMAGE_PLACEHOLDER: Final = "(tool image omitted: model does not support images)"
NO_RESULT: Final = "No result provided"
_ID_CHARS: Final = re.compile(r"[^a-zA-Z0-9_-]")
_LONE_SURROGATE: Final = re.compile(r"[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")
_MAX_CALL_ID: Final = 40  # Chat Completions' limit on a tool call id
_REASONING_FIELDS: Final = frozenset({"reasoning_content", "reasoning", "reasoning_text"})


@dataclass(frozen=True, slots=True)
class Model:
    """The model pi sends to: what decides whether old thinking and ids are kept as they are."""

    provider: str
    api: str
    model_id: str


JUDGE_MODEL: Final = Model("fake", "openai-completions", "fake-model")


class MessageOrigin(StrEnum):
    """Where a sent message comes from."""

    LINE = "line"  # an entry's message
    SUMMARY = "summary"  # a compaction's summary
    SYNTHETIC = "synthetic"  # pi's error result for a call left unanswered (at the call's line)


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One message as pi sends it, and where it comes from."""

    line: int
    origin: MessageOrigin
    body: dict[str, Any]


def js_json(value: Any) -> str:
    """`JSON.stringify(value)`: compact, keys in order, integral numbers without a fraction."""

    def plain(item: Any) -> Any:
        if isinstance(item, float) and item.is_integer() and abs(item) < 1e21:
            return int(item)
        if isinstance(item, dict):
            return {key: plain(inner) for key, inner in item.items()}
        if isinstance(item, list):
            return [plain(inner) for inner in item]
        return item

    return orjson.dumps(plain(value)).decode()


def _sanitized(text: str) -> str:
    """`sanitizeSurrogates`: lone surrogates removed (only a string UTF-8 cannot encode has one)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("", text)
    return text


def _short_hash(text: str) -> str:
    """pi's `shortHash` (a 53-bit cyrb-style hash of the UTF-16 units, base 36)."""

    def imul(a: int, b: int) -> int:
        return ((a & 0xFFFFFFFF) * (b & 0xFFFFFFFF)) & 0xFFFFFFFF

    h1, h2 = 0xDEADBEEF, 0x41C6CE57
    units = text.encode("utf-16-le", "surrogatepass")
    for index in range(0, len(units), 2):
        unit = int.from_bytes(units[index : index + 2], "little")
        h1, h2 = imul(h1 ^ unit, 2654435761), imul(h2 ^ unit, 1597334677)
    h1 = imul(h1 ^ (h1 >> 16), 2246822507) ^ imul(h2 ^ (h2 >> 13), 3266489909)
    h2 = imul(h2 ^ (h2 >> 16), 2246822507) ^ imul(h1 ^ (h1 >> 13), 3266489909)
    return _base36(h2 & 0xFFFFFFFF) + _base36(h1 & 0xFFFFFFFF)


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
        if not number:
            return out


def normalized_call_id(call_id: str, model: Model) -> str:
    """The id pi sends for a tool call recorded by another model (`normalizeToolCallId`)."""
    if "|" in call_id:
        call, item = call_id.split("|", 1)
        call, item = _ID_CHARS.sub("_", call), _ID_CHARS.sub("_", item)
        combined = f"{call}_{item}" if item else call
        if len(combined) <= _MAX_CALL_ID:
            return combined
        digest = _short_hash(call_id)[:8]
        return f"{call[: max(1, _MAX_CALL_ID - len(digest) - 1)]}_{digest}"
    if model.provider == "openai":
        return call_id[:_MAX_CALL_ID]
    return call_id


def _without_images(content: Any, placeholder: str) -> Any:
    if not isinstance(content, list):
        return content
    out: list[Any] = []
    after_placeholder = False
    for block in content:
        if isinstance(block, dict) and block.get("type") == "image":
            if not after_placeholder:
                out.append({"type": "text", "text": placeholder})
            after_placeholder = True
            continue
        out.append(block)
        after_placeholder = isinstance(block, dict) and block.get("text") == placeholder
    return out


def _blocks(message: dict[str, Any]) -> list[Any]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def _same_model(message: dict[str, Any], model: Model) -> bool:
    return (
        message.get("provider") == model.provider
        and message.get("api") == model.api
        and message.get("model") == model.model_id
    )


def _assistant_blocks(message: dict[str, Any], model: Model, renamed: dict[str, str]) -> list[Any]:
    """An assistant's blocks as `transformMessages` leaves them for `model` (`renamed` learns the
    call ids it changes, for their results)."""
    same = _same_model(message, model)
    out: list[Any] = []
    for block in _blocks(message):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "thinking":
            if not same:
                continue
            signed = block.get("redacted") or block.get("thinkingSignature")
            if signed or str(block.get("thinking") or "").strip():
                out.append(block)
        elif kind == "toolCall" and not same and isinstance(block.get("id"), str):
            renamed[block["id"]] = normalized_call_id(block["id"], model)
            out.append({**block, "id": renamed[block["id"]]})
        else:
            out.append(block)
    return out


def _transformed(messages: list[AgentMessage], model: Model) -> Iterator[AgentMessage]:
    """The first pass of `transformMessages`: content normalized, images and old thinking gone."""
    renamed: dict[str, str] = {}
    for message in messages:
        body = dict(message.body)
        if body.get("content") is None:
            body["content"] = []
        role = body.get("role")
        if role == "user":
            body["content"] = _without_images(body["content"], USER_IMAGE_PLACEHOLDER)
        elif role == "toolResult":
            body["content"] = _without_images(body["content"], TOOL_IMAGE_PLACEHOLDER)
            body["toolCallId"] = renamed.get(body.get("toolCallId"), body.get("toolCallId"))  # type: ignore[arg-type]
        elif role == "assistant":
            body["content"] = _assistant_blocks(body, model, renamed)
        yield AgentMessage(message.line, body, message.summary)


def _tool_calls(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in _blocks(message) if isinstance(b, dict) and b.get("type") == "toolCall"]


def _paired(messages: Iterator[AgentMessage]) -> Iterator[tuple[AgentMessage, MessageOrigin]]:
    """The second pass: errored turns skipped, unanswered calls given pi's synthetic result."""
    pending: list[dict[str, Any]] = []
    answered: set[Any] = set()
    pending_line = 0
    held: list[AgentMessage] = []

    def close() -> Iterator[tuple[AgentMessage, MessageOrigin]]:
        nonlocal pending, answered
        for call in pending:
            if call.get("id") not in answered:
                result = {
                    "role": "toolResult",
                    "toolCallId": call.get("id"),
                    "content": [{"type": "text", "text": NO_RESULT}],
                }
                yield AgentMessage(pending_line, result), MessageOrigin.SYNTHETIC
        pending, answered = [], set()
        yield from ((m, MessageOrigin.LINE) for m in held)
        held.clear()

    for message in messages:
        role = message.body.get("role")
        origin = MessageOrigin.SUMMARY if message.summary else MessageOrigin.LINE
        if role == "assistant":
            yield from close()
            if message.body.get("stopReason") in ("error", "aborted"):
                continue
            calls = _tool_calls(message.body)
            if calls:
                pending, answered, pending_line = calls, set(), message.line
        elif role == "toolResult":
            answered.add(message.body.get("toolCallId"))
        elif role == "system" and pending:
            held.append(message)
            continue
        elif role == "user":
            yield from close()
        yield message, origin
    yield from close()


def _user(body: dict[str, Any]) -> dict[str, Any] | None:
    content = body.get("content")
    if isinstance(content, str):
        return {"role": "user", "content": _sanitized(content)}
    parts: list[Any] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            if part.get("text"):
                parts.append({"type": "text", "text": _sanitized(str(part["text"]))})
        else:
            url = f"data:{part.get('mimeType')};base64,{part.get('data')}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
    return {"role": "user", "content": parts} if parts else None


def _call(block: dict[str, Any]) -> dict[str, Any]:
    function: dict[str, Any] = {"name": block.get("name")}
    if "arguments" in block:
        function["arguments"] = js_json(block["arguments"])
    call: dict[str, Any] = {"id": block.get("id"), "type": "function", "function": function}
    if call["id"] is None:  # JSON.stringify drops an undefined id
        del call["id"]
    return call


def _assistant(body: dict[str, Any]) -> dict[str, Any] | None:
    blocks = [b for b in _blocks(body) if isinstance(b, dict)]
    text = "".join(
        _sanitized(b["text"])
        for b in blocks
        if b.get("type") == "text" and isinstance(b.get("text"), str) and b["text"].strip()
    )
    sent: dict[str, Any] = {"role": "assistant", "content": text or None}
    thinking = [b for b in blocks if b.get("type") == "thinking" and str(b.get("thinking") or "").strip()]
    signature = thinking[0].get("thinkingSignature") if thinking else None
    if signature in _REASONING_FIELDS:
        sent[str(signature)] = "\n".join(str(b.get("thinking")) for b in thinking)
    calls = [_call(b) for b in blocks if b.get("type") == "toolCall"]
    if calls:
        sent["tool_calls"] = calls
    return sent if sent["content"] or calls else None


def _tool(body: dict[str, Any]) -> dict[str, Any]:
    texts = [
        b["text"]
        for b in _blocks(body)
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    text = "\n".join(texts)
    images = any(isinstance(b, dict) and b.get("type") == "image" for b in _blocks(body))
    shown = text if text.strip() else "(see attached image)" if images else "(no tool output)"
    sent: dict[str, Any] = {"role": "tool", "content": _sanitized(shown)}
    if body.get("toolCallId") is not None:
        sent["tool_call_id"] = body["toolCallId"]
    return sent


_CONVERT: Final = {"user": _user, "assistant": _assistant, "toolResult": _tool}


def chat_messages(messages: list[AgentMessage], model: Model = JUDGE_MODEL) -> list[ChatMessage]:
    """The history pi sends for `messages` (system messages left out: they are its system prompt)."""
    sent: list[ChatMessage] = []
    for message, origin in _paired(_transformed(messages, model)):
        convert = _CONVERT.get(str(message.body.get("role")))
        body = convert(message.body) if convert is not None else None
        if body is not None:
            sent.append(ChatMessage(message.line, origin, body))
    return sent
