"""Recognize which agent wrote a transcript from its first records, without reading it all.

Only Claude Code sessions are processed; Codex, pi and gemini-cli sessions are named so that a
sweep can report them as a known format that is not supported yet.
"""

from __future__ import annotations

from typing import Any, Final

import orjson

from pipeline.vocabulary import SourceFormat

__all__ = ["detect_format"]

_SNIFF_LINES: Final = 64
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


def _vote(record: dict[str, Any]) -> SourceFormat | None:
    record_type = record.get("type")
    if record_type in _CODEX_TYPES and "payload" in record:
        return SourceFormat.CODEX
    if any(key in record for key in _CLAUDE_KEYS):
        return SourceFormat.CLAUDE_CODE
    if record_type in _PI_TYPES and ("id" in record or "parentId" in record or "message" in record):
        return SourceFormat.PI
    if record_type in _CLAUDE_TYPES:
        return SourceFormat.CLAUDE_CODE
    return None


def _is_gemini(data: bytes) -> bool:
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


def detect_format(data: bytes) -> SourceFormat:
    """Name the transcript format of a whole file's bytes."""
    body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    if not body.strip():
        return SourceFormat.EMPTY
    start = 0
    for _ in range(_SNIFF_LINES):
        end = body.find(b"\n", start)
        line = body[start:] if end < 0 else body[start:end]
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            record = None
        if isinstance(record, dict):
            verdict = _vote(record)
            if verdict is not None:
                return verdict
        if end < 0:
            break
        start = end + 1
    if body.lstrip().startswith(b"{") and _is_gemini(body):
        return SourceFormat.GEMINI_CLI
    return SourceFormat.UNKNOWN
