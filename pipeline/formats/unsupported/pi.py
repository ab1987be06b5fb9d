"""pi (and OpenClaw, which writes the same JSONL): a `session` header, then entries.

`~/.pi/agent/sessions/--<cwd>--/<ts>_<uuid>.jsonl`, `~/.openclaw/agents/<agent>/sessions/`.
The header is `{"type": "session", "version": 3, "id", "timestamp", "cwd"}` (older files have
no `version`); entries are linked by `id`/`parentId` (older ones have neither) and a `message`
entry holds `message.role` and `message.content`.
"""

from __future__ import annotations

from typing import Final

from pipeline.formats.identity import Record, Signature, is_str
from pipeline.vocabulary import SourceFormat

__all__ = ["PI"]

_ENTRIES: Final = frozenset(
    {
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
    }
)


def _header(record: Record) -> bool:
    return isinstance(record.get("version"), int) or is_str(record.get("id")) or is_str(record.get("cwd"))


def is_pi_record(record: Record) -> bool:
    """Whether one JSON line is pi's session header or one of its entries."""
    kind = record.get("type")
    if kind == "session":
        return _header(record)
    if kind not in _ENTRIES:
        return False
    return (is_str(record.get("id")) and "parentId" in record) or isinstance(record.get("message"), dict)


PI: Final = Signature(SourceFormat.PI, record=is_pi_record)
