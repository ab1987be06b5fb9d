"""The rebuilt history as the Chat Completions messages Qwen Code sends to an OpenAI-compatible API.

As Qwen Code 0.24's converter does: a user content's texts become one user message of text
parts, each function response its own `tool` message (before the user message); a model content
becomes one assistant message (text joined, or null; thoughts as `reasoning_content`, with "" as
text then; calls as `tool_calls` with the arguments serialized); duplicate call or response ids in
one content are dropped; consecutive assistant messages merge; a tool call without an adjacent
response is removed, and a response without its call; then assistant messages merge again.
Images and files are not reproduced (a finding says so). Each message keeps the parts it sends
(`SentPart`), so its tokens and its content classes count the same parts. Raw JSON stays in
this module.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from pipeline.formats.qwen_code.api_history import Entry
from pipeline.formats.qwen_code.session_records import Part, PartKind

__all__ = ["SentMessage", "SentPart", "message_digest", "sent_messages"]


@dataclass(frozen=True, slots=True)
class SentPart:
    """One part a message sends, and whether it is a compression's history (a summary)."""

    part: Part
    summary: bool = False


@dataclass(frozen=True, slots=True)
class SentMessage:
    """One message Qwen Code sends, the lines of the records it comes from, and the parts it
    sends (an assistant's calls among them in the order of its `tool_calls`)."""

    message: dict[str, Any]
    lines: tuple[int, ...]
    parts: tuple[SentPart, ...] = ()

    @property
    def tokens(self) -> int:
        """Qwen Code's own estimate of the message: its parts' (`part_estimate`)."""
        return sum(sent.part.tokens for sent in self.parts)


def message_digest(message: Any) -> str:
    """SHA-256 of a message's canonical JSON (sorted keys): how checks and goldens name messages."""
    return hashlib.sha256(orjson.dumps(message, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _tool_message(call_id: str | None, text: str, nested: tuple[str, ...]) -> dict[str, Any]:
    parts = [{"type": "text", "text": t} for t in (text, *nested) if t]
    return {"role": "tool", "tool_call_id": call_id or "", "content": parts or ""}


def _assistant(entry: Entry) -> SentMessage | None:
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[dict[str, Any]] = []
    sent: list[SentPart] = []
    seen: set[str] = set()
    for part in entry.content.parts:
        if part.kind is PartKind.THOUGHT and part.text:
            reasoning.append(part.text)
        elif part.kind is PartKind.TEXT and part.text:
            texts.append(part.text)
        elif part.kind is PartKind.FUNCTION_CALL:
            if part.call_id in seen:
                continue
            if part.call_id:
                seen.add(part.call_id)
            function = {"name": part.name, "arguments": part.arguments}
            calls.append(
                {"id": part.call_id or f"call_{len(calls)}", "type": "function", "function": function}
            )
        else:
            continue
        sent.append(SentPart(part, entry.from_compression))
    if not (texts or calls or reasoning):
        return None
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or ("" if reasoning else None)}
    if calls:
        message["tool_calls"] = calls
    if reasoning:
        message["reasoning_content"] = "".join(reasoning)
    return SentMessage(message, entry.lines, tuple(sent))


def _user(entry: Entry) -> Iterator[SentMessage]:
    texts: list[Part] = []
    seen: set[str] = set()
    for part in entry.content.parts:
        if part.kind is PartKind.TEXT and part.text:
            texts.append(part)
        elif part.kind is PartKind.FUNCTION_RESPONSE:
            if part.call_id in seen:
                continue
            if part.call_id:
                seen.add(part.call_id)
            message = _tool_message(part.call_id, part.text, part.nested)
            yield SentMessage(message, entry.lines, (SentPart(part, entry.from_compression),))
    if texts:
        message = {"role": "user", "content": [{"type": "text", "text": part.text} for part in texts]}
        yield SentMessage(message, entry.lines, tuple(SentPart(p, entry.from_compression) for p in texts))


def _converted(entries: tuple[Entry, ...]) -> list[SentMessage]:
    messages: list[SentMessage] = []
    for entry in entries:
        if entry.content.role == "model":
            assistant = _assistant(entry)
            if assistant is not None:
                messages.append(assistant)
        else:
            messages.extend(_user(entry))
    return messages


def _merge_text(last: Any, current: Any) -> Any:
    if isinstance(last, list) or isinstance(current, list):
        as_parts = [
            *(last if isinstance(last, list) else [{"type": "text", "text": last}] if last else []),
            *(
                current
                if isinstance(current, list)
                else [{"type": "text", "text": current}]
                if current
                else []
            ),
        ]
        return as_parts or None
    return "".join(t for t in (last, current) if isinstance(t, str) and t) or None


def _merge_assistants(messages: list[SentMessage]) -> list[SentMessage]:
    merged: list[SentMessage] = []
    for sent in messages:
        last = merged[-1] if merged else None
        if last is None or sent.message["role"] != "assistant" or last.message["role"] != "assistant":
            merged.append(sent)
            continue
        combined = dict(last.message)
        combined["content"] = _merge_text(last.message.get("content"), sent.message.get("content"))
        calls = [*last.message.get("tool_calls", ()), *sent.message.get("tool_calls", ())]
        if calls:
            combined["tool_calls"] = calls
        reasoning = "".join(
            r for r in (last.message.get("reasoning_content"), sent.message.get("reasoning_content")) if r
        )
        if reasoning:
            combined["reasoning_content"] = reasoning
        merged[-1] = SentMessage(combined, last.lines + sent.lines, last.parts + sent.parts)
    return merged


def _answered(messages: list[SentMessage], index: int, surviving: set[str]) -> tuple[list[int], list[int]]:
    """The calls of the assistant at `index` answered by the tool messages right after it (their
    positions in its `tool_calls`), and those tool messages."""
    candidates: dict[str, int] = {}
    for position, call in enumerate(messages[index].message["tool_calls"]):
        if call["id"] and call["id"] not in surviving and call["id"] not in candidates:
            candidates[call["id"]] = position
    answered: set[str] = set()
    responses: list[int] = []
    for later in range(index + 1, len(messages)):
        message = messages[later].message
        if message["role"] == "tool":
            call_id = message.get("tool_call_id")
            if call_id and call_id in candidates and call_id not in answered:
                answered.add(call_id)
                responses.append(later)
            continue
        if message["role"] == "assistant" and not message.get("tool_calls"):
            continue
        break
    return [position for call_id, position in candidates.items() if call_id in answered], responses


def _with_calls(sent: SentMessage, kept: list[int]) -> SentMessage:
    """`sent` sending only its calls at the positions `kept` (none: no `tool_calls` member)."""
    calls = [sent.message["tool_calls"][position] for position in kept]
    message = {
        k: calls if k == "tool_calls" else v for k, v in sent.message.items() if k != "tool_calls" or kept
    }
    call_parts = [p for p in sent.parts if p.part.kind is PartKind.FUNCTION_CALL]
    dropped = {id(p) for position, p in enumerate(call_parts) if position not in kept}
    return SentMessage(message, sent.lines, tuple(p for p in sent.parts if id(p) not in dropped))


def _clean_orphans(messages: list[SentMessage]) -> list[SentMessage]:
    valid: dict[int, tuple[list[int], list[int]]] = {}
    surviving: set[str] = set()
    for index, sent in enumerate(messages):
        if sent.message.get("tool_calls"):
            kept, responses = _answered(messages, index, surviving)
            surviving.update(sent.message["tool_calls"][position]["id"] for position in kept)
            valid[index] = (kept, responses)
    cleaned: list[SentMessage] = []
    emitted: set[int] = set()
    for index, sent in enumerate(messages):
        message = sent.message
        if index in emitted:
            continue
        if message.get("tool_calls"):
            kept, responses = valid[index]
            if kept:
                cleaned.append(_with_calls(sent, kept))
                cleaned.extend(messages[r] for r in responses)
                emitted.update(responses)
            elif (isinstance(message.get("content"), str) and message["content"].strip()) or message.get(
                "reasoning_content"
            ):
                cleaned.append(_with_calls(sent, []))
        elif message["role"] != "tool":
            cleaned.append(sent)
    return cleaned


def sent_messages(entries: tuple[Entry, ...]) -> tuple[SentMessage, ...]:
    """The curated history's messages as Qwen Code sends them, in order."""
    messages = _merge_assistants(_converted(entries))
    return tuple(_merge_assistants(_clean_orphans(messages)))
