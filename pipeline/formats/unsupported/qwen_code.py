"""Qwen Code: Claude-Code-like `uuid`/`parentUuid` records that hold Gemini-style `message.parts`.

`~/.qwen/projects/<cwd>/chats/<session-id>.jsonl`: each record has `uuid`, `parentUuid`,
`sessionId`, `timestamp`, `type` user|assistant|tool_result|system, `cwd`, `version`; a turn's
`message` is a Gemini API `Content` (`role` user|model, `parts`), a system record carries a
`subtype` and its `systemPayload`. Its `/chat save` checkpoints (and any one-document chat) have
Gemini CLI's shape, Qwen Code being a fork: under `~/.qwen` they are Qwen Code's.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Final

from pipeline.formats.gemini_cli.signature import QWEN_HOME, is_chat_document, under_home
from pipeline.formats.identity import Record, Signature
from pipeline.vocabulary import SourceFormat

__all__ = ["QWEN_CODE"]

_TYPES: Final = frozenset({"user", "assistant", "tool_result", "system"})


def is_qwen_record(record: Record) -> bool:
    """Whether one JSON line is a Qwen Code chat record."""
    if record.get("type") not in _TYPES or "uuid" not in record or "parentUuid" not in record:
        return False
    message = record.get("message")
    return (
        (isinstance(message, dict) and isinstance(message.get("parts"), list))
        or isinstance(record.get("systemPayload"), dict)
        or record.get("type") == "tool_result"
    )


def is_qwen_document(document: object, path: PurePath | None) -> bool:
    """Whether a whole-file JSON value is a chat or checkpoint Qwen Code saved under its home."""
    return under_home(path, QWEN_HOME) and is_chat_document(document, path)


QWEN_CODE: Final = Signature(SourceFormat.QWEN_CODE, record=is_qwen_record, document=is_qwen_document)
