"""Claude Code's own records, recognized by their shapes; and where Claude Code keeps sessions.

A record is Claude Code's when it carries Claude Code's chain envelope (`userType` with
`isSidechain` and the uuid keys), or has the shape Claude Code writes for its type: a chat turn
whose `message.content` is a string or a list of typed blocks (never Gemini-style `parts`), a
system, attachment or progress record on the uuid chain, or one of the bookkeeping records
(`summary`, `last-prompt`, `file-history-snapshot`, ...) with its own key. Having a `uuid` is
not enough: Qwen Code writes `uuid`/`parentUuid` records too.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Final

from pipeline.formats.identity import Record, Signature, is_str
from pipeline.vocabulary import SourceFormat

__all__ = ["CLAUDE_CODE"]

_CHAIN_KEYS: Final = ("uuid", "parentUuid", "sessionId")
_TURNS: Final = frozenset({"user", "assistant"})
# The records that are no chat turn, each with the key only Claude Code writes on it.
_BOOKKEEPING: Final = {
    "summary": ("leafUuid",),
    "last-prompt": ("lastPrompt", "leafUuid"),
    "file-history-snapshot": ("snapshot",),
    "queue-operation": ("operation",),
    "custom-title": ("customTitle",),
    "ai-title": ("aiTitle",),
    "mode": ("mode",),
    "permission-mode": ("permissionMode",),
    "agent-name": ("agentName",),
}
_SYSTEM_SUBTYPES: Final = frozenset(
    {
        "compact_boundary",
        "microcompact_boundary",
        "turn_duration",
        "stop_hook_summary",
        "local_command",
        "api_error",
        "informational",
        "away_summary",
        "session_start",
    }
)


def _blocks(content: object) -> bool:
    """A message's content as Claude Code writes it: text, or a list of typed blocks."""
    if content is None or isinstance(content, str):
        return True
    return isinstance(content, list) and all(
        isinstance(block, dict) and is_str(block.get("type")) for block in content
    )


def _turn(record: Record, kind: str) -> bool:
    message = record.get("message")
    if not isinstance(message, dict) or "parts" in message or "content" not in message:
        return False
    return message.get("role") in (kind, None) and _blocks(message["content"])


def _system(record: Record) -> bool:
    return (
        is_str(record.get("content"))
        or "level" in record
        or "userType" in record
        or record.get("subtype") in _SYSTEM_SUBTYPES
    )


def _on_chain(record: Record, kind: str) -> bool:
    """A record Claude Code links into its uuid chain, by the shape of its type."""
    if kind in _TURNS:
        return _turn(record, kind)
    if kind == "system":
        return _system(record)
    if kind == "attachment":
        return isinstance(record.get("attachment"), dict)
    if kind == "progress":
        return isinstance(record.get("data"), dict) and ("toolUseID" in record or "parentToolUseID" in record)
    return False


def _envelope(record: Record) -> bool:
    """The keys Claude Code puts on every chain record (`userType` is its own): a record carrying
    them is Claude Code's even where a damaged field no longer has its type's shape."""
    return "userType" in record and "isSidechain" in record and any(key in record for key in _CHAIN_KEYS)


def is_claude_code_record(record: Record) -> bool:
    """Whether one JSON line is a record Claude Code writes."""
    if _envelope(record):
        return True
    kind = record.get("type")
    if not isinstance(kind, str):
        return False
    own_keys = _BOOKKEEPING.get(kind)
    if own_keys is not None:
        return any(key in record for key in own_keys)
    return any(key in record for key in _CHAIN_KEYS) and _on_chain(record, kind)


def _roots(environ: Mapping[str, str], home: Path) -> tuple[Path, ...]:
    """`$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`."""
    base = environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base) / "projects" if base else home / ".claude" / "projects",)


CLAUDE_CODE: Final = Signature(SourceFormat.CLAUDE_CODE, record=is_claude_code_record, roots=_roots)
