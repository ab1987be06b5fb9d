"""Gemini CLI: chat JSONL, the legacy one-document chats, `/chat save` checkpoints, the prompt log.

`~/.gemini/tmp/<project>/chats/session-*.jsonl` (since April 2026; a subagent's under
`chats/<parent-session>/`): a metadata line (`sessionId`, `projectHash`, `startTime`, ...), then
message records (`id`, `timestamp`, `type` user|gemini|info|error|warning, `content`), re-appended
by id when updated, and `{"$set": ...}` / `{"$rewindTo": id}` lines. Before that, `session-*.json`
held one document with `sessionId`, `projectHash` and `messages`. `checkpoint-<tag>.json` holds the
API history (`{"history": [{role, parts}]}`, or the bare list in old versions); `logs.json` the
prompts typed (`sessionId`, `messageId`, `type`, `message`).
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Final

from pipeline.formats.identity import Record, Signature, is_str
from pipeline.vocabulary import SourceFormat

__all__ = ["GEMINI_CLI"]

_MESSAGE_TYPES: Final = frozenset({"user", "gemini", "info", "error", "warning"})
_CHECKPOINT_PREFIX: Final = "checkpoint-"


def is_gemini_record(record: Record) -> bool:
    """Whether one JSON line is a Gemini CLI chat record (metadata, message or update)."""
    if is_str(record.get("sessionId")) and is_str(record.get("projectHash")):
        return True
    if isinstance(record.get("$set"), dict) or is_str(record.get("$rewindTo")):
        return True
    return (
        record.get("type") in _MESSAGE_TYPES
        and is_str(record.get("id"))
        and "timestamp" in record
        and "content" in record
    )


def _is_content(item: object) -> bool:
    """One Gemini API history entry: `{role, parts: [...]}`."""
    return isinstance(item, dict) and isinstance(item.get("parts"), list) and is_str(item.get("role"))


def _checkpoint(document: object, path: PurePath | None) -> bool:
    history = document.get("history") if isinstance(document, dict) else document
    if not isinstance(history, list) or not all(_is_content(item) for item in history):
        return False
    named = path is not None and path.name.startswith(_CHECKPOINT_PREFIX)
    return bool(history) or named


def _prompt_log(document: object) -> bool:
    return (
        isinstance(document, list)
        and bool(document)
        and all(
            isinstance(entry, dict) and "sessionId" in entry and "messageId" in entry and "message" in entry
            for entry in document
        )
    )


def is_gemini_document(document: object, path: PurePath | None) -> bool:
    """Whether a whole-file JSON value is a Gemini CLI chat, checkpoint or prompt log."""
    if isinstance(document, dict) and isinstance(document.get("messages"), list):
        return "sessionId" in document or "projectHash" in document
    return _checkpoint(document, path) or _prompt_log(document)


GEMINI_CLI: Final = Signature(SourceFormat.GEMINI_CLI, record=is_gemini_record, document=is_gemini_document)
