"""pi (and OpenClaw, which writes the same JSONL): a `session` header, then entries.

`~/.pi/agent/sessions/--<cwd>--/<ts>_<uuid>.jsonl` (`$PI_CODING_AGENT_DIR/sessions` when set),
OpenClaw's `~/.openclaw/agents/<agent>/sessions/<uuid>.jsonl`. The header is `{"type": "session",
"version": 3, "id", "timestamp", "cwd"}` (older files have no `version`); entries are linked by
`id`/`parentId` (older ones have neither) and a `message` entry holds `message.role` and
`message.content`. Identification is positive: a line is pi's when it is that header or one of
pi's entry types carrying pi's links or its `message` object. OpenClaw renames a session it resets
or deletes to `<id>.jsonl.reset.<ts>` / `<id>.jsonl.deleted.<ts>`: discovery takes those names too
(no client resumes them: they are read and counted, never replaced), and OpenClaw's SQLite store
(`agents/<agent>/agent/openclaw-agent.sqlite`) as a store of sessions, one report each.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from pipeline.formats.identity import Record, Signature, is_str
from pipeline.formats.pi.openclaw_store import OPENCLAW_STORE
from pipeline.vocabulary import SourceFormat

__all__ = ["PI", "is_openclaw_archive", "is_pi_record", "session_roots"]

_ARCHIVE_NAME: Final = re.compile(r"[^.].*\.jsonl\.(?:reset|deleted)\.[^.][^/]*")

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
        "usage",
        "context_edit",
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


def session_roots(environ: Mapping[str, str], home: Path) -> tuple[Path, ...]:
    """pi's session directory (`$PI_CODING_AGENT_DIR/sessions`, else `~/.pi/agent/sessions`) and
    OpenClaw's agents directory (each agent's sessions below it)."""
    agent_dir = environ.get("PI_CODING_AGENT_DIR")
    pi = Path(agent_dir).expanduser() / "sessions" if agent_dir else home / ".pi" / "agent" / "sessions"
    return (pi, home / ".openclaw" / "agents")


def is_openclaw_archive(name: str) -> bool:
    """Whether a file name is OpenClaw's archive of a reset or deleted session (`<id>.jsonl.reset.<ts>`,
    `<id>.jsonl.deleted.<ts>`; a hidden name is not)."""
    return _ARCHIVE_NAME.fullmatch(name) is not None


PI: Final = Signature(
    SourceFormat.PI,
    record=is_pi_record,
    roots=session_roots,
    named=is_openclaw_archive,
    store=OPENCLAW_STORE,
)
