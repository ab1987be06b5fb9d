"""CodeWhale session documents built in the form its serde writes (`SavedSession`), for tests
that need a shape the real client's fixtures do not show (damage, legacy checkpoints, branches),
and the fixtures the real CodeWhale wrote (`tests/fixtures/codewhale/`).

Field order follows the Rust structs, so a document built here serializes as CodeWhale's own.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from pipeline.formats.line_guard import LineLimits

__all__ = ["FIXTURES", "LIMITS", "SessionBuilder", "call", "fixture_files", "result", "text"]

FIXTURES: Final = Path(__file__).resolve().parents[1] / "fixtures" / "codewhale"
LIMITS: Final = LineLimits(max_line_bytes=1 << 26, max_json_depth=200)

Json = dict[str, Any]


def fixture_files() -> list[Path]:
    """The sessions the real CodeWhale wrote (`tests/support/codewhale_model.py` records them)."""
    return sorted(FIXTURES.glob("*.json"))


def text(role: str, body: str) -> Json:
    """A message of one text block."""
    return {"role": role, "content": [{"type": "text", "text": body}]}


def call(call_id: str, name: str = "exec_shell", arguments: Json | None = None, say: str = "") -> Json:
    """An assistant message making one tool call (after an optional text)."""
    blocks: list[Json] = [{"type": "text", "text": say}] if say else []
    blocks.append({"type": "tool_use", "id": call_id, "name": name, "input": arguments or {"command": "ls"}})
    return {"role": "assistant", "content": blocks}


def result(call_id: str, body: str, *, error: bool = False) -> Json:
    """A user message carrying one tool result."""
    block: Json = {"type": "tool_result", "tool_use_id": call_id, "content": body}
    if error:
        block["is_error"] = True
    return {"role": "user", "content": [block]}


@dataclass
class SessionBuilder:
    """A session whose journal grows one message entry at a time (or a journal-less legacy one)."""

    session_id: str = "11111111-2222-4333-8444-555555555555"
    journal: bool = True
    entries: list[Json] = field(default_factory=list)
    leaf: str | None = None
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def add(self, message: Json, parent: str | None = "leaf") -> str:
        """Append a message entry under the leaf (or under `parent`); returns its id."""
        taken = {e["id"] for e in self.entries}  # entries passed in (a composed journal) keep their ids
        entry_id = next(i for i in (f"00000000-0000-4000-8000-{n:012d}" for n in self._ids) if i not in taken)
        entry: Json = {"id": entry_id}
        up = self.leaf if parent == "leaf" else parent
        if up is not None:
            entry["parent_id"] = up
        entry |= {
            "kind": "message",
            "message": message,
            "created_at": "2026-12-01T10:00:00Z",
            "spawn_depth": 0,
        }
        self.entries.append(entry)
        self.leaf = entry_id
        return entry_id

    def extend(self, messages: Sequence[Json]) -> None:
        """Append each message in order."""
        for message in messages:
            self.add(message)

    def active(self) -> list[Json]:
        """The messages of the branch ending at the leaf."""
        index = {e["id"]: e for e in self.entries}
        path, cursor = [], self.leaf
        while cursor is not None:
            path.append(index[cursor]["message"])
            cursor = index[cursor].get("parent_id")
        return path[::-1]

    def document(self) -> Json:
        """The session as CodeWhale saves it."""
        messages = self.active()
        doc: Json = {
            "schema_version": 1,
            "metadata": {
                "id": self.session_id,
                "title": "test session",
                "created_at": "2026-12-01T10:00:00Z",
                "updated_at": "2026-12-01T10:05:00Z",
                "message_count": len(messages),
                "total_tokens": 1234,
                "model": "capture-model",
                "model_provider": "openai",
                "workspace": "/tmp/work",
                "mode": "agent",
                "cost": {},
                "cumulative_turn_secs": 0,
                "spawn_depth": 0,
            },
            "messages": messages,
        }
        if self.journal:
            doc["journal"] = {
                "entries": self.entries,
                "leaf_id": self.leaf,
                "schema_version": 1,
                "spawn_depth": 0,
            }
            doc["leaf_id"] = self.leaf
        doc["system_prompt"] = None
        return doc

    def bytes(self) -> bytes:
        """The document as CodeWhale writes it: compact JSON, one line."""
        return json.dumps(self.document(), separators=(",", ":"), ensure_ascii=False).encode()
