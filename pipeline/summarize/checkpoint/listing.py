"""Compact, complete lists of the span's files and commands: grouped, counted, never cut to "N more".

A resumed agent asks "did we touch X?" and "did `make check` pass?": a list cut to its newest
dozen answers neither for the rest. So every file and every command is listed, deduplicated and
grouped (files by directory, the directory written once; commands by program, with how many
passed, failed or were canceled). When the summary does not fit its room the fitting ladder asks
for a coarser grain (`Grain.COUNTS`): one bullet per directory or program that counts its files
or commands and how they ended (the failures themselves are under Errors), so nothing leaves the
summary unaccounted for; the summarizer then names again what the room still holds (`named`).
Pure: the same records give the same bullets.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from pipeline.summarize.checkpoint.document import Bullet, cut
from pipeline.summarize.evidence.shell import CommandOutcome, FileAction
from pipeline.summarize.evidence.work_state import CommandRecord, FileOperation

__all__ = [
    "COMMAND_CHARS",
    "EVERY_COMMAND_HERE",
    "Elsewhere",
    "Grain",
    "command_groups",
    "directories",
    "file_groups",
    "newest_commands",
    "program",
]

COMMAND_CHARS: Final = 400  # a command is known by its first 200 characters and the word there
_ACTIONS: Final = ((FileAction.MODIFIED, "Modified"), (FileAction.READ, "Read"))
_OUTCOME_ORDER: Final = (
    CommandOutcome.FAILED,
    CommandOutcome.CANCELED,
    CommandOutcome.PASSED,
    CommandOutcome.UNKNOWN,
)


@dataclass(frozen=True, slots=True)
class Elsewhere:
    """Commands (white space made one) another section names whole with how their latest run ended."""

    under_errors: frozenset[str] = frozenset()  # a failure's bullet: unresolved, or resolved by passing
    declined: frozenset[str] = frozenset()  # the user's refusal, beside the human messages


EVERY_COMMAND_HERE: Final = Elsewhere()


class Grain(StrEnum):
    """How finely a list names its members."""

    NAMES = "names"  # every file by name under its directory, every command whole
    COUNTS = "counts"  # per directory or program: how many, and how the commands ended


def _directory(path: str) -> tuple[str, str]:
    head, slash, name = path.rpartition("/")
    return (head + slash, name) if slash else ("", path)


def _ends(lines: Iterable[int]) -> tuple[int, ...]:
    """A list bullet cites its newest line: a list is read for its names, not its sources."""
    return (max(lines),)


def _grouped(keys: Iterable[tuple[str, int]]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for key, position in keys:
        groups.setdefault(key, []).append(position)
    return groups


def file_groups(
    operations: Sequence[FileOperation], grain: Grain, named: frozenset[str] = frozenset()
) -> list[Bullet]:
    """One bullet per directory, its modified files then its read ones (directories with modified
    files first, each in order of first use): the directory is written once for both.

    The directories in `named` name their files whatever the grain (the room left allows it).
    """
    groups = _grouped((_directory(op.path)[0], position) for position, op in enumerate(operations))
    changed = [d for d, members in groups.items() if any(_modified(operations[n]) for n in members)]
    order = [*changed, *(directory for directory in groups if directory not in changed)]
    bullets = []
    for directory in order:
        members = [operations[position] for position in groups[directory]]
        by_action = [(verb, [op for op in members if op.action is action]) for action, verb in _ACTIONS]
        by_action = [(verb, ops) for verb, ops in by_action if ops]
        lines = _ends(line for op in members for line in op.lines)
        counted = grain is Grain.COUNTS and directory not in named
        bullets.append(Bullet(_directory_text(directory, by_action, counted=counted), lines))
    return bullets


def _modified(operation: FileOperation) -> bool:
    return operation.action is FileAction.MODIFIED


def _directory_text(
    directory: str, by_action: list[tuple[str, list[FileOperation]]], *, counted: bool
) -> str:
    """`Read in /r/a/ (2): x.py, z.py`, `In /r/a/: modified (1): y.py; read (2): x.py, z.py`, or counts."""
    where = f" in {directory}" if directory else ""
    if counted:
        tallies = [f"{len(ops)} {'file' if len(ops) == 1 else 'files'}" for _, ops in by_action]
        verbs = [verb if n == 0 else verb.lower() for n, (verb, _) in enumerate(by_action)]
        return ", ".join(f"{verb} {tally}" for verb, tally in zip(verbs, tallies, strict=True)) + where
    if len(by_action) == 1:
        verb, ops = by_action[0]
        if len(ops) == 1:  # alone in its directory: the whole path is as short
            return f"{verb}: {ops[0].path}"
        return f"{verb}{where} ({len(ops)}): {_names(ops)}"
    parts = "; ".join(f"{verb.lower()} ({len(ops)}): {_names(ops)}" for verb, ops in by_action)
    return f"In {directory}: {parts}" if directory else f"Files: {parts}"


def _names(operations: Sequence[FileOperation]) -> str:
    return ", ".join(_directory(op.path)[1] for op in operations)


def program(command: str) -> str:
    """What a command runs: its first word after variable assignments (`FOO=1 pytest` runs pytest)."""
    words = command.split()
    first = next((word for word in words if "=" not in word), words[0] if words else "")
    return first.rsplit("/", 1)[-1] or first


def command_groups(
    records: Sequence[CommandRecord],
    grain: Grain,
    named: frozenset[str] = frozenset(),
    elsewhere: Elsewhere = EVERY_COMMAND_HERE,
) -> list[tuple[int, Bullet]]:
    """One bullet per program: how many commands and how they ended, each command under its outcome.

    Each bullet is dated by its newest run, so the section reads in the order work happened. The
    commands in `named` are named whatever the grain (the room left allows them); at the counting
    grain, those named `elsewhere` with how they ended are counted as such, and the rest as not
    named for room: the tally says how many there are in all.
    """
    groups = _grouped((program(_normalized(r)), n) for n, r in enumerate(records))
    dated = []
    for name, positions in groups.items():
        members = [records[position] for position in positions]
        counts = [(o, sum(r.outcome is o for r in members)) for o in _OUTCOME_ORDER]
        tally = ", ".join(f"{count} {outcome}" for outcome, count in counts if count)
        noun = "command" if len(members) == 1 else "commands"
        notes = (
            "".join(f"; {note}" for note in _unnamed(members, named, elsewhere))
            if grain is Grain.COUNTS
            else ""
        )
        parts = [f"{name or '(empty)'}: {len(members)} {noun} ({tally}){notes}"]
        for outcome, _ in counts:
            shown = [
                r for r in members if r.outcome is outcome and (grain is Grain.NAMES or r.command in named)
            ]
            if shown:
                parts.append(f"{outcome}: {', '.join(f'`{_command(r)}`' for r in shown)}")
        lines = _ends(line for r in members for line in r.lines)
        dated.append((max(r.lines[-1] for r in members), Bullet("\n".join(parts), lines)))
    return dated


def _unnamed(members: Sequence[CommandRecord], named: frozenset[str], elsewhere: Elsewhere) -> list[str]:
    """What a counted bullet says of the commands it does not name: where they are, or that room lacked."""
    rest = [_normalized(r) for r in members if r.command not in named]
    under_errors = sum(command in elsewhere.under_errors for command in rest)
    declined = sum(
        command in elsewhere.declined and command not in elsewhere.under_errors for command in rest
    )
    for_room = len(rest) - under_errors - declined
    said = [(under_errors, "named under Errors"), (declined, "declined by the user (see constraints)")]
    return [f"{count} {where}" for count, where in (*said, (for_room, "not named for room")) if count]


def _normalized(record: CommandRecord) -> str:
    return " ".join(record.command.split())


def _command(record: CommandRecord) -> str:
    return cut(_normalized(record), COMMAND_CHARS, record.lines[0])


def newest_commands(records: Sequence[CommandRecord]) -> tuple[str, ...]:
    """The commands, the most recently run first."""
    return tuple(record.command for record in sorted(records, key=lambda r: r.lines[-1], reverse=True))


def directories(operations: Sequence[FileOperation]) -> tuple[str, ...]:
    """The directories of the files, modified ones first, then the most recently used."""
    newest = sorted(operations, key=lambda op: (op.action is not FileAction.MODIFIED, -op.lines[-1]))
    return tuple(dict.fromkeys(_directory(op.path)[0] for op in newest))
