"""What validation finds in one pi session: damaged lines, the header, links, compaction, pairing.

Each finding names a line (and ids where they help), never text. Severities follow what pi does
with the defect: a line pi skips or a parent cycle (pi would walk it forever) is an error; what
pi works around (a parent it cannot find ends the branch there, a call without a result gets a
synthetic error result) is a warning.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from pipeline.findings import Finding, LineFacts, reading_findings
from pipeline.formats.pi.branch import PiBranch
from pipeline.formats.pi.chat_form import ChatMessage, MessageOrigin
from pipeline.formats.pi.session_decode import PiKind, PiSession
from pipeline.vocabulary import FindingCode, Severity

__all__ = ["session_findings"]

C = FindingCode


def _line_findings(session: PiSession) -> Iterator[Finding]:
    facts = LineFacts(
        session.kinds,
        sorted(session.replaced_utf8),
        session.has_bom,
        session.crlf_lines,
        session.final_newline,
    )
    for finding in reading_findings(facts):
        if finding.code is C.LINE_NOT_JSON and finding.line in session.joined:
            yield Finding(C.LINE_RECORDS_JOINED, Severity.ERROR, line=finding.line)
        else:
            yield finding


def _entry_findings(session: PiSession) -> Iterator[Finding]:
    if session.header is None:
        yield Finding(C.SESSION_HEADER_MISSING, Severity.ERROR)
    linked = session.version >= 2
    ids = Counter(e.entry_id for e in session.entries if e.kind is not PiKind.SESSION and e.entry_id)
    reported: set[str] = set()
    for entry in session.entries:
        if entry.kind is PiKind.OTHER:
            yield Finding(C.UNKNOWN_ENTRY, Severity.INFO, line=entry.line)
        if entry.kind is PiKind.SESSION or not linked:
            continue
        if entry.entry_id is None:
            yield Finding(C.MALFORMED_UUID, Severity.WARNING, line=entry.line)
        elif ids[entry.entry_id] > 1 and entry.entry_id not in reported:
            reported.add(entry.entry_id)
            yield Finding(C.DUPLICATE_UUID, Severity.WARNING, line=entry.line, uuid=entry.entry_id)


def _branch_findings(session: PiSession, branch: PiBranch) -> Iterator[Finding]:
    if branch.leaf is None:
        yield Finding(C.NO_ACTIVE_CHAIN, Severity.ERROR)
    if branch.loop_at is not None:
        yield Finding(C.CHAIN_LOOP, Severity.ERROR, line=branch.loop_at)
    for line in branch.dangling:
        yield Finding(C.DANGLING_PARENT, Severity.WARNING, line=line)
    compaction = branch.compaction
    retain_none = compaction is not None and branch.kept_id == compaction.entry_id  # its own id
    if compaction is not None and branch.kept_from is None and not retain_none:
        yield Finding(C.COMPACTION_KEPT_MISSING, Severity.WARNING, line=compaction.line)


def _pairing_findings(messages: list[ChatMessage]) -> Iterator[Finding]:
    called: set[object] = set()
    for message in messages:
        body = message.body
        if message.origin is MessageOrigin.SYNTHETIC:
            call_id = str(body.get("tool_call_id"))
            yield Finding(C.TOOL_USE_UNANSWERED, Severity.WARNING, line=message.line, ids=(call_id,))
        elif body.get("role") == "assistant":
            called.update(call.get("id") for call in body.get("tool_calls", ()))
        elif body.get("role") == "tool" and body.get("tool_call_id") not in called:
            call_id = str(body.get("tool_call_id"))
            yield Finding(C.TOOL_RESULT_WITHOUT_USE, Severity.WARNING, line=message.line, ids=(call_id,))


def session_findings(
    session: PiSession, branch: PiBranch, messages: list[ChatMessage]
) -> tuple[Finding, ...]:
    """Every finding of one session, in a stable order."""
    return (
        *_line_findings(session),
        *_entry_findings(session),
        *_branch_findings(session, branch),
        *_pairing_findings(messages),
    )
