"""What is wrong with a Gemini CLI session, as content-free findings (line, code, ids).

A file no line of which names a session (no header) and that is no legacy document is not
resumable (`session-meta-missing`); a parsed record of no kind Gemini CLI reads is
`unknown-record`; a rewind to an id not loaded drops every message (`dangling-parent`); in the
history sent, a call that no following user turn answers is `tool-use-unanswered`, a response
whose call the model turn before it lacks `tool-result-without-use`, and a tool call whose
recorded status is no final one Gemini CLI writes `turn-unfinished`. Gemini CLI sends a
completed call's response twice (from the call's result and from the user message recording
it): that is its own form, not a finding.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Final

from pipeline.findings import Finding
from pipeline.formats.gemini_cli.chat_lines import ChatFile, RecordKind
from pipeline.formats.gemini_cli.conversation import Conversation
from pipeline.formats.gemini_cli.history import SentTurn
from pipeline.vocabulary import FindingCode as C
from pipeline.vocabulary import Severity

__all__ = ["FINAL_STATUSES", "chat_findings", "pairing_findings"]

FINAL_STATUSES: Final = frozenset({"success", "error", "cancelled"})


def _ids(turn: SentTurn, key: str) -> list[str]:
    found = []
    for part in turn.content["parts"]:
        inner = part.get(key) if isinstance(part, dict) else None
        if isinstance(inner, dict):
            found.append(str(inner.get("id") or ""))
    return found


def _answers(turns: Sequence[SentTurn], start: int) -> set[str]:
    """The response ids of the run of user turns from `start` (one `Content` once coalesced)."""
    answered: set[str] = set()
    for turn in turns[start:]:
        if turn.role != "user":
            break
        answered.update(_ids(turn, "functionResponse"))
    return answered


def pairing_findings(turns: Sequence[SentTurn]) -> Iterator[Finding]:
    """Calls no following user turn answers, responses the model turn before them did not call."""
    calls: set[str] = set()
    for index, turn in enumerate(turns):
        if turn.role == "model":
            calls = set(_ids(turn, "functionCall"))
            answered = _answers(turns, index + 1)
            for call in _ids(turn, "functionCall"):
                if call not in answered:
                    yield Finding(C.TOOL_USE_UNANSWERED, Severity.WARNING, line=turn.line, ids=(call,))
            continue
        for response in _ids(turn, "functionResponse"):
            if response not in calls:
                yield Finding(C.TOOL_RESULT_WITHOUT_USE, Severity.WARNING, line=turn.line, ids=(response,))


def _statuses(conversation: Conversation) -> Iterator[Finding]:
    for message in conversation.messages:
        calls = message.value.get("toolCalls")
        for call in calls if isinstance(calls, list) else ():
            status = call.get("status") if isinstance(call, dict) else None
            if status is not None and status not in FINAL_STATUSES:
                ident = str(call.get("id") or "")
                yield Finding(C.TURN_UNFINISHED, Severity.WARNING, line=message.line, ids=(ident,))


def chat_findings(
    chat: ChatFile, conversation: Conversation | None, turns: Sequence[SentTurn], *, legacy: bool
) -> list[Finding]:
    """Every finding of one session, in the order its checks run."""
    if conversation is None:
        return [Finding(C.SESSION_META_MISSING, Severity.ERROR)]
    findings: list[Finding] = []
    if not legacy:
        findings.extend(
            Finding(C.UNKNOWN_RECORD, Severity.WARNING, line=r.line)
            for r in chat.lines()
            if r.kind is RecordKind.OTHER
        )
        findings.extend(
            Finding(C.DANGLING_PARENT, Severity.WARNING, line=line) for line in conversation.unknown_rewinds
        )
    findings.extend(pairing_findings(turns))
    findings.extend(_statuses(conversation))
    return findings
