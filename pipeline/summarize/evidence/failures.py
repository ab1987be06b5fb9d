"""Failed calls of a span (seed 001's errors and blockers): what failed, why, and whether it was resolved.

A resumed agent that does not know a command failed runs it again; one that does not know the
failure was fixed fixes it again. Every failed call is a record: a shell command with a non-zero
exit status, or a test run whose output reports failures whatever its status (a pipe into
`tail` exits 0); a tool call flagged as an error; a call the user rejected or did not permit.
Each record keeps what the call was about (the command, the file, the URL), the lines of its
output that tell the failure apart (a traceback's exception, the first failing test, the first
line naming an error) and, when a later call of the span did what it could not (the same
command passing, the same file handled by the same kind of tool, the same call succeeding),
where. The same failure again is one record at its latest occurrence, counted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

from pipeline.formats.evidence_tools import MODIFY_FILE_TOOLS, READ_FILE_TOOLS, SHELL_TOOLS
from pipeline.summarize.evidence.items import EvidenceItem, EvidenceKind, FrozenJson
from pipeline.summarize.evidence.shell import CommandOutcome, analyze_command, outcome_of

__all__ = [
    "DETAIL_LINE_CHARS",
    "SAME_COMMAND_PASSED",
    "FailureRecord",
    "Resolver",
    "collect_failures",
    "first_passes",
    "merged_failures",
    "reports_failures",
    "run_outcome",
]

DETAIL_LINE_CHARS: Final = 200  # one telling line of an output: a test id and its assertion fit
DETAIL_LINES: Final = 2  # the first line, then the exception, first failing test or first error line
HEAD_CHARS: Final = 4096
TAIL_CHARS: Final = 12288
"""An output is read at its head and tail: a status is written first, a runner's summary and a
traceback's exception last; the middle of a long log only costs time."""
SAME_COMMAND_PASSED: Final = "the same command passed"  # how a failed command was resolved
FILE_TOOLS: Final = {
    **{tool: (key, "read") for tool, key in READ_FILE_TOOLS.items()},
    **{tool: (key, "modify") for tool, key in MODIFY_FILE_TOOLS.items()},
}
"""A file call -> the input member naming its file, and whether it reads or changes it."""
SUBJECT_KEYS: Final = ("file_path", "notebook_path", "url", "path", "pattern", "query")
_BY_USER: Final = ("The user doesn't want to", "[Request interrupted by user")
"""Results that say the user decided against a call: a decision of theirs, not a failure."""
_REFUSED: Final = (
    *_BY_USER,
    "This command requires approval",
    "This Bash command contains multiple operations. The following part requires approval",
)
_PERMISSION: Final = re.compile(r"^Claude requested permissions to .* but you haven't granted it yet")
_REASON: Final = re.compile(r"the following reason for the rejection:\s*(.+)", re.S)
_ANSI: Final = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_TAGS: Final = re.compile(r"</?tool_use_error>")
_NOISE: Final = re.compile(
    r"^(?:Exit code:? -?\d+|Process exited with code -?\d+|Wall time: .*|Output:|Error:?"
    r"|Traceback \(most recent call last\):"
    r"|(?:Found )?\d+ errors?\.?|[=_!*\-]{4,}.*)$"
)
_EXCEPTION: Final = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)\b")
_FAILING_TEST: Final = re.compile(r"^(?:FAILED|FAIL|ERROR)\b|^--- FAIL\b|^not ok \d")
_ERROR_WORD: Final = re.compile(
    r"(?i)\b(?:errors?|failed|failure|fatal|exception|not found|no such|cannot|can't|could not|"
    r"unable to|denied|refused|invalid|timed out|panic|rejected|not granted|requires approval|blocked)\b"
)
_FAILED_LINE: Final = re.compile(r"\n(?:(?:FAILED|FAIL|ERROR)\b|--- FAIL\b|not ok \d)")
_FAILED_COUNT: Final = re.compile(r"(?<![\w.])([1-9]\d*) (?:failed|failing|failures?|errors?)\b")
_CARGO_FAILED: Final = "test result: FAILED"


@dataclass(frozen=True, slots=True)
class FailureRecord:
    """One failure of the span at its latest occurrence (`times`: how often it happened).

    `subject` is what the call was about (a command, a path, a URL; "" when its input names
    none); `details` the telling lines of its output, or the user's reason for a rejection;
    `resolved_at` the line of the later call that did what this one could not, and `resolution`
    what that call was (None and "": still open at the end of the span).
    """

    tool: str
    outcome: CommandOutcome
    status: int | None
    subject: str
    details: tuple[str, ...]
    lines: tuple[int, ...]
    times: int
    resolved_at: int | None
    resolution: str
    by_user: bool = False  # the user refused the call ("The user doesn't want to ...", an interrupt)


@dataclass(frozen=True, slots=True)
class _Call:
    item: EvidenceItem
    result: EvidenceItem
    outcome: CommandOutcome
    command: str
    subject: str


def _ends(text: str) -> str:
    if len(text) <= HEAD_CHARS + TAIL_CHARS:
        return text
    return f"{text[:HEAD_CHARS]}\n{text[-TAIL_CHARS:]}"


def reports_failures(text: str) -> bool:
    """Whether a test run's output reports failures: a line opening with FAILED, FAIL, ERROR,
    `--- FAIL` or `not ok N`, a count of failures above zero, or cargo's failed summary."""
    text = "\n" + _ANSI.sub("", _ends(text))
    return _CARGO_FAILED in text or bool(_FAILED_LINE.search(text) or _FAILED_COUNT.search(text))


def run_outcome(text: str, is_error: bool, *, validation: bool) -> CommandOutcome:
    """A shell run's outcome: its status (`outcome_of`), and failed when a test run reports failures."""
    head = text[:512].lstrip()
    if head.startswith(_REFUSED) or _PERMISSION.match(head):
        return CommandOutcome.CANCELED
    outcome = outcome_of(text, is_error)
    if outcome is CommandOutcome.PASSED and validation and reports_failures(text):
        return CommandOutcome.FAILED
    return outcome


def _tool_outcome(text: str, is_error: bool) -> CommandOutcome:
    head = text[:512].lstrip()
    if head.startswith(_REFUSED) or _PERMISSION.match(head):
        return CommandOutcome.CANCELED
    return CommandOutcome.FAILED if is_error else CommandOutcome.PASSED


def _subject(tool_input: Mapping[str, FrozenJson]) -> str:
    return next((v for k in SUBJECT_KEYS if isinstance(v := tool_input.get(k), str) and v.strip()), "")


def _calls(items: Sequence[EvidenceItem]) -> list[_Call]:
    """Every tool call of the span that has a result, with the outcome its result reports."""
    results = {item.tool_id: item for item in items if item.kind is EvidenceKind.TOOL_RESULT and item.tool_id}
    validation: dict[str, bool] = {}  # sessions repeat their commands: each is lexed once
    calls = []
    for item in items:
        result = results.get(item.tool_id or "") if item.kind is EvidenceKind.TOOL_CALL else None
        if result is None:
            continue
        text = result.text
        command = item.tool_input.get("command")
        if (item.tool_name or "") in SHELL_TOOLS and isinstance(command, str) and command.strip():
            if command not in validation:
                validation[command] = analyze_command(command).validation
            outcome = run_outcome(text, result.is_error, validation=validation[command])
            line = " ".join(command.split())
            calls.append(_Call(item, result, outcome, line, line))
        else:
            outcome = _tool_outcome(text, result.is_error)
            calls.append(_Call(item, result, outcome, "", _subject(item.tool_input)))
    return calls


def telling_lines(text: str) -> tuple[str, ...]:
    """The lines of an output that tell its failure apart, at most `DETAIL_LINES`.

    The first line verbatim (after the `Exit code N` Claude Code writes before it), a traceback's
    exception (its last), the first failing test, the first line naming an error. Lines every
    failure prints (`Exit code 1`, banners, `Traceback ...`, a count of errors) are passed over.
    """
    lines = [" ".join(line.split()) for line in _TAGS.sub("", _ANSI.sub("", _ends(text))).splitlines()]
    lines = [line for line in lines if line and not _NOISE.match(line)]
    if not lines:
        return ()
    exceptions = [line for line in lines if _EXCEPTION.match(line)]
    chosen = [
        lines[0],  # what the tool said first: a linter's or a tool's message, often naming no error
        exceptions[-1] if exceptions else None,
        next((line for line in lines if _FAILING_TEST.match(line)), None),
        next((line for line in lines if _ERROR_WORD.search(line)), None),
    ]
    picked = tuple(dict.fromkeys(line[:DETAIL_LINE_CHARS] for line in chosen if line is not None))
    return picked[:DETAIL_LINES]


def _details(call: _Call, text: str) -> tuple[str, ...]:
    if call.outcome is CommandOutcome.CANCELED:
        reason = _REASON.search(text)
        return (" ".join(reason.group(1).split())[: 2 * DETAIL_LINE_CHARS],) if reason is not None else ()
    return telling_lines(text)


def _resolves(later: _Call, failed: _Call) -> str:
    """What `later` did that `failed` could not ("" when it did not)."""
    if later.outcome is not CommandOutcome.PASSED:
        return ""
    name, failed_name = later.item.tool_name or "", failed.item.tool_name or ""
    if failed.command:
        return SAME_COMMAND_PASSED if later.command == failed.command else ""
    if failed_name in FILE_TOOLS:
        key, family = FILE_TOOLS[failed_name]
        path = failed.item.tool_input.get(key)
        if (
            name in FILE_TOOLS
            and FILE_TOOLS[name][1] == family
            and later.item.tool_input.get(FILE_TOOLS[name][0]) == path
        ):
            verb = "modified" if family == "modify" else "read"
            return f"{name} {verb} the same file"
        return ""
    if name == failed_name and dict(later.item.tool_input) == dict(failed.item.tool_input):
        return "the same call succeeded"
    return ""


def collect_failures(items: Sequence[EvidenceItem]) -> tuple[FailureRecord, ...]:
    """Every failed or refused call of `items`, once per failure, in the order of their latest line."""
    calls = _calls(items)
    records: dict[tuple[str, str, tuple[str, ...]], FailureRecord] = {}
    for position, call in enumerate(calls):
        if call.outcome not in (CommandOutcome.FAILED, CommandOutcome.CANCELED):
            continue
        result = call.result
        text = result.text  # read again, for failures only: a result's text is not held
        details = _details(call, text)
        resolved_at, resolution = None, ""
        for later in calls[position + 1 :]:
            resolution = _resolves(later, call)
            if resolution:
                resolved_at = later.item.line
                break
        tool = call.item.tool_name or "tool"
        key = (tool, call.subject, details)
        before = records.pop(key, None)
        status = _status(text) if call.command else None
        lines = (call.item.line, result.line)
        times = 1 if before is None else before.times + 1
        by_user = text[:512].lstrip().startswith(_BY_USER)
        records[key] = FailureRecord(
            tool, call.outcome, status, call.subject, details, lines, times, resolved_at, resolution, by_user
        )
    return tuple(records.values())


Resolver = tuple[str, str]
"""What a passing call resolves: ("shell", the command, white space made one) or (a file tool's
family, the file)."""


def first_passes(items: Sequence[EvidenceItem]) -> dict[Resolver, tuple[int, str]]:
    """Where each command first passed in `items`, and each file was first read or modified, with
    how that resolves an earlier span's failure (`_resolves`'s words)."""
    passes: dict[Resolver, tuple[int, str]] = {}
    for call in _calls(items):
        if call.outcome is not CommandOutcome.PASSED:
            continue
        name = call.item.tool_name or ""
        if call.command:
            passes.setdefault(("shell", call.command), (call.item.line, SAME_COMMAND_PASSED))
        elif name in FILE_TOOLS and isinstance(path := call.item.tool_input.get(FILE_TOOLS[name][0]), str):
            family = FILE_TOOLS[name][1]
            verb = "modified" if family == "modify" else "read"
            passes.setdefault((family, path), (call.item.line, f"{name} {verb} the same file"))
    return passes


def merged_failures(
    earlier: Sequence[FailureRecord],
    later: Sequence[FailureRecord],
    passes: Mapping[Resolver, tuple[int, str]],
) -> tuple[FailureRecord, ...]:
    """The failures of two consecutive spans read apart, as one span's: the same failure again is
    one record at its latest occurrence, its times summed. An earlier failure still open is
    resolved by the same command passing or the same file handled by the same kind of tool in
    `later` (`passes`: `first_passes` of it); the same call succeeding there is not seen."""
    records: dict[tuple[str, str, tuple[str, ...]], FailureRecord] = {}
    for old in earlier:
        family = "shell" if old.tool in SHELL_TOOLS else FILE_TOOLS.get(old.tool, ("", ""))[1]
        found = passes.get((family, old.subject)) if family and old.resolved_at is None else None
        record = old if found is None else replace(old, resolved_at=found[0], resolution=found[1])
        records[(record.tool, record.subject, record.details)] = record
    for record in later:
        key = (record.tool, record.subject, record.details)
        before = records.pop(key, None)
        records[key] = record if before is None else replace(record, times=before.times + record.times)
    return tuple(records.values())


_STATUS: Final = re.compile(r"\A\s*Exit code:? (-?\d+)|<exit_code>(-?\d+)</exit_code>|\(exit code (-?\d+)\)")


def _status(text: str) -> int | None:
    match = _STATUS.search(text[:HEAD_CHARS])
    return None if match is None else int(next(g for g in match.groups() if g is not None))
