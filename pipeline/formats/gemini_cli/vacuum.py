"""Vacuum: rewrite a Gemini CLI chat file as small as its content, Gemini CLI sending the same.

Gemini CLI's files only grow: each update of a message re-appends it whole, each resume appends a
full `messages` snapshot, a rewind leaves what it dropped behind. The vacuumed file is one header
holding the merged metadata (the memory scratchpad, if any, as the `$set` Gemini CLI writes it,
before or after the messages as its staleness requires), then each message Gemini CLI loads, in
its order: the record's own line byte for byte when the message came from one, else the
message as its snapshot holds it. It is proven by re-reading: the metadata, the loaded messages
and the history sent must be identical, else nothing is written (`VacuumOutcome.REFUSED`). A
file with a damaged line or a record Gemini CLI does not read is refused too: vacuum never drops
a line it cannot account for. A legacy JSON document and a checkpoint are left as they are.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

import orjson

from pipeline.formats.gemini_cli.chat_analysis import ChatAnalysis, analyze_chat
from pipeline.formats.gemini_cli.chat_lines import RecordKind
from pipeline.formats.gemini_cli.conversation import Conversation, LoadedMessage
from pipeline.formats.line_guard import LineLimits
from pipeline.vocabulary import LineKind

__all__ = ["VacuumOutcome", "VacuumRefusal", "VacuumResult", "message_lines", "vacuum"]

_SCRATCHPAD: Final = "memoryScratchpad"


class VacuumOutcome(StrEnum):
    """What vacuum did with one file."""

    VACUUMED = "vacuumed"
    UNCHANGED = "unchanged"  # nothing to drop (or a legacy document)
    REFUSED = "refused"  # damaged, unread records, not a session, or the re-read differed


class VacuumRefusal(StrEnum):
    """Why vacuum left a file alone."""

    NOT_A_SESSION = "not-a-session"
    DAMAGED_LINES = "damaged-lines"
    UNKNOWN_RECORDS = "unknown-records"
    REREAD_DIFFERS = "reread-differs"


@dataclass(frozen=True, slots=True)
class VacuumResult:
    """The rewritten bytes (the original's when nothing changed) and both sizes."""

    outcome: VacuumOutcome
    data: bytes
    bytes_before: int
    bytes_after: int
    refusal: VacuumRefusal | None = None


def _scratchpad_stale(analysis: ChatAnalysis) -> bool:
    """Gemini CLI's `memoryScratchpadIsStale`: a message or rewind after the scratchpad was set."""
    tracking = stale = False
    for record in analysis.chat.lines():
        if record.kind is RecordKind.SET and _SCRATCHPAD in record.value["$set"]:
            tracking, stale = bool(record.value["$set"][_SCRATCHPAD]), False
        elif record.kind in (RecordKind.MESSAGE, RecordKind.REWIND) and tracking:
            stale = True
    return stale


def message_lines(analysis: ChatAnalysis, messages: Sequence[LoadedMessage]) -> Iterator[bytes]:
    """Each message as a record line: its own line byte for byte, or as its snapshot holds it."""
    for message in messages:
        if message.in_snapshot or analysis.legacy:
            yield orjson.dumps(message.value)
        else:
            yield analysis.chat.raw_line(analysis.data, message.line).rstrip(b"\r")


def _lines(analysis: ChatAnalysis, conversation: Conversation) -> Iterator[bytes]:
    metadata = dict(conversation.metadata)
    scratchpad = {_SCRATCHPAD: metadata.pop(_SCRATCHPAD)} if _SCRATCHPAD in metadata else None
    stale = scratchpad is not None and _scratchpad_stale(analysis)
    yield orjson.dumps(metadata)
    if scratchpad is not None and stale:
        yield orjson.dumps({"$set": scratchpad})
    yield from message_lines(analysis, conversation.messages)
    if scratchpad is not None and not stale:
        yield orjson.dumps({"$set": scratchpad})


def _same(before: ChatAnalysis, after: ChatAnalysis) -> bool:
    one, two = before.conversation, after.conversation
    if one is None or two is None or dict(one.metadata) != dict(two.metadata):
        return False
    messages = [(m.id, m.value) for m in one.messages] == [(m.id, m.value) for m in two.messages]
    return messages and [t.content for t in before.turns] == [t.content for t in after.turns]


def _refused(data: bytes, why: VacuumRefusal) -> VacuumResult:
    return VacuumResult(VacuumOutcome.REFUSED, data, len(data), len(data), why)


def _refusal(analysis: ChatAnalysis) -> VacuumRefusal | None:
    if analysis.conversation is None:
        return VacuumRefusal.NOT_A_SESSION
    if any(kind not in (LineKind.RECORD, LineKind.BLANK) for kind in analysis.chat.kinds):
        return VacuumRefusal.DAMAGED_LINES
    if any(record.kind is RecordKind.OTHER for record in analysis.chat.lines()):
        return VacuumRefusal.UNKNOWN_RECORDS
    return None


def vacuum(data: bytes, limits: LineLimits) -> VacuumResult:
    """The vacuumed bytes of one Gemini CLI chat file, proven by re-reading them."""
    analysis = analyze_chat(data, limits)
    conversation = analysis.conversation
    if analysis.checkpoint or (conversation is not None and analysis.legacy):
        return VacuumResult(VacuumOutcome.UNCHANGED, data, len(data), len(data))
    refusal = _refusal(analysis)
    if refusal is not None or conversation is None:
        return _refused(data, refusal or VacuumRefusal.NOT_A_SESSION)
    rewritten = b"".join(line + b"\n" for line in _lines(analysis, conversation))
    if len(rewritten) >= len(data):
        return VacuumResult(VacuumOutcome.UNCHANGED, data, len(data), len(data))
    if not _same(analysis, analyze_chat(rewritten, limits)):
        return _refused(data, VacuumRefusal.REREAD_DIFFERS)
    return VacuumResult(VacuumOutcome.VACUUMED, rewritten, len(data), len(rewritten))
