"""GitHub Copilot CLI: a session's event log.

`~/.copilot/session-state/<session-id>/events.jsonl` (older: `session-state/<session-id>.jsonl`):
every line is an event `{type, data, id, timestamp, parentId}` whose `type` is a dotted name in
one of Copilot's namespaces (`session.start`, `user.message`, `assistant.message`,
`tool.execution_start`, ...).
"""

from __future__ import annotations

from typing import Final

from pipeline.formats.identity import Record, Signature, is_str
from pipeline.vocabulary import SourceFormat

__all__ = ["COPILOT_CLI"]

_NAMESPACES: Final = frozenset(
    {"session", "user", "assistant", "tool", "subagent", "hook", "skill", "system"}
)


def is_copilot_event(record: Record) -> bool:
    """Whether one JSON line is a Copilot CLI session event."""
    kind = record.get("type")
    if not isinstance(kind, str) or "." not in kind or kind.split(".", 1)[0] not in _NAMESPACES:
        return False
    return isinstance(record.get("data"), dict) and is_str(record.get("id")) and "parentId" in record


COPILOT_CLI: Final = Signature(SourceFormat.COPILOT_CLI, record=is_copilot_event)
