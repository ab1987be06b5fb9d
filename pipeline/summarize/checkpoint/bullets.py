"""The checkpoint's bullets read from evidence: turn conclusions, files, commands, decisions, errors.

Each function quotes or counts evidence items and cites their lines; none invents text. The
summarizer (`deterministic`) places these bullets under the nine headings and caps them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from pipeline.formats.evidence_tools import SHELL_TOOLS
from pipeline.summarize.checkpoint.document import Bullet, cut
from pipeline.summarize.checkpoint.listing import (
    EVERY_COMMAND_HERE,
    Elsewhere,
    Grain,
    command_groups,
    file_groups,
)
from pipeline.summarize.evidence.failures import DETAIL_LINE_CHARS, SAME_COMMAND_PASSED, FailureRecord
from pipeline.summarize.evidence.items import EvidenceItem, EvidenceKind, bounded_lines
from pipeline.summarize.evidence.shell import CommandOutcome
from pipeline.summarize.evidence.work_state import CommandRecord, DeterministicState

__all__ = [
    "ANSWERING_TOOLS",
    "DECISION_KEYWORDS",
    "DECISION_PATTERN",
    "UNRESOLVED",
    "USER_DECLINED",
    "command_bullets",
    "commands_declined",
    "commands_under_errors",
    "decision_bullets",
    "error_bullets",
    "failure_bullet",
    "file_bullets",
    "quote",
    "refusal_bullets",
    "turns",
]

USER_DECLINED: Final = "User declined"  # opens a refusal's bullet, listed beside the human messages
UNRESOLVED: Final = "unresolved"  # a failure still open at the end of the span
DECISION_KEYWORDS: Final = (
    "decided",
    "decision",
    "we'll go with",
    "i'll go with",
    "going with",
    "settled on",
    "opted",
    "i chose",
    "we chose",
    "chose to",
    "решил",
    "решение",
    "выбрал",
    "决定",
    "选择",
    "采用",
    "決定",
    "決め",
    "採用",
    "결정",
    "decidí",
    "decidimos",
    "decisión",
    "décidé",
    "décision",
    "entschieden",
    "entscheidung",
    "decidi",
    "decisão",
    "deciso",
    "decisione",
    "قرر",
    "قرار",
)
"""Phrases that mark an assistant sentence recording a decision (lower case, several languages)."""
DECISION_PATTERN: Final = re.compile("|".join(re.escape(keyword) for keyword in DECISION_KEYWORDS))
_SENTENCE: Final = re.compile(r"(?<=[.!?。！？])\s+|\n+")  # noqa: RUF001 - CJK sentence ends are meant
_EXIT_LINE: Final = re.compile(r"Exit code \d+")
_ANSWERED: Final = "User has answered your questions: "  # Claude Code's AskUserQuestion result lead
ANSWERING_TOOLS: Final = frozenset({"AskUserQuestion", "ExitPlanMode"})  # results that decide something
_COMMAND_NAME: Final = re.compile(r"<command-name>(.*?)</command-name>", re.S)
_COMMAND_ARGS: Final = re.compile(r"<command-args>(.*?)</command-args>", re.S)
_BASH_INPUT: Final = re.compile(r"<bash-input>(.*?)</bash-input>", re.S)
_SHELL_FAILED: Final = tuple(f"{tool} failed" for tool in sorted(SHELL_TOOLS))
_DECLINED_SHELL: Final = tuple(f"{USER_DECLINED} {tool}" for tool in sorted(SHELL_TOOLS))


def turns(items: Sequence[EvidenceItem]) -> tuple[list[EvidenceItem], EvidenceItem | None]:
    """The last assistant text of every turn a later prompt closed, and of the open last turn."""
    conclusions: list[EvidenceItem] = []
    last: EvidenceItem | None = None
    for item in items:
        if item.kind is EvidenceKind.HUMAN_PROMPT:
            if last is not None:
                conclusions.append(last)
            last = None
        elif item.kind is EvidenceKind.ASSISTANT_TEXT:
            last = item
    return conclusions, last


def quote(item: EvidenceItem, limit: int, label: str = "") -> Bullet:
    return Bullet(label + cut(item.text.strip(), limit, item.line), (item.line,))


def file_bullets(
    state: DeterministicState, grain: Grain, named: frozenset[str] = frozenset()
) -> list[Bullet]:
    """Every file read or modified, grouped by directory (`listing`)."""
    return file_groups(state.file_operations, grain, named)


def command_bullets(
    items: Sequence[EvidenceItem],
    state: DeterministicState,
    quote: int,
    grain: Grain,
    named: frozenset[str] = frozenset(),
    elsewhere: Elsewhere = EVERY_COMMAND_HERE,
) -> list[Bullet]:
    """Shell commands grouped by program (latest run of each, with its outcome) and slash commands."""
    dated = command_groups(state.commands, grain, named, elsewhere)
    for item in items:
        if item.kind is EvidenceKind.COMMAND:
            name = _COMMAND_NAME.search(item.text)
            shell = _BASH_INPUT.search(item.text)
            if name is not None:
                args = _COMMAND_ARGS.search(item.text)
                line = f"{name.group(1).strip()} {args.group(1).strip() if args else ''}".strip()
                bullet = Bullet("slash command: " + cut(line, quote, item.line), (item.line,))
                dated.append((item.line, bullet))
            elif shell is not None:
                text = cut(shell.group(1).strip(), quote, item.line)
                bullet = Bullet(f"{CommandOutcome.UNKNOWN}: {text} (user shell)", (item.line,))
                dated.append((item.line, bullet))
    dated.sort(key=lambda pair: pair[0])
    return [bullet for _, bullet in dated]


def decision_bullets(items: Sequence[EvidenceItem], quote: int) -> list[Bullet]:
    calls = {item.tool_id: item for item in items if item.kind is EvidenceKind.TOOL_CALL and item.tool_id}
    bullets = []
    for item in items:
        if item.kind is EvidenceKind.ASSISTANT_TEXT and DECISION_PATTERN.search(item.text.casefold()):
            chosen = [s.strip() for s in _SENTENCE.split(item.text) if DECISION_PATTERN.search(s.casefold())]
            if chosen:
                bullets.append(Bullet(cut(" ".join(chosen), quote, item.line), (item.line,)))
        elif (
            item.kind is EvidenceKind.TOOL_RESULT
            and not item.is_error
            and item.tool_name in ANSWERING_TOOLS  # named first: reading a result's text costs a parse
            and item.text.strip()
        ):
            call = calls.get(item.tool_id or "")
            if item.tool_name == "AskUserQuestion":
                lines = (item.line,) if call is None else (call.line, item.line)
                answer = item.text.strip().removeprefix(_ANSWERED)
                bullets.append(Bullet("User answered: " + cut(answer, quote, item.line), lines))
            elif item.tool_name == "ExitPlanMode" and call is not None:
                plan = call.tool_input.get("plan")
                head = _first_line(plan) if isinstance(plan, str) else ""
                approved = "Plan approved: " + cut(head, quote, call.line)
                bullets.append(Bullet(approved, (call.line, item.line)))
    return bullets


def error_bullets(
    items: Sequence[EvidenceItem], failures: Sequence[FailureRecord], quote: int
) -> list[Bullet]:
    """Every failed or refused call (once per failure, with its resolution) and system error, by line.

    `failures` are `collect_failures(items)`. A call the user declined is not here: it is their
    decision (`refusal_bullets`).
    """
    dated = [(r.lines[-1], failure_bullet(r, quote)) for r in failures if not r.by_user]
    calls = {item.tool_id for item in items if item.kind is EvidenceKind.TOOL_CALL and item.tool_id}
    for item in items:
        if item.kind is EvidenceKind.SYSTEM_ERROR:
            label = "system error: "
        elif item.kind is EvidenceKind.TOOL_RESULT and item.is_error and item.tool_id not in calls:
            label = "tool error: "  # its call is not in the span: what it was about is not known here
        else:
            continue
        text = label + cut(_first_line(item.text), max(quote, DETAIL_LINE_CHARS), item.line)
        dated.append((item.line, Bullet(text, (item.line,))))
    dated.sort(key=lambda pair: pair[0])
    return [bullet for _, bullet in dated]


def commands_under_errors(errors: Sequence[Bullet], records: Sequence[CommandRecord]) -> frozenset[str]:
    """The commands (white space made one) that an Errors bullet names whole with how their latest
    run ended: failed and still unresolved, or resolved by the same command passing.

    A list short of room need not name them again under their program.
    """
    leads = (
        (f", {UNRESOLVED}: ", CommandOutcome.FAILED),
        (f"({SAME_COMMAND_PASSED}): ", CommandOutcome.PASSED),
    )
    shell = [bullet.text for bullet in errors if bullet.text.startswith(_SHELL_FAILED)]
    return _named(shell, leads, records)


def commands_declined(constraints: Sequence[Bullet], records: Sequence[CommandRecord]) -> frozenset[str]:
    """The commands (white space made one) whose latest run the user declined, named whole as such
    beside the human messages (`refusal_bullets`)."""
    declined = [b.text for b in constraints if b.text.startswith(_DECLINED_SHELL)]
    subjects = [text[text.find(": ") :] for text in declined if ": " in text]
    return _named(subjects, ((": ", CommandOutcome.CANCELED),), records)


def _named(
    texts: Sequence[str], leads: Sequence[tuple[str, CommandOutcome]], records: Sequence[CommandRecord]
) -> frozenset[str]:
    """The records whose command follows a lead whole (up to a ` — ` or the end) and ended as it says."""
    said: set[tuple[str, CommandOutcome]] = set()
    for text in texts:
        for lead, outcome in leads:
            start = text.find(lead)
            if start < 0:
                continue
            parts = text[start + len(lead) :].split(" — ")
            # the subject ends where the telling lines or the reason start, or the bullet does
            said.update((" — ".join(parts[:end]), outcome) for end in range(1, len(parts) + 1))
    commands = ((" ".join(record.command.split()), record.outcome) for record in records)
    return frozenset(command for command, outcome in commands if (command, outcome) in said)


def refusal_bullets(failures: Sequence[FailureRecord], quote: int) -> list[Bullet]:
    """Every call the user declined or interrupted, with their reason: a decision of the user's."""
    return [failure_bullet(record, quote) for record in failures if record.by_user]


def failure_bullet(record: FailureRecord, quote: int) -> Bullet:
    """`Bash failed (exit 1) 2 times, resolved at L90 (the same command passed): pytest -x — FAILED ...`.

    One still failing at the cut says `unresolved`.

    How it ended comes first, so a bullet cut to its quote keeps it; the subject is cut to the
    quote, each telling line is kept whole (it is already bounded to one line's worth).
    """
    if record.by_user:
        label = f"{USER_DECLINED} {record.tool}"
    elif record.outcome is CommandOutcome.CANCELED:
        label = f"{record.tool} rejected by the user"
    elif record.status not in (None, 0):
        label = f"{record.tool} failed (exit {record.status})"
    else:
        label = f"{record.tool} failed" if record.tool in SHELL_TOOLS else f"{record.tool} error"
    times = f" {record.times} times" if record.times > 1 else ""
    state = (
        f"resolved at L{record.resolved_at} ({record.resolution})"
        if record.resolved_at is not None
        else UNRESOLVED
    )
    line = record.lines[0]
    subject = f": {cut(record.subject, quote, line)}" if record.subject else ""
    said = " | ".join(record.details)
    if said and record.outcome is CommandOutcome.CANCELED:
        said = "reason: " + said
    detail = f" — {said}" if said else ""
    # the call's line (its result is the next record) and the resolving call's: a trail is read for its facts
    lines = record.lines[:1] if record.resolved_at is None else (record.lines[0], record.resolved_at)
    if record.by_user:
        return Bullet(f"{label}{times}{subject}{detail}", bounded_lines(lines))
    return Bullet(f"{label}{times}, {state}{subject}{detail}", bounded_lines(lines))


def _first_line(text: str) -> str:
    """The first non-blank line; after a bare `Exit code N`, the line that explains it too."""
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    if not lines:
        return "(no message)"
    head = lines[0].removeprefix("<tool_use_error>").removesuffix("</tool_use_error>")
    if _EXIT_LINE.fullmatch(head) and len(lines) > 1:
        head = f"{head}: {lines[1]}"
    return head
