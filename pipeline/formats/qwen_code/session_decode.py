"""Qwen Code lines: each physical line decoded into a `QwenRecord`, or said what it is instead.

A line that is not a JSON object (blank, truncated, not JSON, too long, nested too deep) is a line
kind, as for the other formats. A JSON object Qwen Code would skip (no string `uuid` or
`sessionId`, a `parentUuid` that is neither a string nor null, a `type` it does not write) is a
`Rejected` line with the finding code that says why. Raw JSON stays in this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from typing import Any, Final

import orjson

from pipeline.formats.line_guard import LineLimits, readable_utf8, too_deep
from pipeline.formats.qwen_code.part_estimate import estimate_tokens, response_estimate, text_estimate
from pipeline.formats.qwen_code.session_records import (
    Content,
    Part,
    PartKind,
    QwenRecord,
    RecordType,
    SlashOutcome,
    Usage,
)
from pipeline.read.lines import BOM, content_span, iter_line_spans
from pipeline.vocabulary import FindingCode, LineKind

__all__ = [
    "DocumentLayout",
    "Rejected",
    "Session",
    "decode_line",
    "decode_session",
    "js_json",
    "json_document_layout",
    "raw_line",
]

_TYPES: Final = frozenset(RecordType)


@dataclass(frozen=True, slots=True)
class Rejected:
    """A JSON object Qwen Code skips when it reads the file, and why."""

    code: FindingCode


Decoded = QwenRecord | Rejected | LineKind


@dataclass(frozen=True)
class Session:
    """Every physical line of one session file (1-based) and what each one is."""

    offsets: tuple[int, ...]
    lengths: tuple[int, ...]  # bytes without the LF (a CR, if any, included)
    kinds: tuple[LineKind, ...]
    decoded: tuple[Decoded, ...]
    has_bom: bool
    crlf_lines: int
    final_newline: bool

    def __len__(self) -> int:
        return len(self.kinds)

    @cached_property
    def records(self) -> tuple[QwenRecord, ...]:
        """The lines Qwen Code reads as records, in file order."""
        return tuple(d for d in self.decoded if isinstance(d, QwenRecord))


def js_json(value: Any) -> str:
    """`value` serialized as JavaScript's `JSON.stringify` writes it (compact, unescaped UTF-8)."""
    return orjson.dumps(value).decode()


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _response_text(response: object) -> str:
    """The text Qwen Code sends for a function response (its `extractFunctionResponseContent`)."""
    if response is None:
        return ""
    if isinstance(response, str):
        return response
    if isinstance(response, Mapping):
        for key in ("output", "error"):
            if isinstance(response.get(key), str):
                return str(response[key])
    return js_json(response)


def _js_truthy(value: object) -> bool:
    """Whether JavaScript takes `value` as true (`args || {}`): objects and arrays always are."""
    return isinstance(value, dict | list) or bool(value)


def _call(call: Mapping[str, Any]) -> Part:
    args = call.get("args")
    return Part(
        PartKind.FUNCTION_CALL,
        call_id=_text(call.get("id")) or None,
        name=_text(call.get("name")) or "",
        arguments=js_json(args) if _js_truthy(args) else "{}",
        tokens=text_estimate(call),
    )


def _response(response: Mapping[str, Any]) -> Part:
    nested = response.get("parts")
    texts = tuple(
        p["text"]
        for p in (nested if isinstance(nested, list) else ())
        if isinstance(p, dict) and _text(p.get("text"))
    )
    body = response.get("response")
    return Part(
        PartKind.FUNCTION_RESPONSE,
        text=_response_text(body),
        failed=isinstance(body, dict) and "error" in body and "output" not in body,
        call_id=_text(response.get("id")) or None,
        name=_text(response.get("name")) or "",
        nested=texts,
        tokens=response_estimate(response, texts),
    )


def _plain_part(part: dict[str, Any], signed: bool) -> Part:
    """A part that is neither a call nor a response: text, thought, media or none of those."""
    text = _text(part.get("text"))
    tokens = estimate_tokens(text) if text is not None else 0
    if "text" in part and part.get("thought"):
        return Part(PartKind.THOUGHT, text=text or "", signed=signed, tokens=tokens)
    if text is not None:
        return Part(PartKind.TEXT, text=text, empty=text == "" and not signed, signed=signed, tokens=tokens)
    media = isinstance(part.get("inlineData"), dict) or isinstance(part.get("fileData"), dict)
    return Part(PartKind.MEDIA if media else PartKind.OTHER, signed=signed)


def decode_part(part: object) -> Part:
    """One `parts` entry as Qwen Code reads it."""
    if isinstance(part, str):
        return Part(PartKind.TEXT, text=part, tokens=estimate_tokens(part))
    if not isinstance(part, dict) or not part:
        return Part(PartKind.OTHER, empty=True)
    if isinstance(part.get("functionCall"), dict):
        return _call(part["functionCall"])
    if isinstance(part.get("functionResponse"), dict):
        return _response(part["functionResponse"])
    return _plain_part(part, bool(part.get("thoughtSignature")))


def decode_content(value: object) -> Content | None:
    """A `{role, parts}` object as a content; None when it is not an object."""
    if not isinstance(value, dict):
        return None
    parts = value.get("parts")
    return Content(
        _text(value.get("role")) or "", tuple(map(decode_part, parts if isinstance(parts, list) else ()))
    )


def _compressed(payload: Mapping[str, Any]) -> tuple[tuple[Content, ...] | None, bool]:
    history = payload.get("compressedHistory")
    if not history:
        return None, False
    if not isinstance(history, list):
        return None, True
    return tuple(c for c in map(decode_content, history) if c is not None), False


def _slash(payload: Mapping[str, Any]) -> SlashOutcome:
    items = payload.get("outputHistoryItems")
    assistant_only = (
        isinstance(items, list)
        and bool(items)
        and all(isinstance(i, dict) and i.get("type") == "assistant" for i in items)
    )
    hides = payload.get("phase") == "result" and payload.get("sentToModel") is not True and assistant_only
    return SlashOutcome(hides, _text(payload.get("rawCommand")))


def _usage(value: object) -> Usage | None:
    if not isinstance(value, dict):
        return None
    return Usage(
        prompt=_count(value.get("promptTokenCount")),
        output=_count(value.get("candidatesTokenCount")),
        thoughts=_count(value.get("thoughtsTokenCount")),
        cached=_count(value.get("cachedContentTokenCount")),
        total=_count(value.get("totalTokenCount")),
    )


def _api_usage(payload: Mapping[str, Any]) -> Usage | None:
    """What one model call billed, as Qwen Code's `qwen-code.api_response` telemetry says."""
    event = payload.get("uiEvent")
    if not isinstance(event, dict) or event.get("event.name") != "qwen-code.api_response":
        return None
    return Usage(
        prompt=_count(event.get("input_token_count")),
        output=_count(event.get("output_token_count")),
        thoughts=_count(event.get("thoughts_token_count")),
        cached=_count(event.get("cached_content_token_count")),
        total=_count(event.get("total_token_count")),
    )


def _identity_problem(value: Mapping[str, Any]) -> FindingCode | None:
    uuid, parent, session = value.get("uuid"), value.get("parentUuid"), value.get("sessionId")
    if not (isinstance(uuid, str) and uuid):
        return FindingCode.MALFORMED_UUID
    if not (parent is None or isinstance(parent, str)) or "parentUuid" not in value:
        return FindingCode.MALFORMED_PARENT
    if not (isinstance(session, str) and session):
        return FindingCode.MALFORMED_UUID
    return None if value.get("type") in _TYPES else FindingCode.UNKNOWN_RECORD


def record_of(value: Mapping[str, Any], line: int, replaced: bool) -> QwenRecord | Rejected:
    """A decoded JSON object as the record Qwen Code reads, or why it skips it."""
    problem = _identity_problem(value)
    if problem is not None:
        return Rejected(problem)
    payload = value.get("systemPayload")
    payload = payload if isinstance(payload, dict) else {}
    subtype = _text(value.get("subtype"))
    compressed, malformed = _compressed(payload) if subtype == "chat_compression" else (None, False)
    return QwenRecord(
        line=line,
        uuid=value["uuid"],
        parent_uuid=value["parentUuid"] or None,
        session_id=value["sessionId"],
        type=RecordType(value["type"]),
        subtype=subtype,
        timestamp=_text(value.get("timestamp")),
        cwd=_text(value.get("cwd")),
        version=_text(value.get("version")),
        message=decode_content(value.get("message")),
        compressed=compressed,
        compression_malformed=malformed,
        slash=_slash(payload) if subtype == "slash_command" else None,
        usage=_usage(value.get("usageMetadata")),
        api_usage=_api_usage(payload) if subtype == "ui_telemetry" else None,
        replaced_utf8=replaced,
        sidechain=value.get("isSidechain") is True,
    )


def _not_json(line: bytes) -> LineKind:
    stripped = line.rstrip()
    return (
        LineKind.TRUNCATED if stripped.startswith(b"{") and not stripped.endswith(b"}") else LineKind.NOT_JSON
    )


def decode_line(line: bytes, number: int, limits: LineLimits) -> Decoded:
    """One line's record, why Qwen Code skips it, or the kind of line it is."""
    if not line.strip():
        return LineKind.BLANK
    if len(line) > limits.max_line_bytes:
        return LineKind.TOO_LONG
    if too_deep(line, limits.max_json_depth):
        return LineKind.NESTING_TOO_DEEP
    readable = readable_utf8(line)
    try:
        value = orjson.loads(readable)
    except orjson.JSONDecodeError:
        return _not_json(readable)
    if not isinstance(value, dict):
        return LineKind.NOT_OBJECT
    return record_of(value, number, readable is not line)


def _kind(decoded: Decoded) -> LineKind:
    return decoded if isinstance(decoded, LineKind) else LineKind.RECORD


def decode_session(data: bytes, limits: LineLimits) -> Session:
    """Index and decode every physical line of a session's bytes."""
    offsets: list[int] = []
    lengths: list[int] = []
    decoded: list[Decoded] = []
    crlf = 0
    for start, end in iter_line_spans(data):
        offsets.append(start)
        lengths.append(end - start)
        content_end = end - 1 if end > start and data[end - 1] == 0x0D else end
        crlf += content_end != end
        content_start = start + len(BOM) if start == 0 and data.startswith(BOM) else start
        decoded.append(decode_line(data[content_start:content_end], len(offsets), limits))
    return Session(
        offsets=tuple(offsets),
        lengths=tuple(lengths),
        kinds=tuple(map(_kind, decoded)),
        decoded=tuple(decoded),
        has_bom=data.startswith(BOM),
        crlf_lines=crlf,
        final_newline=data.endswith(b"\n"),
    )


def raw_line(data: bytes, session: Session, line: int) -> bytes:
    """Exact bytes of a line without its terminator (CR and the file's BOM removed)."""
    start, end = content_span(data, session.offsets[line - 1], session.lengths[line - 1], first=line == 1)
    return data[start:end]


class DocumentLayout(StrEnum):
    """Which whole-file JSON document Qwen Code saved (none of them a session file it resumes)."""

    TMP_CHAT = "tmp-chats-session-json"  # the older `tmp/<project hash>/chats/session-*.json` chat
    CHECKPOINT = "chat-save-checkpoint"  # a `/chat save` checkpoint: the bare API history


def json_document_layout(data: bytes) -> DocumentLayout | None:
    """The layout of a file that is one JSON object or array (a chat or a checkpoint document);
    None when it is no JSON document."""
    body = data.removeprefix(BOM).strip()
    if body[:1] not in (b"{", b"["):
        return None
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if isinstance(document, dict) and isinstance(document.get("messages"), list):
        return DocumentLayout.TMP_CHAT
    return DocumentLayout.CHECKPOINT if isinstance(document, dict | list) else None
