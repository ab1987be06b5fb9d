"""Where each part of a rebuilt history content was written: its line and its index there.

A content of the history is one record's message, its fragments' parts after its own (records of
one uuid), and a `mid_turn_user_message`'s parts after the content it joins: its parts are the
parts of its lines' messages in that order. A compression's history is no record's message.
"""

from __future__ import annotations

from pipeline.formats.qwen_code.api_history import Entry
from pipeline.formats.qwen_code.session_decode import Session
from pipeline.formats.qwen_code.session_records import QwenRecord

__all__ = ["part_origins"]


def part_origins(session: Session, entry: Entry) -> tuple[tuple[int, int], ...] | None:
    """(1-based line, index in that line's parts) of each part of `entry`; None for a content of
    a compression's history, or when the lines do not hold its parts."""
    if entry.from_compression:
        return None
    origins: list[tuple[int, int]] = []
    for line in entry.lines:
        record = session.decoded[line - 1]
        message = record.message if isinstance(record, QwenRecord) else None
        origins.extend((line, index) for index in range(len(message.parts) if message else 0))
    return tuple(origins) if len(origins) == len(entry.content.parts) else None
