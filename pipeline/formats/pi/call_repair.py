"""pi's repair of a tool call left unanswered, written into the file.

On every request pi 1.6.0 gives a call that no result answers an error result, "No result
provided", placed where the next user or assistant message would close the call's turn (or at the
end of the context). A session that ended mid-tool, or lost a result line, keeps resuming with
that repair made in memory only (`tool-use-unanswered`). The repair here writes the same result
as a `toolResult` message entry, as pi writes one, where pi places it: before the entry that closes
the turn (that entry re-parented on it, nothing else changed), or after the leaf. pi then sends
exactly what it sent before, and the file no longer holds the defect; the check re-reads the
repaired bytes and requires both (below version 2, where a compaction names its first kept entry
by index, a line inserted before that entry would move it: the check refuses that repair).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from pipeline.formats.line_guard import LineLimits
from pipeline.formats.pi.agent_messages import AgentMessage, agent_messages
from pipeline.formats.pi.archive_form import relinked
from pipeline.formats.pi.chat_form import NO_RESULT, MessageOrigin
from pipeline.formats.pi.session_analysis import PiAnalysis, analyze_session
from pipeline.formats.pi.session_decode import PiEntry
from pipeline.vocabulary import FindingCode

__all__ = ["AnsweredCall", "CallRepair", "repair_calls"]


@dataclass(frozen=True, slots=True)
class AnsweredCall:
    """One call given pi's error result: the call's line in the original, its id, and the line of
    the result written for it in the repaired file."""

    call_line: int
    call_id: str
    result_line: int


@dataclass(frozen=True, slots=True)
class CallRepair:
    """The repaired bytes and what was written."""

    data: bytes
    answered: tuple[AnsweredCall, ...]


@dataclass(frozen=True, slots=True)
class _Missing:
    """The results one assistant entry's calls lack, and the entry that closes its turn (None: the
    context ends first)."""

    call: PiEntry
    ids: tuple[str, ...]
    closer: PiEntry | None


def _calls(entry: PiEntry) -> list[dict[str, Any]]:
    content = entry.message.get("content")
    blocks = content if isinstance(content, list) else []
    calls = (b for b in blocks if isinstance(b, dict) and b.get("type") == "toolCall")
    return [call for call in calls if isinstance(call.get("id"), str)]


def _missing(analysis: PiAnalysis) -> Iterator[_Missing]:
    """Each assistant entry pi gives synthetic results, its unanswered call ids, and its closer."""
    synthetic_lines = {m.line for m in analysis.messages if m.origin is MessageOrigin.SYNTHETIC}
    by_line = analysis.entries_by_line()
    messages: list[AgentMessage] = list(agent_messages(analysis.branch.context))
    for index, message in enumerate(messages):
        if message.line not in synthetic_lines or message.body.get("role") != "assistant":
            continue
        answered: set[object] = set()
        closer = None
        for later in messages[index + 1 :]:
            role = later.body.get("role")
            if role in ("user", "assistant"):
                closer = by_line[later.line]
                break
            if role == "toolResult":
                answered.add(later.body.get("toolCallId"))
        entry = by_line[message.line]
        ids = tuple(call["id"] for call in _calls(entry) if call["id"] not in answered)
        yield _Missing(entry, ids, closer)


def _result_entry(
    call: PiEntry, call_id: str, name: object, parent: str | None, entry_id: str | None
) -> bytes:
    """The `toolResult` message pi would have written for the call, as its own entry."""
    record: dict[str, Any] = {"type": "message"}
    if entry_id is not None:
        record |= {"id": entry_id, "parentId": parent}
    if isinstance(call.record.get("timestamp"), str):
        record["timestamp"] = call.record["timestamp"]
    message: dict[str, Any] = {"role": "toolResult", "toolCallId": call_id}
    if isinstance(name, str):
        message["toolName"] = name
    message |= {"content": [{"type": "text", "text": NO_RESULT}], "isError": True}
    stamp = call.message.get("timestamp")
    if isinstance(stamp, int) and not isinstance(stamp, bool):
        message["timestamp"] = stamp
    record["message"] = message
    return orjson.dumps(record)


def _new_ids(analysis: PiAnalysis, count: int) -> list[str]:
    """`count` fresh 8-hex ids, as pi gives entries, derived from the bytes and unused in the file."""
    taken = {entry.entry_id for entry in analysis.session.entries}
    fresh: list[str] = []
    seed = analysis.data
    while len(fresh) < count:
        seed = hashlib.sha256(seed).digest()
        candidate = seed.hex()[:8]
        if candidate not in taken:
            taken.add(candidate)
            fresh.append(candidate)
    return fresh


def _written(analysis: PiAnalysis, gaps: list[_Missing]) -> tuple[bytes, list[AnsweredCall]] | None:
    """The file with each gap's results before its closer (or after the last line), and what was
    written where; None when a closer's link is not written as pi writes it."""
    session, data = analysis.session, analysis.data
    linked = session.version >= 2
    ids = iter(_new_ids(analysis, sum(len(gap.ids) for gap in gaps)))
    before: dict[int, list[tuple[AnsweredCall, bytes]]] = {}
    relink: dict[int, str] = {}
    leaf = analysis.branch.leaf
    for gap in gaps:
        parent = gap.closer.parent_id if gap.closer is not None else (leaf.entry_id if leaf else None)
        names = {call["id"]: call.get("name") for call in _calls(gap.call)}
        at = gap.closer.line if gap.closer is not None else len(session) + 1
        for call_id in gap.ids:
            entry_id = next(ids) if linked else None
            result = _result_entry(gap.call, call_id, names[call_id], parent, entry_id)
            before.setdefault(at, []).append((AnsweredCall(gap.call.line, call_id, 0), result))
            parent = entry_id
        if gap.closer is not None and parent is not None:
            relink[gap.closer.line] = parent
    lines: list[bytes] = []
    answered: list[AnsweredCall] = []
    by_line = analysis.entries_by_line()
    for line in range(1, len(session) + 2):
        for call, written in before.get(line, ()):
            lines.append(written)
            answered.append(AnsweredCall(call.call_line, call.call_id, len(lines)))
        if line > len(session):
            break
        raw = session.raw_line(data, line)
        if line in relink:
            moved = relinked(raw, by_line[line].parent_id, relink[line])
            if moved is None:
                return None
            raw = moved
        lines.append(raw)
    return b"\n".join(lines) + b"\n", answered


def _holds(original: PiAnalysis, repaired: PiAnalysis) -> bool:
    """pi sends the same context from both, and the repaired file has no unanswered call and no
    finding the original did not have."""
    if repaired.context_digests() != original.context_digests():
        return False
    codes = sorted(f.code for f in repaired.findings)
    before = sorted(f.code for f in original.findings if f.code is not FindingCode.TOOL_USE_UNANSWERED)
    return codes == before


def repair_calls(analysis: PiAnalysis, limits: LineLimits) -> CallRepair | None:
    """The session with pi's result for every unanswered call written in; None when there is none,
    or when the repair cannot be written so that pi sends the same context (the check)."""
    gaps = [gap for gap in _missing(analysis) if gap.ids]
    session = analysis.session
    if not gaps or session.header is None or session.has_bom or session.crlf_lines or analysis.damaged:
        return None
    written = _written(analysis, gaps)
    if written is None:
        return None
    data, answered = written
    if not _holds(analysis, analyze_session(data, limits)):
        return None
    return CallRepair(data, tuple(answered))
