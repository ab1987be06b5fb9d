"""Qwen Code: Claude-Code-like `uuid`/`parentUuid` records that hold Gemini-style `message.parts`.

`~/.qwen/projects/<sanitized cwd>/chats/<sessionId>.jsonl` (`$QWEN_HOME` in place of `~/.qwen`):
each record has `uuid`, `parentUuid`, `sessionId`, `type` user|assistant|tool_result|system; a
turn's `message` is a Gemini API `Content` (`role` user|model, `parts`), a system record carries a
`subtype` and its `systemPayload`. That is positive: Claude Code's messages hold `content`, never
`parts`, and it writes no `systemPayload` and no `tool_result` records. Its `/chat save`
checkpoints and the older `.qwen/tmp/<hash>/chats/session-*.json` documents have Gemini CLI's
shape, Qwen Code being a fork: under `.qwen` they are Qwen Code's.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path, PurePath
from typing import Final

from pipeline.formats.chat_documents import is_chat_document, under_home
from pipeline.formats.identity import Record, Signature, is_str
from pipeline.vocabulary import SourceFormat

__all__ = ["QWEN_CODE", "is_qwen_document", "is_qwen_record", "is_subagent_transcript", "session_roots"]

_TYPES: Final = frozenset({"user", "assistant", "tool_result", "system"})
HOME_ENV: Final = "QWEN_HOME"  # Qwen Code's own override of ~/.qwen
QWEN_HOME: Final = ".qwen"
SUBAGENTS: Final = "subagents"  # `<project>/subagents/<sessionId>/agent-<agentId>.jsonl`


def is_qwen_record(record: Record) -> bool:
    """Whether one JSON line is a Qwen Code chat record."""
    if record.get("type") not in _TYPES or not is_str(record.get("uuid")) or "parentUuid" not in record:
        return False
    if not is_str(record.get("sessionId")):
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


def is_subagent_transcript(path: PurePath | None) -> bool:
    """Whether a file lies where Qwen Code writes a subagent's transcript (beside the parent
    session's `chats/`, in `subagents/<sessionId>/agent-<agentId>.jsonl`)."""
    return path is not None and path.name.startswith("agent-") and path.parent.parent.name == SUBAGENTS


def session_roots(environ: Mapping[str, str], home: Path) -> tuple[Path, ...]:
    """Where Qwen Code keeps its sessions (`$QWEN_HOME/projects`, else `~/.qwen/projects`): a run
    without paths reads them beside the other processed formats' roots."""
    base = Path(environ[HOME_ENV]).expanduser() if environ.get(HOME_ENV) else home / QWEN_HOME
    return (base / "projects",)


QWEN_CODE: Final = Signature(
    SourceFormat.QWEN_CODE, record=is_qwen_record, document=is_qwen_document, roots=session_roots
)
