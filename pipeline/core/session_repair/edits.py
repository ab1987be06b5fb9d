"""Line edits of a session repair, and their receipts: which line, which defect, what was done.

A repair is a few whole-line edits: a line replaced, dropped, or followed by inserted lines.
Everything else is copied byte for byte, terminators included. `apply_edits` also returns where
each output line came from, so receipts always name the line of the file the user has.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from pipeline.core.index import iter_line_spans

__all__ = ["LineEdit", "RepairAction", "RepairEdit", "apply_edits", "split_lines"]


class RepairAction(StrEnum):
    """What a repair did to one line."""

    DROP_LINE = "drop-line"  # a line no reader can take (cut short, not JSON): kept in the backup
    TERMINATE_LINE = "terminate-line"  # the last record gets its newline: the next append stays apart
    INSERT_INTERRUPTED_RESULT = "insert-interrupted-result"  # a new record answering calls as interrupted
    ADD_INTERRUPTED_RESULT = "add-interrupted-result"  # results added to the message that answers the others
    DROP_RESULT = "drop-result"  # a result without its call, or a second result of one call
    RENAME_TOOL_ID = "rename-tool-id"  # a repeated tool id made unique, for the call and its results
    MOVE_RESULTS_FIRST = "move-results-first"  # results moved ahead of the other blocks of their message
    REPARENT = "reparent"  # a child hung onto the record that now comes before it
    RELINK = "relink"  # --relink: a parent never written replaced by the record before it
    DROP_READ_PAGES = "drop-read-pages"  # --read-pages: a Read call's serialized `pages` member removed


@dataclass(frozen=True, slots=True)
class RepairEdit:
    """One receipt line: never text, only where, why, what and how many bytes."""

    line: int  # 1-based line of the original (for an inserted record: the line it follows)
    code: str  # the defect's finding code
    action: RepairAction
    bytes_before: int  # the line's bytes without its terminator (0 for an inserted record)
    bytes_after: int  # the same after the repair (0 for a dropped line)
    ids: tuple[str, ...] = ()  # tool ids, or the uuid a relink names


@dataclass(frozen=True, slots=True)
class LineEdit:
    """One line of the current bytes: replaced (None: dropped) and/or followed by new lines."""

    line: int
    replacement: bytes | None
    inserted: tuple[bytes, ...] = ()
    keep: bool = False  # only insert after the line; `replacement` is ignored


def split_lines(data: bytes) -> list[tuple[bytes, bytes]]:
    """(content, terminator) of every physical line; a final line without LF has terminator b''."""
    lines = []
    for start, end in iter_line_spans(data):
        has_lf = end < len(data) and data[end] == 0x0A
        body_end = end - 1 if end > start and data[end - 1] == 0x0D else end
        lines.append((data[start:body_end], data[body_end : end + (1 if has_lf else 0)]))
    return lines


def apply_edits(
    data: bytes, edits: Sequence[LineEdit], origin: Sequence[int]
) -> tuple[bytes, tuple[int, ...]]:
    """The bytes with `edits` made, and the original line each output line came from (inserted
    lines: minus the line they follow). `origin` maps the current lines to the original ones."""
    by_line = {edit.line: edit for edit in edits}
    pieces: list[bytes] = []
    mapped: list[int] = []
    lines = split_lines(data)
    for number, (content, terminator) in enumerate(lines, 1):
        edit = by_line.get(number)
        source = origin[number - 1]
        if edit is None or edit.keep or edit.replacement is not None:
            body = content if edit is None or edit.keep else edit.replacement
            ending = terminator or (b"\n" if edit is not None and (edit.inserted or not edit.keep) else b"")
            pieces.append((body or b"") + ending)
            mapped.append(source)
        for new in edit.inserted if edit is not None else ():
            pieces.append(new + b"\n")
            mapped.append(-abs(source))
    return b"".join(pieces), tuple(mapped)
