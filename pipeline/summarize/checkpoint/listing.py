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
from enum import StrEnum
from typing import Final

from pipeline.summarize.checkpoint.document import Bullet, cut
from pipeline.summarize.evidence.shell import CommandOutcome, FileAction
from pipeline.summarize.evidence.work_state import CommandRecord, FileOperation

__all__ = [
    "COMMAND_CHARS",
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
    """Modified files, then read ones, one bullet per directory (in order of first use).

    The directories in `named` name their files whatever the grain (the room left allows it).
    """
    bullets = []
    for action, verb in _ACTIONS:
        ops = [op for op in operations if op.action is action]
        groups = _grouped((_directory(op.path)[0], position) for position, op in enumerate(ops))
        for directory, positions in groups.items():
            members = [ops[position] for position in positions]
            lines = _ends(line for op in members for line in op.lines)
            where = f" in {directory}" if directory else ""
            if grain is Grain.COUNTS and directory not in named:
                noun = "file" if len(members) == 1 else "files"
                bullets.append(Bullet(f"{verb} {len(members)} {noun}{where}", lines))
                continue
            if len(members) == 1:  # alone in its directory: the whole path is as short
                bullets.append(Bullet(f"{verb}: {members[0].path}", lines))
                continue
            names = ", ".join(_directory(op.path)[1] for op in members)
            bullets.append(Bullet(f"{verb}{where} ({len(members)}): {names}", lines))
    return bullets


def program(command: str) -> str:
    """What a command runs: its first word after variable assignments (`FOO=1 pytest` runs pytest)."""
    words = command.split()
    first = next((word for word in words if "=" not in word), words[0] if words else "")
    return first.rsplit("/", 1)[-1] or first


def command_groups(
    records: Sequence[CommandRecord], grain: Grain, named: frozenset[str] = frozenset()
) -> list[tuple[int, Bullet]]:
    """One bullet per program: how many commands and how they ended, each command under its outcome.

    Each bullet is dated by its newest run, so the section reads in the order work happened. The
    commands in `named` are named whatever the grain (the room left allows them); the count says
    how many there are in all.
    """
    groups = _grouped((program(" ".join(r.command.split())), n) for n, r in enumerate(records))
    dated = []
    for name, positions in groups.items():
        members = [records[position] for position in positions]
        counts = [(o, sum(r.outcome is o for r in members)) for o in _OUTCOME_ORDER]
        tally = ", ".join(f"{count} {outcome}" for outcome, count in counts if count)
        noun = "command" if len(members) == 1 else "commands"
        parts = [f"{name or '(empty)'}: {len(members)} {noun} ({tally})"]
        for outcome, _ in counts:
            shown = [
                r for r in members if r.outcome is outcome and (grain is Grain.NAMES or r.command in named)
            ]
            if shown:
                parts.append(f"{outcome}: {', '.join(f'`{_command(r)}`' for r in shown)}")
        lines = _ends(line for r in members for line in r.lines)
        dated.append((max(r.lines[-1] for r in members), Bullet("\n".join(parts), lines)))
    return dated


def _command(record: CommandRecord) -> str:
    return cut(" ".join(record.command.split()), COMMAND_CHARS, record.lines[0])


def newest_commands(records: Sequence[CommandRecord]) -> tuple[str, ...]:
    """The commands, the most recently run first."""
    return tuple(record.command for record in sorted(records, key=lambda r: r.lines[-1], reverse=True))


def directories(operations: Sequence[FileOperation]) -> tuple[str, ...]:
    """The directories of the files, modified ones first, then the most recently used."""
    newest = sorted(operations, key=lambda op: (op.action is not FileAction.MODIFIED, -op.lines[-1]))
    return tuple(dict.fromkeys(_directory(op.path)[0] for op in newest))
