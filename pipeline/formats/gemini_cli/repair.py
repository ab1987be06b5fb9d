"""Repair: close the tool calls a Gemini CLI session left open, as Gemini CLI closes a cancelled one.

A run killed while a tool ran (or before its result was recorded) leaves a call no response
answers (`tool-use-unanswered`), its status often no final one (`turn-unfinished`). Gemini CLI
0.61 repairs nothing on resume: it sends the open call as it is, and the Gemini API refuses a call
without its response. The repair appends, as Gemini CLI appends every update of a message, the
message again under its id with each open call closed as Gemini CLI records a call it cancels:
status `cancelled`, its result an `[Operation Cancelled]` error response (a recorded result is
kept). The original's lines stay byte for byte; a restore is dropping the appended line.

It is proven by re-reading: the history sent is the original's with those responses after their
calls and nothing else, the findings are the original's without the closed calls', else nothing is
written (`RepairOutcome.REFUSED`). The sent items it changes are declared (`RepairResult.sent`: each
tool-results turn of a message it closed, inserted, or in place of the one it had), so that the
rewrite job and the judge hold the real client to exactly that change. A response no call made
(`tool-result-without-use`) is left: removing it would drop text the model was given. A damaged
file, a legacy JSON document and a checkpoint are left as they are.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

import orjson

from pipeline.formats.gemini_cli.chat_analysis import ChatAnalysis, analyze_chat
from pipeline.formats.gemini_cli.chat_findings import FINAL_STATUSES
from pipeline.formats.gemini_cli.chat_lines import RecordKind
from pipeline.formats.gemini_cli.conversation import LoadedMessage
from pipeline.formats.gemini_cli.history import INTERRUPTED_PLACEHOLDER, SentTurn, result_parts
from pipeline.formats.line_guard import LineLimits
from pipeline.formats.rewrites import SentEdit
from pipeline.vocabulary import FindingCode, LineKind

__all__ = ["CANCELLED_ERROR", "ClosedCall", "RepairOutcome", "RepairRefusal", "RepairResult", "repair"]

# Gemini CLI's form for a call it cancels (`[Operation Cancelled] Reason: ...`), with the reason
# that is true here: the run ended before the tool's result was recorded.
CANCELLED_ERROR: Final = (
    "[Operation Cancelled] Reason: the session ended before the tool's result was recorded"
)
_REPAIRED: Final = frozenset({FindingCode.TOOL_USE_UNANSWERED, FindingCode.TURN_UNFINISHED})


class RepairOutcome(StrEnum):
    """What repair did with one file."""

    REPAIRED = "repaired"
    UNCHANGED = "unchanged"  # no open call (or a legacy document, a checkpoint)
    REFUSED = "refused"  # damaged, unread records, not a session, or the re-read differed


class RepairRefusal(StrEnum):
    """Why repair left a file alone."""

    NOT_A_SESSION = "not-a-session"
    DAMAGED_LINES = "damaged-lines"
    UNKNOWN_RECORDS = "unknown-records"
    REREAD_DIFFERS = "reread-differs"


@dataclass(frozen=True, slots=True)
class ClosedCall:
    """One call the repair closed: the line of the message version that left it open, its id and
    tool, and the finding codes it had."""

    line: int
    call_id: str
    name: str
    codes: tuple[FindingCode, ...]


@dataclass(frozen=True, slots=True)
class RepairResult:
    """The repaired bytes (the original's when nothing changed) and the calls closed."""

    outcome: RepairOutcome
    data: bytes
    closed: tuple[ClosedCall, ...] = ()
    refusal: RepairRefusal | None = None
    sent: tuple[SentEdit, ...] = ()  # the sent items the repair changes, in the repaired file's order


def _open(call: Mapping[str, Any]) -> tuple[FindingCode, ...]:
    """The codes that make a recorded call open: no result Gemini CLI sends, no final status."""
    codes = []
    if not result_parts([call]):
        codes.append(FindingCode.TOOL_USE_UNANSWERED)
    if call.get("status") is not None and call.get("status") not in FINAL_STATUSES:
        codes.append(FindingCode.TURN_UNFINISHED)
    return tuple(codes)


def _closed(call: Mapping[str, Any]) -> dict[str, Any]:
    """The call as Gemini CLI records one it cancelled, a recorded result kept."""
    if result_parts([call]):
        return {**call, "status": "cancelled"}
    response = {k: call[k] for k in ("id", "name") if k in call}
    error = {"functionResponse": {**response, "response": {"error": CANCELLED_ERROR}}}
    return {**call, "status": "cancelled", "result": [error]}


def _updates(messages: Sequence[LoadedMessage]) -> Iterator[tuple[dict[str, Any], list[ClosedCall]]]:
    """Each loaded Gemini message holding an open call, with its calls closed."""
    for message in messages:
        calls = message.value.get("toolCalls")
        if message.value.get("type") != "gemini" or not isinstance(calls, list):
            continue
        closed, updated = [], []
        for call in calls:
            codes = _open(call) if isinstance(call, Mapping) else ()
            if codes:
                closed.append(
                    ClosedCall(message.line, str(call.get("id") or ""), str(call.get("name")), codes)
                )
            updated.append(_closed(call) if codes else call)
        if closed:
            yield {**message.value, "toolCalls": updated}, closed


def _without_added(turns: Sequence[SentTurn]) -> list[Mapping[str, Any]]:
    """The contents sent, the responses the repair added taken out (a turn left empty dropped),
    and Gemini CLI's placeholder reply to responses that end the history."""
    contents: list[Mapping[str, Any]] = []
    for turn in turns[:-1] if turns and _is_placeholder(turns[-1]) else turns:
        parts = [p for p in turn.content["parts"] if not _added(p)]
        if parts:
            contents.append({"role": turn.role, "parts": parts})
    return contents


def _is_placeholder(turn: SentTurn) -> bool:
    return turn.role == "model" and turn.content["parts"] == [{"text": INTERRUPTED_PLACEHOLDER}]


def _added(part: object) -> bool:
    response = part.get("functionResponse") if isinstance(part, Mapping) else None
    return isinstance(response, Mapping) and response.get("response") == {"error": CANCELLED_ERROR}


def _finding_keys(analysis: ChatAnalysis) -> Counter[tuple[FindingCode, tuple[str, ...]]]:
    return Counter((f.code, f.ids) for f in analysis.findings)


def _names(ids: tuple[str, ...], call: ClosedCall) -> bool:
    """Whether a finding's ids name `call`: its recorded id, the id Gemini CLI sends (a `name__`
    prefix stripped), or, for a call recorded without one, the id Gemini CLI makes up for it."""
    if not call.call_id:
        return ids == ("",) or (len(ids) == 1 and ids[0].startswith(f"synth_{call.name}_"))
    sent = call.call_id.removeprefix(f"{call.name}__")
    return ids in ((call.call_id,), (sent,))


def _same(before: ChatAnalysis, after: ChatAnalysis, closed: Sequence[ClosedCall]) -> bool:
    """The repaired file sends the original's history plus the closing responses, and its findings
    are the original's without the closed calls'."""
    expected = _finding_keys(before)
    for call in closed:
        for code in call.codes:
            key = next((k for k in expected if k[0] is code and expected[k] > 0 and _names(k[1], call)), None)
            if key is not None:
                expected[key] -= 1
    if +expected != _finding_keys(after):
        return False
    return _without_added(before.turns) == _without_added(after.turns)


def _sent_edits(before: ChatAnalysis, after: ChatAnalysis, touched: frozenset[str]) -> tuple[SentEdit, ...]:
    """The tool-results turn of each message the repair closed calls of, where the repaired file
    sends it: a new item, or in place of the results turn the message already had; and Gemini
    CLI's placeholder reply when the history now ends with responses and did not."""
    answered = {turn.message_id for turn in before.turns if turn.results}
    placeholder = bool(after.turns) and _is_placeholder(after.turns[-1])
    placeholder = placeholder and not (before.turns and _is_placeholder(before.turns[-1]))
    return tuple(
        SentEdit(
            position,
            orjson.dumps(group[0].content, option=orjson.OPT_SORT_KEYS),  # as `group_digest` takes it
            replaces=group[0].message_id in answered,
        )
        for position, (group, _) in enumerate(after.items)
        if len(group) == 1
        and (
            (group[0].results and group[0].message_id in touched)
            or (placeholder and position == len(after.items) - 1)
        )
    )


def _refusal(analysis: ChatAnalysis) -> RepairRefusal | None:
    if analysis.conversation is None:
        return RepairRefusal.NOT_A_SESSION
    if any(kind not in (LineKind.RECORD, LineKind.BLANK) for kind in analysis.chat.kinds):
        return RepairRefusal.DAMAGED_LINES
    if any(record.kind is RecordKind.OTHER for record in analysis.chat.lines()):
        return RepairRefusal.UNKNOWN_RECORDS
    return None


def repair(data: bytes, limits: LineLimits) -> RepairResult:
    """The repaired bytes of one Gemini CLI chat file, proven by re-reading them."""
    analysis = analyze_chat(data, limits)
    conversation = analysis.conversation
    if analysis.checkpoint or (conversation is not None and analysis.legacy):
        return RepairResult(RepairOutcome.UNCHANGED, data)
    refusal = _refusal(analysis)
    if refusal is not None or conversation is None:
        return RepairResult(RepairOutcome.REFUSED, data, refusal=refusal or RepairRefusal.NOT_A_SESSION)
    updates = list(_updates(conversation.messages))
    if not updates:
        return RepairResult(RepairOutcome.UNCHANGED, data)
    closed = tuple(call for _, calls in updates for call in calls)
    ending = b"" if data.endswith(b"\n") else b"\n"
    repaired = data + ending + b"".join(orjson.dumps(message) + b"\n" for message, _ in updates)
    after = analyze_chat(repaired, limits)
    if not _same(analysis, after, closed):
        return RepairResult(RepairOutcome.REFUSED, data, closed, RepairRefusal.REREAD_DIFFERS)
    touched = frozenset(str(message["id"]) for message, _ in updates)
    return RepairResult(RepairOutcome.REPAIRED, repaired, closed, sent=_sent_edits(analysis, after, touched))
