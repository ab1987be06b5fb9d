"""What is wrong with a Qwen Code session, as findings: file line, code, severity, never text.

Damaged lines are reading findings. A JSON object Qwen Code skips (bad identity, a type it does not
write) loses a record. On the active branch: a missing parent (Qwen Code resumes from there on and
loses what came before), a cycle, fragments of one uuid that disagree on the parent, more than one
session id (Qwen Code refuses the file), a malformed compression, and the pairing of function
calls and responses in the history it sends: a call it answers itself with a failure (no answer
in the user contents right after it), an answer it moves up to its call (written after the next
prompt or another part that is no answer), a second answer it drops, a response no call before
its run names (its converter drops it), two calls of one id. Answers to parallel calls written as
records of their own are no finding: that is how Qwen Code writes them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from pipeline.findings import Finding, LineFacts, reading_findings
from pipeline.formats.qwen_code.active_chain import ActiveChain
from pipeline.formats.qwen_code.api_history import Entry, Rebuilt
from pipeline.formats.qwen_code.call_repair import PartAt, TurnRepair, orphan_responses
from pipeline.formats.qwen_code.part_origins import part_origins
from pipeline.formats.qwen_code.session_decode import Rejected, Session
from pipeline.formats.qwen_code.session_records import KNOWN_SUBTYPES, PartKind, QwenRecord
from pipeline.vocabulary import FindingCode, Severity

__all__ = ["session_findings"]

C = FindingCode


def _line_findings(session: Session) -> Iterator[Finding]:
    replaced = [d.line for d in session.decoded if isinstance(d, QwenRecord) and d.replaced_utf8]
    facts = LineFacts(session.kinds, replaced, session.has_bom, session.crlf_lines, session.final_newline)
    yield from reading_findings(facts)
    for number, decoded in enumerate(session.decoded, 1):
        if isinstance(decoded, Rejected):
            yield Finding(decoded.code, Severity.ERROR, line=number)
        elif isinstance(decoded, QwenRecord) and decoded.subtype and decoded.subtype not in KNOWN_SUBTYPES:
            yield Finding(C.UNKNOWN_RECORD, Severity.INFO, line=number, uuid=decoded.uuid)


def _chain_findings(chain: ActiveChain, rebuilt: Rebuilt) -> Iterator[Finding]:
    if not chain.records:
        yield Finding(C.NO_ACTIVE_CHAIN, Severity.ERROR)
    if len(chain.session_ids) > 1:
        yield Finding(C.CROSS_SESSION_PARENT, Severity.ERROR, count=len(chain.session_ids))
    if chain.gap_child is not None:
        gap = chain.gap_child
        yield Finding(C.DANGLING_PARENT, Severity.WARNING, line=gap.line, uuid=gap.uuid)
    if chain.cycle_uuid is not None:
        yield Finding(C.CHAIN_LOOP, Severity.ERROR, uuid=chain.cycle_uuid)
    for record in chain.conflicting:
        yield Finding(C.DUPLICATE_UUID, Severity.WARNING, line=record.line, uuid=record.uuid)
    for line in rebuilt.malformed_compressions:
        yield Finding(C.COMPACTION_MALFORMED, Severity.ERROR, line=line)


def _line_of(session: Session, entry: Entry, part: int) -> int:
    origins = part_origins(session, entry)
    return origins[part][0] if origins else entry.lines[-1]


def _repair_findings(
    session: Session, entries: tuple[Entry, ...], turns: tuple[TurnRepair, ...]
) -> Iterator[Finding]:
    """What Qwen Code mends before sending: the calls it answers itself, the answers it moves up
    past another part, the second answers it drops (one finding per call)."""
    for turn in turns:
        line = entries[turn.model].lines[-1]
        for part in turn.synthesized:
            yield Finding(C.TOOL_USE_UNANSWERED, Severity.WARNING, line=line, ids=(part.call_id or "",))
        for at in turn.late:
            ids = (entries[at.entry].content.parts[at.part].call_id or "",)
            yield Finding(
                C.TOOL_RESULT_NOT_FIRST,
                Severity.WARNING,
                line=_line_of(session, entries[at.entry], at.part),
                ids=ids,
            )
        seconds: dict[str, PartAt] = {}
        for at in turn.duplicates:
            seconds.setdefault(entries[at.entry].content.parts[at.part].call_id or "", at)
        for call_id, at in seconds.items():
            line = _line_of(session, entries[at.entry], at.part)
            yield Finding(C.TOOL_RESULT_ID_DUPLICATE, Severity.WARNING, line=line, ids=(call_id,))


def _pairing_findings(session: Session, entries: tuple[Entry, ...]) -> Iterator[Finding]:
    """Two calls of one id, and the responses no call before their run names (Qwen Code's
    converter drops them)."""
    calls: Counter[str] = Counter()
    where: dict[str, int] = {}
    for entry in entries:
        for part in entry.content.parts:
            if part.call_id is not None and part.kind is PartKind.FUNCTION_CALL:
                calls[part.call_id] += 1
                where.setdefault(part.call_id, entry.lines[-1])
    for call_id in calls:
        if calls[call_id] > 1:
            yield Finding(C.TOOL_USE_ID_DUPLICATE, Severity.WARNING, line=where[call_id], ids=(call_id,))
    for at in orphan_responses(entries):
        ids = (entries[at.entry].content.parts[at.part].call_id or "",)
        yield Finding(
            C.TOOL_RESULT_WITHOUT_USE,
            Severity.WARNING,
            line=_line_of(session, entries[at.entry], at.part),
            ids=ids,
        )


def session_findings(
    session: Session, chain: ActiveChain, rebuilt: Rebuilt, turns: tuple[TurnRepair, ...]
) -> tuple[Finding, ...]:
    """Every finding of one session, reading first, then the branch, then the pairing (`turns`:
    Qwen Code's repair of the rebuilt history)."""
    return (
        *_line_findings(session),
        *_chain_findings(chain, rebuilt),
        *_repair_findings(session, rebuilt.entries, turns),
        *_pairing_findings(session, rebuilt.entries),
    )
