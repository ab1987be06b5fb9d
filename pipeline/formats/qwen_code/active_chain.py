"""The active branch Qwen Code resumes: from the last conversation record up by `parentUuid`.

As Qwen Code 0.24 prepares a transcript: records of one uuid are fragments of one record (their
parts concatenated, the first one's parent kept); the leaf is the last conversation record in the
file; the walk stops at a root, at a parent missing from the file (a gap: earlier records are not
resumed) or at a record already visited (a cycle). Records of other session ids make Qwen Code
refuse the file.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pipeline.formats.qwen_code.session_records import QwenRecord

__all__ = ["ActiveChain", "ChainRecord", "active_chain"]


@dataclass(frozen=True, slots=True)
class ChainRecord:
    """One record of the active branch: its fragments merged, and every line that held one."""

    record: QwenRecord  # the first fragment, its message holding every fragment's parts
    lines: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ActiveChain:
    """The branch Qwen Code resumes, root first, and what stopped or troubled the walk."""

    records: tuple[ChainRecord, ...]
    gap_child: QwenRecord | None = None  # the walk stopped: this record's parent is missing
    cycle_uuid: str | None = None  # the walk stopped: it came back to this uuid
    conflicting: tuple[QwenRecord, ...] = ()  # fragments that disagree with the first on the parent
    session_ids: tuple[str, ...] = ()  # every session id among the records, in first-seen order

    @property
    def lines(self) -> frozenset[int]:
        """Every line holding a fragment of a record on the branch."""
        return frozenset(line for entry in self.records for line in entry.lines)


def _merged(fragments: list[QwenRecord]) -> ChainRecord:
    first = fragments[0]
    message = first.message
    for later in fragments[1:]:
        if later.message is None:
            continue
        message = later.message if message is None else message.extended(later.message.parts)
    usage = next((f.usage for f in reversed(fragments) if f.usage is not None), None)
    return ChainRecord(replace(first, message=message, usage=usage), tuple(f.line for f in fragments))


def active_chain(records: tuple[QwenRecord, ...]) -> ActiveChain:
    """Walk the branch Qwen Code resumes from the file's records (file order)."""
    sessions = tuple(dict.fromkeys(r.session_id for r in records))
    conversation = [r for r in records if r.is_conversation]
    if not conversation:
        return ActiveChain((), session_ids=sessions)
    fragments: dict[str, list[QwenRecord]] = {}
    conflicting: list[QwenRecord] = []
    for record in conversation:
        group = fragments.setdefault(record.uuid, [])
        if group and group[0].parent_uuid != record.parent_uuid:
            conflicting.append(record)
        group.append(record)
    walked: list[str] = []
    seen: set[str] = set()
    current: str | None = conversation[-1].uuid
    gap: QwenRecord | None = None
    cycle: str | None = None
    while current is not None:
        if current in seen:
            cycle = current
            break
        seen.add(current)
        walked.append(current)
        record = fragments[current][0]
        parent = record.parent_uuid
        if parent is not None and parent not in fragments:
            gap = record
            break
        current = parent
    chain = tuple(_merged(fragments[uuid]) for uuid in reversed(walked))
    return ActiveChain(chain, gap, cycle, tuple(conflicting), sessions)
