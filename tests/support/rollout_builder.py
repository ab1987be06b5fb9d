"""`RolloutBuilder`: Codex CLI rollouts record by record, in the shapes real rollouts have.

Each record is `{timestamp, type, payload}` in Codex's own key order (session_meta first; a turn
is task_started, turn_context, the user message as a response item and as a user_message event,
then reasoning, calls and outputs by `call_id`, assistant messages, token_count events and
task_complete). `compacted` records are written with or without `replacement_history`, and raw
lines let a test damage a file. Deterministic for a seed: ids and timestamps come from it.
"""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

__all__ = ["RolloutBuilder"]

Json = dict[str, Any]
_EPOCH = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


class RolloutBuilder:
    """Appends rollout lines; `to_bytes` is the file."""

    def __init__(self, *, seed: int = 0, cli_version: str = "0.171.0", model: str = "gpt-5.4") -> None:
        self._random = random.Random(seed)
        self._lines: list[bytes] = []
        self._tick = 0
        self.model = model
        self.session_id = self._uuid()
        self.turn_id: str | None = None
        self._record("session_meta", {
            "id": self.session_id, "timestamp": self._now(), "cwd": "/work/project",
            "originator": "codex_cli_rs", "cli_version": cli_version, "source": "cli",
            "model_provider": "openai", "base_instructions": {"text": "You are Codex."},
        })  # fmt: skip

    def _uuid(self) -> str:
        return str(uuid.UUID(int=self._random.getrandbits(128), version=4))

    def _now(self) -> str:
        self._tick += 1
        return (
            (_EPOCH + timedelta(seconds=self._tick)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        )

    def _record(self, kind: str, payload: Json) -> int:
        self._lines.append(orjson.dumps({"timestamp": self._now(), "type": kind, "payload": payload}))
        return len(self._lines)

    @property
    def lines(self) -> int:
        """Lines written so far (the 1-based number of the last one)."""
        return len(self._lines)

    def item(self, payload: Json) -> int:
        """A response item as given; its line number."""
        return self._record("response_item", payload)

    def event(self, kind: str, **fields: Any) -> int:
        return self._record("event_msg", {"type": kind, **fields})

    @staticmethod
    def message(role: str, text: str) -> Json:
        part = "output_text" if role == "assistant" else "input_text"
        return {"type": "message", "role": role, "content": [{"type": part, "text": text}]}

    def context(
        self, text: str = "<environment_context>\n  <cwd>/work/project</cwd>\n</environment_context>"
    ) -> int:
        """A message Codex injects itself (developer or contextual user text): no user turn."""
        return self.item(self.message("user", text))

    def turn(self, text: str) -> int:
        """Open a user turn: lifecycle event, turn context, the prompt (item and event)."""
        self.turn_id = self._uuid()
        self.event("task_started", turn_id=self.turn_id, model_context_window=258400)
        self._record(
            "turn_context",
            {
                "turn_id": self.turn_id,
                "cwd": "/work/project",
                "model": self.model,
                "approval_policy": "never",
                "sandbox_policy": {"type": "danger-full-access"},
            },
        )
        line = self.item(self.message("user", text))
        self.event("user_message", message=text, images=[])
        return line

    def reasoning(self, summary: str) -> int:
        return self.item(
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": summary}],
                "content": None,
                "encrypted_content": "gAAAA" + "x" * 40,
            }
        )

    def call(self, name: str, arguments: Json, *, custom: bool = False) -> str:
        """A function call (or a custom tool call); its call_id."""
        call_id = f"call_{self._random.getrandbits(64):016x}"
        if custom:
            self.item(
                {
                    "type": "custom_tool_call",
                    "status": "completed",
                    "call_id": call_id,
                    "name": name,
                    "input": orjson.dumps(arguments).decode(),
                }
            )
        else:
            self.item(
                {
                    "type": "function_call",
                    "name": name,
                    "arguments": orjson.dumps(arguments).decode(),
                    "call_id": call_id,
                }
            )
        return call_id

    def output(self, call_id: str, text: str, *, custom: bool = False) -> int:
        kind = "custom_tool_call_output" if custom else "function_call_output"
        return self.item({"type": kind, "call_id": call_id, "output": text})

    def tool(self, name: str, arguments: Json, output: str) -> str:
        call_id = self.call(name, arguments)
        self.output(call_id, output)
        return call_id

    def assistant(self, text: str) -> int:
        line = self.item(self.message("assistant", text))
        self.event("agent_message", message=text)
        return line

    def tokens(self, input_tokens: int, cached: int = 0, output: int = 0, reasoning: int = 0) -> int:
        usage = {
            "input_tokens": input_tokens,
            "cached_input_tokens": cached,
            "output_tokens": output,
            "reasoning_output_tokens": reasoning,
            "total_tokens": input_tokens + output,
        }
        return self.event(
            "token_count",
            info={"total_token_usage": usage, "last_token_usage": usage, "model_context_window": 258400},
            rate_limits=None,
        )

    def end_turn(self, last_message: str | None = None) -> int:
        return self.event("task_complete", turn_id=self.turn_id, last_agent_message=last_message)

    def compacted(self, message: str, replacement_history: list[Json] | None) -> int:
        """A compaction record (with replacement_history as 0.171 writes it, or without, as older CLIs)."""
        payload: Json = {"message": message}
        if replacement_history is not None:
            payload["replacement_history"] = replacement_history
        line = self._record("compacted", payload)
        self.event("context_compacted")
        return line

    def rollback(self, turns: int) -> int:
        return self.event("thread_rolled_back", num_turns=turns)

    def raw(self, line: bytes) -> int:
        """A physical line as given (damage: cut JSON, a non-object, invalid UTF-8, ...)."""
        self._lines.append(line)
        return len(self._lines)

    def exchange(self, prompt: str, *, tools: int = 2, output_bytes: int = 200) -> None:
        """One complete turn: prompt, reasoning, `tools` shell calls with outputs, answer, tokens."""
        self.turn(prompt)
        for number in range(tools):
            self.reasoning(f"step {number} of {prompt[:20]}")
            body = "".join(self._random.choice("abcdefgh \n") for _ in range(output_bytes))
            self.tool("exec_command", {"cmd": f"sed -n '{number},20p' file{number}.py"}, body)
        self.assistant(f"Done with: {prompt[:40]}")
        self.tokens(1000 * self.lines, cached=500, output=120, reasoning=40)
        self.end_turn()

    def to_bytes(self) -> bytes:
        return b"".join(line + b"\n" for line in self._lines)

    def write(self, path: Path) -> Path:
        path.write_bytes(self.to_bytes())
        return path
