"""Damaged copies of a real Qwen Code session: the pairing defects Qwen Code mends before every
request, made on a copy of `tests/fixtures/qwen_code/tools.jsonl` the way they arise.

An answer lands after the next prompt when the user types while a tool still runs; an answer is
written twice when a late real result follows one already recorded. Each copy keeps every line
of the real session byte for byte but the one `parentUuid` that hangs it onto the new record.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

FIXTURES: Final = Path(__file__).resolve().parents[1] / "fixtures" / "qwen_code"


def _lines() -> list[bytes]:
    return (FIXTURES / "tools.jsonl").read_bytes().split(b"\n")[:-1]


def _uuid(line: bytes) -> str:
    return str(json.loads(line)["uuid"])


def _relinked(line: bytes, parent: str) -> bytes:
    old = json.loads(line)["parentUuid"]
    member = b'"parentUuid":' + json.dumps(old).encode()
    assert line.count(member) == 1
    return line.replace(member, b'"parentUuid":' + json.dumps(parent).encode())


def _record_after(line: bytes, uuid: str, **fields: Any) -> bytes:
    base = json.loads(line)
    keep = ("sessionId", "timestamp", "cwd", "version")
    record = {"uuid": uuid, "parentUuid": base["uuid"], **{k: base[k] for k in keep}, **fields}
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode()


def _index(lines: list[bytes], needle: bytes) -> int:
    return next(i for i, line in enumerate(lines) if needle in line)


def _insert_after(lines: list[bytes], at: int, record: bytes) -> list[bytes]:
    """`record` put on the branch right after line `at` (0-based), the next line hung onto it."""
    follower = _relinked(lines[at + 1], _uuid(record))
    return [*lines[: at + 1], record, follower, *lines[at + 2 :]]


def _prompt(after: bytes, text: str, uuid: str) -> bytes:
    message = {"role": "user", "parts": [{"text": text}]}
    return _record_after(after, uuid, type="user", message=message)


def _answer_after_a_prompt(lines: list[bytes]) -> list[bytes]:
    """The last call's answer written after a prompt the user typed while it ran."""
    answer = _index(lines, b'"functionResponse":{"id":"call_5_0"')
    prompt = _prompt(lines[answer - 1], "hurry up", "d0000000-0000-4000-8000-00000000beef")
    return _insert_after(lines, answer - 1, prompt)


def _parallel_answer_after_a_prompt(lines: list[bytes]) -> list[bytes]:
    """The second of two parallel calls' answers written after a prompt (the first before it)."""
    first = _index(lines, b'"functionResponse":{"id":"call_2_0"')
    prompt = _prompt(lines[first], "and the rest?", "d0000000-0000-4000-8000-00000000f00d")
    return _insert_after(lines, first, prompt)


def _answer_written_twice(lines: list[bytes]) -> list[bytes]:
    """A call's answer recorded again right after itself (a late real result after the first)."""
    answer = _index(lines, b'"functionResponse":{"id":"call_4_0"')
    message = json.loads(lines[answer])["message"]
    copy = _record_after(
        lines[answer], "d0000000-0000-4000-8000-00000000cafe", type="tool_result", message=message
    )
    return _insert_after(lines, answer, copy)


def _damaged(*defects: Callable[[list[bytes]], list[bytes]]) -> Callable[[], bytes]:
    def make() -> bytes:
        lines = _lines()
        for defect in defects:
            lines = defect(lines)
        return b"\n".join(lines) + b"\n"

    return make


DAMAGED: Final = {
    "answer-after-a-prompt": _damaged(_answer_after_a_prompt),
    "parallel-answer-after-a-prompt": _damaged(_parallel_answer_after_a_prompt),
    "answer-written-twice": _damaged(_answer_written_twice),
}
"""Each damaged copy by name: one defect each."""

ALL_DEFECTS: Final = _damaged(_answer_after_a_prompt, _parallel_answer_after_a_prompt, _answer_written_twice)
"""One damaged copy with the three defects (one resume proves them all)."""
