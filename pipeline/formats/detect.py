"""Recognize which agent wrote a transcript from its first records, without reading it all.

Claude Code sessions and Codex rollouts are processed; pi and gemini-cli sessions are named so
that a sweep can report them as a known format that is not supported yet.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any, Final

import orjson

from pipeline.vocabulary import SourceFormat

__all__ = ["NotTranscript", "detect_format", "why_not_a_transcript"]

_SNIFF_LINES: Final = 64
_BOM: Final = b"\xef\xbb\xbf"
_NOT_SPACE: Final = re.compile(rb"[^ \t\n\r\x0b\x0c]")  # what `bytes.strip` keeps
_BINARY_PROBE: Final = 65536  # NUL bytes or many invalid sequences here: not text at all
_WHOLE_DOCUMENT_LIMIT: Final = 256 * 1024 * 1024  # gemini-cli writes one JSON document per session
_CODEX_TYPES: Final = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
_PI_TYPES: Final = frozenset({"session", "message", "model_change", "thinking_level_change", "compaction"})
_CLAUDE_KEYS: Final = ("uuid", "parentUuid", "sessionId", "leafUuid", "isSidechain")
_CLAUDE_TYPES: Final = frozenset(
    {
        "user",
        "assistant",
        "system",
        "summary",
        "attachment",
        "progress",
        "last-prompt",
        "file-history-snapshot",
        "queue-operation",
        "custom-title",
        "ai-title",
        "mode",
        "permission-mode",
        "agent-name",
    }
)


class NotTranscript(StrEnum):
    """What a file holds when it is no agent's transcript."""

    EMPTY = "empty"
    BINARY = "binary"
    JSON_DOCUMENT = "json-document"  # one JSON value, not JSON lines
    UNKNOWN_RECORDS = "json-lines-of-no-known-agent"
    TEXT = "text"  # lines, none of them a JSON object


def _is_legacy_codex(record: dict[str, Any]) -> bool:
    """The 0.2x rollout layout: a bare meta line first, then `{"record_type": "state"}` lines."""
    if record.get("record_type") == "state":
        return True
    return "type" not in record and "instructions" in record and "id" in record and "timestamp" in record


def _vote(record: dict[str, Any]) -> SourceFormat | None:
    record_type = record.get("type")
    if record_type in _CODEX_TYPES and "payload" in record:
        return SourceFormat.CODEX
    if _is_legacy_codex(record):
        return SourceFormat.CODEX
    if any(key in record for key in _CLAUDE_KEYS):
        return SourceFormat.CLAUDE_CODE
    if record_type in _PI_TYPES and ("id" in record or "parentId" in record or "message" in record):
        return SourceFormat.PI
    if record_type in _CLAUDE_TYPES:
        return SourceFormat.CLAUDE_CODE
    return None


def _is_gemini(data: bytes | memoryview) -> bool:
    if len(data) > _WHOLE_DOCUMENT_LIMIT:
        return False
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        return False
    return (
        isinstance(document, dict)
        and isinstance(document.get("messages"), list)
        and ("sessionId" in document or "projectHash" in document)
    )


def _votes(body: bytes, start: int, limit: int | None) -> tuple[SourceFormat | None, int, int]:
    """The first format a line votes for, from `start`, within `limit` lines; objects seen; end."""
    objects, seen = 0, 0
    while start < len(body) and (limit is None or seen < limit):
        end = body.find(b"\n", start)
        line = body[start:] if end < 0 else body[start:end]
        seen += 1
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            record = None
        if isinstance(record, dict):
            objects += 1
            verdict = _vote(record)
            if verdict is not None:
                return verdict, objects, start
        if end < 0:
            return None, objects, len(body)
        start = end + 1
    return None, objects, start


def detect_format(data: bytes) -> SourceFormat:
    """Name the transcript format of a whole file's bytes (read in place: a session can be 1 GB)."""
    start = len(_BOM) if data.startswith(_BOM) else 0
    first = _NOT_SPACE.search(data, start)
    if first is None:
        return SourceFormat.EMPTY
    verdict, _, resume_at = _votes(data, start, _SNIFF_LINES)
    if verdict is not None:
        return verdict
    if data.startswith(b"{", first.start()) and _is_gemini(memoryview(data)[start:]):
        return SourceFormat.GEMINI_CLI
    # A damaged head must not hide a transcript: read on until a line says what the file is.
    verdict, _, _ = _votes(data, resume_at, None)
    return verdict if verdict is not None else SourceFormat.UNKNOWN


def why_not_a_transcript(data: bytes) -> NotTranscript:
    """What a file that no line marks as any agent's transcript holds instead."""
    body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    if not body.strip():
        return NotTranscript.EMPTY
    head = body[:_BINARY_PROBE]
    if b"\x00" in head or head.decode("utf-8", "replace").count("\ufffd") > len(head) // 100:
        return NotTranscript.BINARY
    stripped = body.strip()
    if stripped[:1] in (b"[", b"{") and b"\n" not in stripped and len(stripped) <= _WHOLE_DOCUMENT_LIMIT:
        try:
            orjson.loads(stripped)
        except orjson.JSONDecodeError:
            pass
        else:
            return NotTranscript.JSON_DOCUMENT
    _, objects, _ = _votes(body, 0, None)
    return NotTranscript.UNKNOWN_RECORDS if objects else NotTranscript.TEXT
