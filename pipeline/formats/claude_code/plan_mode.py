"""What Claude Code 2.0 sends in plan mode that its transcript does not hold.

Read from the clients' own code (`npm pack @anthropic-ai/claude-code@VERSION`, `cli.js`):
- While the permission mode is `plan`, the client computes a `plan_mode` attachment before each
  request and sends it as a meta user message wrapped in `<system-reminder>` tags; the message
  stays in the history. 2.0.x writes no record of it (2.1.x writes `attachment` records, which the
  transcript holds and `auto` counts). From 2.0.64 it is computed only when five assistant lines
  (thinking-only ones aside) have passed since the last one.
- From 2.0.54 the client writes the plan file's text into an ExitPlanMode call's recorded input
  (`plan`) and strips it again when it sends the history (2.0.53 does neither).

Where plan mode begins is not recorded; where it is in force is: an ExitPlanMode call, or a Write
or Edit of a file under `.claude/plans/` (the plan file the reminder names), is made in plan mode,
and an approved ExitPlanMode ends it (a rejected one does not). The user enters plan mode before
typing a prompt, so a span is taken to start at the last human prompt before its first sign.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final

import msgspec

from pipeline.formats.claude_code.decode import DecodedRecord
from pipeline.vocabulary import RecordType

__all__ = ["PLAN_STRIPPED_FROM", "plan_mode_reminders", "reminder_of", "unsent_plan", "version_tuple"]

Version = tuple[int, int, int]

PLAN_STRIPPED_FROM: Final[Version] = (2, 0, 54)
"""First client that records the plan in ExitPlanMode's input and strips it when sending (read:
2.0.53 does not; 2.0.54, 2.0.55, 2.0.64, 2.0.76, 2.1.7, 2.1.39, 2.1.42 and 2.1.114 do; 2.1.114
strips a `planFilePath` too, which no ExitPlanMode input of the corpora holds)."""

REMINDERS: Final[tuple[tuple[Version, int, int], ...]] = (
    # (first client version read, claude-legacy tokens of its reminder as sent, assistant lines
    # between reminders: 0 = every request). Each version's reminder rendered from its cli.js with
    # the plan file path `/home/user/.claude/plans/humble-doodling-wolf.md`, 3 Explore agents and
    # 1 Plan agent (the defaults), wrapped in `<system-reminder>\n...\n</system-reminder>`, counted
    # with the `claude-legacy` tokenizer. Versions between two rows take the earlier row's.
    ((2, 0, 26), 195, 0),  # the short reminder (read: 2.0.26)
    ((2, 0, 29), 231, 0),  # ...naming the Plan subagent (read: 2.0.29, 2.0.37: 232, 2.0.42, 2.0.50)
    ((2, 0, 51), 745, 0),  # the plan-file reminder, its gate on (read: 2.0.51, 2.0.53)
    ((2, 0, 54), 843, 0),  # ...longer (read: 2.0.54, 2.0.55)
    ((2, 0, 64), 857, 5),  # ...every five assistant lines (read: 2.0.64, 2.0.76)
)
REMINDERS_UNTIL: Final[Version] = (2, 1, 0)
"""2.1 records its reminders as `attachment` lines: nothing to add from here on."""

_EXIT_CALL: Final = b'"name":"ExitPlanMode"'
_PLAN_FILE: Final = b"/.claude/plans/"
_PLAN_WRITE: Final = re.compile(rb'"name":"(?:Write|Edit)","input":\{"file_path":"[^"]*/\.claude/plans/')
_APPROVED: Final = b"User has approved"  # the approved ExitPlanMode result, every version read


def version_tuple(version: str | None) -> Version | None:
    """`2.0.55` -> (2, 0, 55); None for anything else."""
    parts = (version or "").split(".")
    if len(parts) < 3 or not all(part.isdigit() for part in parts[:3]):
        return None
    return int(parts[0]), int(parts[1]), int(parts[2])


def reminder_of(version: str | None) -> tuple[int, int] | None:
    """(tokens, assistant lines between reminders) of a client's unrecorded plan-mode reminder."""
    parsed = version_tuple(version)
    if parsed is None or parsed >= REMINDERS_UNTIL:
        return None
    known = [(tokens, every) for first, tokens, every in REMINDERS if first <= parsed]
    return known[-1] if known else None


def unsent_plan(tool: str, raw_input: bytes, version: str | None) -> int:
    """Bytes of a tool call's recorded input the client does not send: ExitPlanMode's `plan`."""
    parsed = version_tuple(version)
    if tool != "ExitPlanMode" or parsed is None or parsed < PLAN_STRIPPED_FROM:
        return 0
    try:
        value: Any = msgspec.json.decode(raw_input)
    except msgspec.DecodeError:
        return 0
    if not isinstance(value, dict) or "plan" not in value:
        return 0
    value.pop("plan")
    return max(0, len(raw_input) - len(msgspec.json.encode(value)))


def _in_plan_mode(record: DecodedRecord, line: bytes) -> bool:
    if record.type != RecordType.ASSISTANT:
        return False
    return _EXIT_CALL in line or (_PLAN_FILE in line and _PLAN_WRITE.search(line) is not None)


class _Spans:
    """Requests (an assistant message's first line) in plan mode, found in one pass."""

    def __init__(self) -> None:
        self.requests: list[tuple[int, DecodedRecord]] = []
        self.marked: set[int] = set()  # positions in `requests`
        self.prompt_at = 0  # position of the first request after the last human prompt
        self.active = False
        self.seen: set[str] = set()

    def add(self, number: int, record: DecodedRecord, line: bytes) -> None:
        if record.sidechain:
            return
        if record.type == RecordType.USER:
            if record.prompt_key is not None:
                self.prompt_at = len(self.requests)
            elif record.tool_results and self.active and _APPROVED in line:
                self.active = False
            return
        if record.type != RecordType.ASSISTANT or not record.message_id:
            return
        if record.message_id not in self.seen:
            self.seen.add(record.message_id)
            self.requests.append((number, record))
            if self.active:
                self.marked.add(len(self.requests) - 1)
        if _in_plan_mode(record, line) and not self.active:
            self.active = True
            self.marked.update(range(self.prompt_at, len(self.requests)))


def plan_mode_reminders(data: bytes, records: Iterable[tuple[int, DecodedRecord, bytes]]) -> dict[int, int]:
    """Assistant line (a message's first) -> tokens of plan-mode reminders its request sent that
    the transcript holds no line for."""
    if _EXIT_CALL not in data and _PLAN_FILE not in data:
        return {}
    spans = _Spans()
    lines_since: dict[int, int] = {}
    count = 0
    for number, record, line in records:
        spans.add(number, record, line)
        if record.type == RecordType.ASSISTANT and not record.sidechain and record.blocks.strip("K"):
            count += 1
        lines_since[number] = count
    reminders: dict[int, int] = {}
    last: int | None = None
    for position, (number, record) in enumerate(spans.requests):
        reminder = reminder_of(record.version)
        if position not in spans.marked or reminder is None:
            continue
        tokens, every = reminder
        if every and last is not None and lines_since[number] - lines_since[last] < every:
            continue
        reminders[number] = tokens
        last = number
    return reminders
