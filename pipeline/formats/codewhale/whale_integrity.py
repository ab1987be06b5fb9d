"""What validation finds in a CodeWhale session: each fault as a content-free finding on the
record it concerns (the document's records are numbered as `whale_document.py` says).

Errors are what makes CodeWhale refuse the document on load (bad JSON, a block or entry serde
rejects, a journal `validate_saved_journal` refuses); warnings what it repairs on resume (an
unanswered call, an orphan or duplicate result) or what seed 000 forbids in a history (stacked
or placeholder-only checkpoints); info a legacy checkpoint form it still reads.
"""

from __future__ import annotations

from typing import Final

from pipeline.findings import Finding
from pipeline.formats.codewhale.whale_document import Decoded, DocumentFault
from pipeline.formats.codewhale.whale_history import JournalFault, Rebuilt
from pipeline.formats.codewhale.whale_markers import (
    NO_SUMMARY,
    SUMMARY_HEADER,
    is_checkpoint,
    is_wire_checkpoint,
)
from pipeline.vocabulary import FindingCode as C
from pipeline.vocabulary import Severity

__all__ = ["session_findings"]

_DOCUMENT: Final = {
    DocumentFault.NOT_JSON: C.LINE_NOT_JSON,
    DocumentFault.NOT_OBJECT: C.LINE_NOT_OBJECT,
    DocumentFault.TOO_LONG: C.LINE_TOO_LONG,
    DocumentFault.TOO_DEEP: C.LINE_NESTING_TOO_DEEP,
    DocumentFault.NO_METADATA: C.SESSION_META_MISSING,
    DocumentFault.NO_MESSAGES: C.NO_ACTIVE_CHAIN,
    DocumentFault.BAD_MESSAGE: C.UNKNOWN_RECORD,
    DocumentFault.BAD_ENTRY: C.UNKNOWN_RECORD,
    DocumentFault.BAD_JOURNAL: C.MALFORMED_PARENT,
}
_JOURNAL: Final = {
    JournalFault.DUPLICATE_ID: C.DUPLICATE_UUID,
    JournalFault.MISSING_PARENT: C.DANGLING_PARENT,
    JournalFault.MISSING_LEAF: C.LAST_PROMPT_MISSING_LEAF,
    JournalFault.CYCLE: C.CHAIN_LOOP,
}


def _repair_findings(rebuilt: Rebuilt) -> list[Finding]:
    repair = rebuilt.repair
    found = [
        (C.TOOL_USE_UNANSWERED, repair.unanswered),
        (C.TOOL_RESULT_WITHOUT_USE, repair.orphan_results),
        (C.TOOL_RESULT_ID_DUPLICATE, repair.duplicate_results),
    ]
    return [Finding(code, Severity.WARNING, count=len(ids), ids=ids) for code, ids in found if ids]


def _checkpoint_findings(rebuilt: Rebuilt) -> list[Finding]:
    checkpoints = [item for item in rebuilt.messages if is_checkpoint(item.message)]
    findings: list[Finding] = []
    if len(checkpoints) > 1:
        lines = [c.record for c in checkpoints if c.record is not None]
        findings.append(
            Finding(
                C.COMPACT_BOUNDARY_SUMMARY_COUNT,
                Severity.WARNING,
                lines[-1] if lines else None,
                count=len(checkpoints),
            )
        )
    for item in checkpoints:
        if not is_wire_checkpoint(item.message):
            findings.append(Finding(C.COMPACT_SUMMARY_LEGACY, Severity.INFO, item.record))
            continue
        body = item.message.blocks[0].text.removeprefix(SUMMARY_HEADER).strip()
        if body.startswith(NO_SUMMARY) or not body:
            findings.append(Finding(C.COMPACT_SUMMARY_EMPTY, Severity.WARNING, item.record))
    return findings


def session_findings(decoded: Decoded, rebuilt: Rebuilt | None) -> tuple[Finding, ...]:
    """Every finding of one document, document faults first, then by record."""
    findings: list[Finding] = [
        Finding(_DOCUMENT[fault], Severity.ERROR, record if record is not None else 1)
        for fault, record in decoded.faults
    ]
    if rebuilt is not None:
        findings += [Finding(_JOURNAL[fault], Severity.ERROR, record) for fault, record in rebuilt.faults]
        findings += _repair_findings(rebuilt)
        findings += _checkpoint_findings(rebuilt)
        if not rebuilt.messages and not rebuilt.faults:
            findings.append(Finding(C.NO_ACTIVE_CHAIN, Severity.WARNING))
    return tuple(sorted(findings, key=_order))


def _order(finding: Finding) -> tuple[int, int]:
    return (0 if finding.line is None else 1, finding.line or 0)
