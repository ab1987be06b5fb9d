"""The history Qwen Code rebuilds from the active branch, before it adds its own context.

As Qwen Code 0.24 does on resume (its session API history accumulator, then the curated history
it sends): a `chat_compression` record that carries `compressedHistory` replaces everything
before it; other system records add nothing, except that a `slash_command` result for a local
command whose output never reached the model takes its own command line back out; records
without a message and `realtime_message` records add nothing; a `mid_turn_user_message` joins the
user content before it. Then, for sending: consecutive user contents become one, a run of model
contents is dropped whole when one of them is invalid (no parts, an empty part), and a model turn
that is only the upstream's `(request timeout)` placeholder is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pipeline.formats.qwen_code.active_chain import ChainRecord
from pipeline.formats.qwen_code.session_records import Content, PartKind, QwenRecord, RecordType

__all__ = ["Entry", "Rebuilt", "curated", "is_placeholder", "rebuild_history"]

DEGRADED_PLACEHOLDER: Final = "(request timeout)"


@dataclass(frozen=True, slots=True)
class Entry:
    """One content of the rebuilt history and the lines it comes from."""

    content: Content
    lines: tuple[int, ...]  # the record's lines, or the compression record's line
    from_compression: bool = False  # one of a chat_compression's compressedHistory contents


@dataclass(frozen=True, slots=True)
class Rebuilt:
    """The history and where it starts: the line of the compression it begins with, if any."""

    entries: tuple[Entry, ...]
    base_line: int | None = None
    malformed_compressions: tuple[int, ...] = ()


def _hides_command(record: QwenRecord, previous: QwenRecord | None) -> bool:
    slash = record.slash
    if slash is None or not slash.hides_command or previous is None:
        return False
    message = previous.message
    if previous.type is not RecordType.USER or previous.subtype is not None or message is None:
        return False
    if message.role != "user" or len(message.parts) != 1:
        return False
    part = message.parts[0]
    return part.kind is PartKind.TEXT and not part.signed and part.text == slash.raw_command


def rebuild_history(chain: tuple[ChainRecord, ...]) -> Rebuilt:
    """The history Qwen Code's resume builds from the branch, each content with its lines."""
    history: list[Entry] = []
    base: int | None = None
    malformed: list[int] = []
    previous: QwenRecord | None = None  # the last record that added to the history
    for entry in chain:
        record = entry.record
        if record.type is RecordType.SYSTEM:
            if record.subtype == "slash_command":
                if _hides_command(record, previous) and history:
                    history.pop()
                previous = None if previous is not None and previous.type is RecordType.USER else previous
            elif record.compression_malformed:
                malformed.append(record.line)
            elif record.subtype == "chat_compression" and record.compressed is not None:
                history = [Entry(c, entry.lines, from_compression=True) for c in record.compressed]
                base, previous = record.line, None
            continue
        if record.message is None or record.subtype == "realtime_message":
            continue
        last = history[-1] if history else None
        joins = record.subtype == "mid_turn_user_message" and last is not None and last.content.role == "user"
        if joins and last is not None:
            merged = last.content.extended(record.message.parts)
            history[-1] = Entry(merged, last.lines + entry.lines, last.from_compression)
        else:
            history.append(Entry(record.message, entry.lines))
        previous = record
    return Rebuilt(tuple(history), base, tuple(malformed))


def _valid(content: Content) -> bool:
    return bool(content.parts) and not any(part.empty for part in content.parts)


def is_placeholder(content: Content) -> bool:
    """A model turn that is only the upstream's `(request timeout)` placeholder."""
    parts = content.parts
    if not parts or any(p.kind not in (PartKind.TEXT, PartKind.THOUGHT) for p in parts):
        return False
    return "".join(p.text for p in parts if p.kind is PartKind.TEXT).strip() == DEGRADED_PLACEHOLDER


def curated(entries: tuple[Entry, ...]) -> tuple[Entry, ...]:
    """The history as Qwen Code sends it (its `extractCuratedHistory`)."""
    kept: list[Entry] = []
    index = 0
    while index < len(entries):
        entry = entries[index]
        if entry.content.role == "user":
            if kept and kept[-1].content.role == "user":
                last = kept[-1]
                kept[-1] = Entry(
                    last.content.extended(entry.content.parts),
                    last.lines + entry.lines,
                    last.from_compression,
                )
            else:
                kept.append(entry)
            index += 1
            continue
        run: list[Entry] = []
        while index < len(entries) and entries[index].content.role == "model":
            run.append(entries[index])
            index += 1
        if not run:  # a role neither user nor model: Qwen Code refuses such a history
            index += 1
            continue
        if all(_valid(e.content) for e in run):
            kept.extend(e for e in run if not is_placeholder(e.content))
    return tuple(kept)
