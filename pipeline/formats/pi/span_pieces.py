"""The summarized span of a pi session as typed pieces, ready to become the summarizers' evidence.

pi's built-in tools are named in the summarizers' vocabulary (`bash` a shell command, `read`,
`edit` and `write` the file tools with their `file_path`); every other tool keeps its own name and
arguments. A prompt is a user message the person typed; a compaction's or a branch's summary is a
prior summary; a `!` bash execution is a command; an extension's custom message is other context.
Every piece cites its source line; raw JSON stays here (a tool's input leaves as JSON text).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

import orjson

from pipeline.formats.evidence_tools import EDIT, READ, SHELL, WRITE
from pipeline.formats.pi.agent_messages import BRANCH_SUMMARY_PREFIX, COMPACTION_SUMMARY_PREFIX
from pipeline.formats.pi.chat_form import ChatMessage
from pipeline.formats.pi.session_decode import PiEntry, PiKind

__all__ = ["SpanKind", "SpanPiece", "span_pieces"]

_FILE_TOOLS: Final = {"read": READ, "edit": EDIT, "write": WRITE}


class SpanKind(StrEnum):
    """What one piece of the summarized span is."""

    PROMPT = "prompt"
    COMMAND = "command"
    CONTEXT = "context"
    PRIOR_SUMMARY = "prior-summary"
    ASSISTANT_TEXT = "assistant-text"
    TOOL_CALL = "tool-call"
    TOOL_RESULT = "tool-result"


@dataclass(frozen=True, slots=True)
class SpanPiece:
    """One piece of a summarized message: its line, kind, text, and for tools their name, id and
    input (JSON text of an object)."""

    line: int
    kind: SpanKind
    text: str = ""
    tool_name: str | None = None
    tool_id: str | None = None
    tool_input: str = "{}"
    is_error: bool = False


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "\n".join(p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))


def _user(message: ChatMessage, entry: PiEntry | None) -> Iterator[SpanPiece]:
    text = _text(message.body.get("content"))
    if not text:
        return
    if text.startswith((COMPACTION_SUMMARY_PREFIX, BRANCH_SUMMARY_PREFIX)):
        yield SpanPiece(message.line, SpanKind.PRIOR_SUMMARY, text)
    elif entry is not None and entry.role == "bashExecution":
        yield SpanPiece(message.line, SpanKind.COMMAND, text)
    elif entry is not None and (entry.role == "custom" or entry.kind is PiKind.CUSTOM_MESSAGE):
        yield SpanPiece(message.line, SpanKind.CONTEXT, text)
    else:
        yield SpanPiece(message.line, SpanKind.PROMPT, text)


def _arguments(raw: object) -> dict[str, Any]:
    try:
        value = orjson.loads(raw) if isinstance(raw, str) else raw
    except orjson.JSONDecodeError:
        return {"input": raw}
    return value if isinstance(value, dict) else {"input": raw}


def _call(line: int, call: Mapping[str, Any]) -> SpanPiece:
    function = call.get("function")
    function = function if isinstance(function, dict) else {}
    name, call_id = str(function.get("name")), call.get("id")
    arguments = _arguments(function.get("arguments"))
    if name == "bash":
        name, arguments = SHELL, {"command": str(arguments.get("command", ""))}
    elif name in _FILE_TOOLS:
        name, arguments = (
            _FILE_TOOLS[name],
            {"file_path": str(arguments.get("path", arguments.get("file_path", "")))},
        )
    tool_id = call_id if isinstance(call_id, str) else None
    return SpanPiece(line, SpanKind.TOOL_CALL, "", name, tool_id, orjson.dumps(arguments).decode())


def _pieces_of(message: ChatMessage, entry: PiEntry | None) -> Iterator[SpanPiece]:
    body = message.body
    role = body.get("role")
    if role == "user":
        yield from _user(message, entry)
    elif role == "assistant":
        if isinstance(body.get("content"), str) and body["content"]:
            yield SpanPiece(message.line, SpanKind.ASSISTANT_TEXT, body["content"])
        for call in body.get("tool_calls") or ():
            yield _call(message.line, call)
    elif role == "tool":
        failed = entry is not None and entry.message.get("isError") is True
        call_id = body.get("tool_call_id")
        tool_id = call_id if isinstance(call_id, str) else None
        yield SpanPiece(
            message.line, SpanKind.TOOL_RESULT, str(body.get("content", "")), None, tool_id, is_error=failed
        )


def span_pieces(
    messages: tuple[ChatMessage, ...], entries: Mapping[int, PiEntry], first_kept: int
) -> tuple[SpanPiece, ...]:
    """The pieces of the sent messages before `first_kept` (the summarized span), as pi sends them."""
    return tuple(
        piece for message in messages[:first_kept] for piece in _pieces_of(message, entries.get(message.line))
    )
