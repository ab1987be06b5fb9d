"""Small Codex rollouts for the judge's tests: a session_meta, then response items, then optional
`compacted` records, written as Codex 0.171 writes them (one JSON object per line).

The Codex format's own builder belongs to its reader (pipeline/formats/codex, in progress on
another branch); these few shapes are what the judge needs until then.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

THREAD_ID = "019ab760-3d78-7fd0-9ea1-000000000001"
SUMMARY = "SUMMARY-OF-THE-EARLIER-WORK: a parser was written and its tests pass."


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def assistant(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}


def call(call_id: str, command: str) -> dict[str, Any]:
    arguments = json.dumps({"command": command, "workdir": "/work/project"})
    return {"type": "function_call", "name": "shell_command", "arguments": arguments, "call_id": call_id}


def output(call_id: str, text: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def conversation(turns: int = 3) -> list[dict[str, Any]]:
    """`turns` user turns, each with one answered shell call and a closing assistant message."""
    items: list[dict[str, Any]] = []
    for turn in range(turns):
        items += [
            user(f"turn {turn}: please run the check number {turn} and report what it says"),
            call(f"call_{turn:03d}", f"pytest -q tests/test_{turn}.py"),
            output(f"call_{turn:03d}", f"Exit code: 0\nOutput:\n{turn + 1} passed in 0.{turn}s\n"),
            assistant(f"turn {turn}: the check passed ({turn + 1} tests)."),
        ]
    return items


def _line(kind: str, payload: Mapping[str, Any], at: int) -> str:
    stamp = f"2026-03-01T10:{at // 60 % 60:02d}:{at % 60:02d}.000Z"
    return json.dumps({"timestamp": stamp, "type": kind, "payload": payload}) + "\n"


def session_meta(thread_id: str = THREAD_ID, provider: str = "openai") -> dict[str, Any]:
    return {
        "id": thread_id,
        "timestamp": "2026-03-01T10:00:00.000Z",
        "cwd": "/work/project",
        "originator": "codex_cli_rs",
        "cli_version": "0.171.0",
        "source": "cli",
        "model_provider": provider,
    }


def compacted(summary: str = SUMMARY, history: Iterable[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """A `compacted` record whose replacement history is the summary as a user message."""
    return {"message": summary, "replacement_history": list(history or [user(summary)])}


def write_rollout(
    folder: Path,
    items: Iterable[Mapping[str, Any]],
    *,
    thread_id: str = THREAD_ID,
    compaction: Mapping[str, Any] | None = None,
    provider: str = "openai",
) -> Path:
    """`folder/rollout-2026-03-01T10-00-00-<id>.jsonl`: meta, the compaction if any, then items."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rollout-2026-03-01T10-00-00-{thread_id}.jsonl"
    lines = [_line("session_meta", session_meta(thread_id, provider), 0)]
    if compaction is not None:
        lines.append(_line("compacted", compaction, 1))
    lines += [_line("response_item", item, at) for at, item in enumerate(items, 2)]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def new_thread_id() -> str:
    return str(uuid.uuid4())


def _records(lines: list[bytes]) -> list[dict[str, Any]]:
    parsed: list[dict[str, Any]] = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            record = {}
        parsed.append(record if isinstance(record, dict) else {})
    return parsed


def _is_user_message(record: Mapping[str, Any]) -> bool:
    payload = record.get("payload") if record.get("type") == "response_item" else None
    return isinstance(payload, dict) and payload.get("type") == "message" and payload.get("role") == "user"


def summary_candidate(source: Path, folder: Path, summary: str = SUMMARY) -> Path:
    """A hand-made compaction of a real rollout: its session_meta, a `compacted` record whose
    replacement history is `summary`, then every line from the middle user message after the
    newest compaction on, verbatim (so calls and outputs stay together)."""
    lines = source.read_bytes().splitlines(keepends=True)
    records = _records(lines)
    meta = next(i for i, r in enumerate(records) if r.get("type") == "session_meta")
    newest = max((i for i, r in enumerate(records) if r.get("type") == "compacted"), default=meta)
    users = [i for i, r in enumerate(records) if i > newest and _is_user_message(r)]
    cut = users[len(users) // 2]
    record = {"timestamp": records[cut].get("timestamp"), "type": "compacted", "payload": compacted(summary)}
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / source.name
    target.write_bytes(b"".join([lines[meta], json.dumps(record).encode() + b"\n", *lines[cut:]]))
    return target
