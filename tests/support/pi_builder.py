"""A builder of pi (version 3) sessions of any size, for tests and benchmarks of giants.

Entries are written as pi 1.6.0 writes them (8-hex ids linked by `parentId`, an assistant's
`toolCall` blocks answered by `toolResult` messages, `usage` on each assistant message), from a
seed, so the same seed gives the same bytes. The pi-written fixtures (tests/fixtures/pi/) are the
ground truth of the shapes; this only makes them large.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson

__all__ = ["PiSessionBuilder"]

_USAGE = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}


class PiSessionBuilder:
    """Append turns, compactions and branches; `to_bytes()` or `write(path)` the session."""

    def __init__(self, seed: int = 0, cwd: str = "/work/project") -> None:
        self._random = random.Random(seed)
        self._lines: list[bytes] = []
        self._ids: set[str] = set()
        self.leaf: str | None = None
        self.ids: list[str] = []  # every entry id, in file order
        self._call = 0
        self._written = 0  # bytes of the lines counted so far (`_context_tokens`)
        self._counted = 0
        header = {
            "type": "session",
            "version": 3,
            "id": f"{seed:08x}-0000-7000-8000-000000000000",
            "timestamp": "2026-12-01T00:00:00.000Z",
            "cwd": cwd,
        }
        self._lines.append(orjson.dumps(header))
        self._entry({"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-5"})
        self._entry({"type": "thinking_level_change", "thinkingLevel": "off"})

    def _new_id(self) -> str:
        while True:
            candidate = f"{self._random.getrandbits(32):08x}"
            if candidate not in self._ids:
                self._ids.add(candidate)
                return candidate

    def _entry(self, fields: dict[str, Any], parent: str | None = None) -> str:
        entry_id = self._new_id()
        stamp = f"2026-12-01T00:{len(self._lines) // 60 % 60:02d}:{len(self._lines) % 60:02d}.000Z"
        record = {
            "type": fields.pop("type"),
            "id": entry_id,
            "parentId": self.leaf if parent is None else parent,
            "timestamp": stamp,
            **fields,
        }
        self._lines.append(orjson.dumps(record))
        self.leaf = entry_id
        self.ids.append(entry_id)
        return entry_id

    def _message(self, message: dict[str, Any]) -> str:
        return self._entry(
            {"type": "message", "message": {**message, "timestamp": 1796600000000 + len(self._lines)}}
        )

    def _context_tokens(self) -> int:
        """What a provider would bill as input here: the session so far, at about 4 bytes a token
        (pi reads its context size from the last assistant message's usage)."""
        self._written += sum(len(line) for line in self._lines[self._counted :])
        self._counted = len(self._lines)
        return self._written // 4

    def _words(self, size: int) -> str:
        words = ("parser", "module", "fix", "test", "error", "value", "return", "config", "path", "line")
        out, total = [], 0
        while total < size:
            word = self._random.choice(words)
            out.append(word)
            total += len(word) + 1
        return " ".join(out)

    def turn(self, prompt: str, *, tools: int = 1, output_bytes: int = 2000) -> PiSessionBuilder:
        """A prompt, `tools` rounds of one bash call and its output, and a closing answer."""
        self._message({"role": "user", "content": [{"type": "text", "text": prompt}]})
        for _ in range(tools):
            self._call += 1
            call_id = f"call_{self._call}"
            arguments = {"command": f"grep -n {self._words(12)} src/module_{self._call}.py"}
            self._message(
                {
                    "role": "assistant",
                    "content": [{"type": "toolCall", "id": call_id, "name": "bash", "arguments": arguments}],
                    "api": "anthropic-messages",
                    "provider": "anthropic",
                    "model": "claude-sonnet-5",
                    "usage": {**_USAGE, "input": self._context_tokens(), "output": 40},
                    "stopReason": "toolUse",
                }
            )
            self._message(
                {
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": "bash",
                    "content": [{"type": "text", "text": self._words(output_bytes)}],
                    "isError": False,
                }
            )
        self._message(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": self._words(200)}],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-sonnet-5",
                "usage": {**_USAGE, "input": self._context_tokens(), "output": 60},
                "stopReason": "stop",
            }
        )
        return self

    def compaction(self, summary: str, first_kept: str) -> PiSessionBuilder:
        """pi's own compaction entry keeping from `first_kept` on."""
        self._entry(
            {
                "type": "compaction",
                "summary": summary,
                "firstKeptEntryId": first_kept,
                "tokensBefore": 1,
                "details": {"readFiles": [], "modifiedFiles": []},
                "fromHook": False,
            }
        )
        return self

    def branch_from(self, entry_id: str) -> PiSessionBuilder:
        """Continue from an earlier entry (pi's `/tree`): the entries since are another branch."""
        self.leaf = entry_id
        return self

    def to_bytes(self) -> bytes:
        return b"\n".join(self._lines) + b"\n"

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.to_bytes())
        return path
