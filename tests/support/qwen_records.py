"""Small Qwen Code records for the reader's tests, shaped as Qwen Code 0.24.4 writes them.

Each builder returns one record (a dict); `chain` links records by `parentUuid` in order and
`jsonl` writes them as a file's bytes. The real sessions are tests/fixtures/qwen_code/.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

SESSION = "5f0c1a2b-0000-4000-8000-000000000001"
CWD = "/home/user/project"


def record(kind: str, number: int, **fields: Any) -> dict[str, Any]:
    """A record of `type` kind with uuid `u<number>` (linked later by `chain`)."""
    base = {
        "uuid": f"u{number}",
        "parentUuid": None,
        "sessionId": SESSION,
        "timestamp": f"2026-12-07T06:00:{number:02d}.000Z",
        "type": kind,
        "cwd": CWD,
        "version": "0.24.4",
    }
    return {**base, **fields}


def user(number: int, text: str) -> dict[str, Any]:
    return record("user", number, message={"role": "user", "parts": [{"text": text}]})


def model(number: int, text: str = "", *calls: tuple[str, str], thought: str = "") -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"text": thought, "thought": True}] if thought else []
    parts += [{"text": text}] if text else []
    parts += [
        {"functionCall": {"id": cid, "name": "run_shell_command", "args": {"command": cmd}}}
        for cid, cmd in calls
    ]
    return record("assistant", number, message={"role": "model", "parts": parts})


def result(number: int, call_id: str, output: str) -> dict[str, Any]:
    response = {"id": call_id, "name": "run_shell_command", "response": {"output": output}}
    return record("tool_result", number, message={"role": "user", "parts": [{"functionResponse": response}]})


def system(number: int, subtype: str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
    return record("system", number, subtype=subtype, systemPayload=payload or {})


def compression(number: int, summary: str) -> dict[str, Any]:
    history = [
        {"role": "user", "parts": [{"text": summary}]},
        {"role": "model", "parts": [{"text": "Got it. Thanks for the additional context!"}]},
    ]
    return system(number, "chat_compression", {"info": {}, "compressedHistory": history})


def chain(*records: dict[str, Any]) -> list[dict[str, Any]]:
    """`records` each the child of the one before (the first a root)."""
    linked = []
    for index, item in enumerate(records):
        parent = records[index - 1]["uuid"] if index else None
        linked.append({**item, "parentUuid": parent})
    return linked


def jsonl(records: Iterable[dict[str, Any] | str]) -> bytes:
    """A file's bytes: each record as one compact JSON line (strings are written as they are)."""
    lines = [
        r if isinstance(r, str) else json.dumps(r, separators=(",", ":"), ensure_ascii=False) for r in records
    ]
    return ("\n".join(lines) + "\n").encode()


def turn(start: int, prompt: str, reply: str) -> list[dict[str, Any]]:
    """A prompt, a shell call, its result and a closing reply: records `start`..`start + 3`."""
    call_id = f"call-{start}"
    return [
        user(start, prompt),
        model(start + 1, "", (call_id, f"echo {prompt}")),
        result(start + 2, call_id, f"out {prompt}"),
        model(start + 3, reply),
    ]


def long_outputs(count: int, chars: int) -> bytes:
    """A session of `count` shell calls `c0`... each answered by `chars` characters of output, then
    a closing reply: past 500,000 characters of them Qwen Code clears the oldest before sending."""
    records = [user(1, "list the checks of each module")]
    for step in range(count):
        line = 2 + 2 * step
        records += [
            model(line, f"Step {step}.", (f"c{step}", "seq")),
            result(line + 1, f"c{step}", "o" * chars),
        ]
    return jsonl(chain(*records, model(2 + 2 * count, "All listed.")))


def _renamed(record: dict[str, Any], copy: int, parent: str | None) -> dict[str, Any]:
    """A record of copy `copy`: its uuid and its calls' and responses' ids suffixed, its parent `parent`."""
    message = record.get("message")
    if isinstance(message, dict):
        parts = [
            {
                key: (
                    {**value, "id": f"{value['id']}-{copy}"}
                    if key in ("functionCall", "functionResponse")
                    else value
                )
                for key, value in part.items()
            }
            for part in message.get("parts", [])
        ]
        record = {**record, "message": {**message, "parts": parts}}
    return {**record, "uuid": f"{record['uuid']}-{copy}", "parentUuid": parent}


def repeated(seed: bytes, copies: int) -> bytes:
    """A real session's records repeated `copies` times on one branch, with fresh ids: a long
    session shaped as Qwen Code writes one (as benchmarks/qwen_code.py grows its own)."""
    records = [json.loads(line) for line in seed.splitlines()]
    grown: list[dict[str, Any]] = []
    for copy in range(copies):
        for item in records:
            grown.append(_renamed(item, copy, grown[-1]["uuid"] if grown else None))
    return jsonl(grown)
