"""Codex rollout records, recognized by their shapes; and where Codex keeps its rollouts.

Current rollouts write `{timestamp, type, payload}` lines of a few known types; the 0.2x layout
starts with a bare meta line (`id`, `timestamp`, `instructions`, no `type`) followed by
`{"record_type": "state"}` lines.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Final

from pipeline.formats.identity import Record, Signature
from pipeline.vocabulary import SourceFormat

__all__ = ["CODEX"]

_TYPES: Final = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})


def _is_legacy(record: Record) -> bool:
    """The 0.2x rollout layout: a bare meta line first, then `{"record_type": "state"}` lines."""
    if record.get("record_type") == "state":
        return True
    return "type" not in record and "instructions" in record and "id" in record and "timestamp" in record


def is_rollout_record(record: Record) -> bool:
    """Whether one JSON line is a record Codex writes into a rollout."""
    return (record.get("type") in _TYPES and "payload" in record) or _is_legacy(record)


def _roots(environ: Mapping[str, str], home: Path) -> tuple[Path, ...]:
    """`$CODEX_HOME/sessions`, else `~/.codex/sessions`."""
    base = environ.get("CODEX_HOME")
    return (Path(base) / "sessions" if base else home / ".codex" / "sessions",)


CODEX: Final = Signature(SourceFormat.CODEX, record=is_rollout_record, roots=_roots)
