"""What Claude Code sends in plan mode that its transcript does not hold.

Read from the clients' own code (`npm pack @anthropic-ai/claude-code@VERSION`, `cli.js`):
- While the permission mode is `plan`, the client computes a `plan_mode` attachment before each
  request and sends it as a meta user message wrapped in `<system-reminder>` tags; the message
  stays in the history. From 2.0.64 it is computed only when five assistant lines (thinking-only
  ones aside) have passed since the last one; from 2.1.7 (read) only every fifth one since plan
  mode was last left is the full reminder, the others a short "still active" one. 2.0 writes no
  line for it, and nor do the 2.1 files of the corpora but five, which hold `attachment` lines
  (counted as content): the reminders are added only to a file holding no `attachment` line.
- From 2.0.54 the client writes the plan file's text into an ExitPlanMode call's recorded input
  (`plan`) and strips it again when it sends the history (2.0.53 does neither).

Where plan mode holds: a human prompt whose `permissionMode` (2.1) says `plan` is sent in it (and
one that names another mode is not); an accepted EnterPlanMode call starts it; an ExitPlanMode call,
or a Write or Edit of a file under `.claude/plans/` (the plan file the reminder names), is made in
it; an approved ExitPlanMode ends it (a rejected one does not). Otherwise where it began is not
recorded: the user enters plan mode before typing a prompt, so a span is taken to start at the
last human prompt before its first sign.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final

import msgspec

from pipeline.formats.claude_code.decode import DecodedRecord
from pipeline.vocabulary import RecordType

__all__ = [
    "FULL_EVERY",
    "PLAN_STRIPPED_FROM",
    "REMINDERS",
    "plan_mode_reminders",
    "reminder_of",
    "unsent_plan",
    "version_tuple",
]

Version = tuple[int, int, int]

PLAN_STRIPPED_FROM: Final[Version] = (2, 0, 54)
"""First client that records the plan in ExitPlanMode's input and strips it when sending (read:
2.0.53 does not; 2.0.54, 2.0.55, 2.0.64, 2.0.76, 2.1.7, 2.1.39, 2.1.42 and 2.1.114 do; 2.1.114
strips a `planFilePath` too, which no ExitPlanMode input of the corpora holds)."""

REMINDERS: Final[tuple[tuple[Version, int, int, int], ...]] = (
    # (first client version read, claude-legacy tokens of its full reminder as sent, of its short
    # one (0: none), assistant lines between reminders (0: every request)). Each version's
    # reminders rendered from its cli.js with the plan file path
    # `/home/user/.claude/plans/humble-doodling-wolf.md`, 3 Explore agents and 1 Plan agent (the
    # defaults; the interview-phase gate at its default, off), wrapped in
    # `<system-reminder>\n...\n</system-reminder>`, counted with the `claude-legacy` tokenizer.
    # Versions between two rows take the earlier row's, later ones the last row's.
    ((2, 0, 26), 195, 0, 0),  # the short reminder (read: 2.0.26)
    ((2, 0, 29), 231, 0, 0),  # ...naming the Plan subagent (read: 2.0.29, 2.0.37: 232, 2.0.42, 2.0.50)
    ((2, 0, 51), 745, 0, 0),  # the plan-file reminder, its gate on (read: 2.0.51, 2.0.53)
    ((2, 0, 54), 843, 0, 0),  # ...longer (read: 2.0.54, 2.0.55)
    ((2, 0, 64), 857, 0, 5),  # ...every five assistant lines (read: 2.0.64, 2.0.76)
    ((2, 1, 7), 976, 89, 5),  # full, then short ones (read: 2.1.7)
    ((2, 1, 17), 948, 89, 5),  # (read: 2.1.17, 2.1.29)
    ((2, 1, 39), 1026, 89, 5),  # (read: 2.1.39)
)
FULL_EVERY: Final = 5
"""Where a client sends short reminders, every fifth since plan mode was last left is the full one."""

_EXIT_CALL: Final = b'"name":"ExitPlanMode"'
_ENTERED: Final = b'"content":"Entered plan mode'  # EnterPlanMode's result, accepted
_PLAN_PROMPT: Final = b'"permissionMode":"plan"'
_ANY_MODE: Final = b'"permissionMode":"'
_RECORDED: Final = b'"type":"attachment"'
_PLAN_FILE: Final = b"/.claude/plans/"
_SIGNS: Final = (_EXIT_CALL, _PLAN_FILE, _PLAN_PROMPT, _ENTERED)
_PLAN_WRITE: Final = re.compile(rb'"name":"(?:Write|Edit)","input":\{"file_path":"[^"]*/\.claude/plans/')
_APPROVED: Final = b'"content":"User has approved'  # ExitPlanMode's result (a quoted one is escaped)


def version_tuple(version: str | None) -> Version | None:
    """`2.0.55` -> (2, 0, 55); None for anything else."""
    parts = (version or "").split(".")
    if len(parts) < 3 or not all(part.isdigit() for part in parts[:3]):
        return None
    return int(parts[0]), int(parts[1]), int(parts[2])


def reminder_of(version: str | None) -> tuple[int, int, int] | None:
    """(full tokens, short tokens, assistant lines between reminders) of a client's reminder."""
    parsed = version_tuple(version)
    if parsed is None:
        return None
    known = [(full, short, every) for first, full, short, every in REMINDERS if first <= parsed]
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
            self._user(record, line)
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

    def _user(self, record: DecodedRecord, line: bytes) -> None:
        if record.prompt_key is not None:
            self.prompt_at = len(self.requests)
            if _ANY_MODE in line:  # the mode the prompt was sent in (2.1)
                self.active = _PLAN_PROMPT in line
        elif record.tool_results and self.active and _APPROVED in line:
            self.active = False
        elif record.tool_results and not self.active and _ENTERED in line:
            self.active = True
            self.prompt_at = len(self.requests)


def plan_mode_reminders(data: bytes, records: Iterable[tuple[int, DecodedRecord, bytes]]) -> dict[int, int]:
    """Assistant line (a message's first) -> tokens of plan-mode reminders its request sent that
    the transcript holds no line for (none where the file records attachments)."""
    if _RECORDED in data or not any(sign in data for sign in _SIGNS):
        return {}
    spans = _Spans()
    lines_since: dict[int, int] = {}
    count = 0
    for number, record, line in records:
        spans.add(number, record, line)
        if record.type == RecordType.ASSISTANT and not record.sidechain and record.blocks.strip("K"):
            count += 1
        lines_since[number] = count
    return _reminders(spans, lines_since)


def _reminders(spans: _Spans, lines_since: dict[int, int]) -> dict[int, int]:
    """Each marked request's reminder, at its client's cadence; full or short in turn."""
    reminders: dict[int, int] = {}
    last: int | None = None
    in_span = 0  # reminders since plan mode was last entered
    for position, (number, record) in enumerate(spans.requests):
        if position not in spans.marked:
            in_span = 0
            continue
        reminder = reminder_of(record.version)
        if reminder is None:
            continue
        full, short, every = reminder
        if every and last is not None and lines_since[number] - lines_since[last] < every:
            continue
        reminders[number] = short if short and in_span % FULL_EVERY else full
        in_span += 1
        last = number
    return reminders
