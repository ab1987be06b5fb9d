"""What a Codex rollout's validation finds: damaged lines, calls and outputs paired by `call_id`,
turn structure, and how its compactions cover the history.

Pairing is judged on the context Codex rebuilds, where it matters: a call Codex will answer with
"aborted" and an output whose call is gone are warnings (Codex repairs both on resume, and a
compaction keeps them as Codex would send them); a damaged line is an error, as for Claude Code.
"""

from __future__ import annotations

from collections import Counter
from typing import Final

from pipeline.findings import Finding, LineFacts, reading_findings
from pipeline.formats.codex.item_types import CALL_TYPES
from pipeline.formats.codex.reconstruct import ItemOrigin, Rebuilt
from pipeline.formats.codex.rollout_decode import Rollout, RolloutKind
from pipeline.vocabulary import FindingCode, Severity

__all__ = ["rollout_findings"]

C = FindingCode
E, W, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO
_STARTED: Final = frozenset({"task_started", "turn_started"})
_ENDED: Final = frozenset({"task_complete", "turn_complete", "turn_aborted"})


def _line_findings(rollout: Rollout) -> list[Finding]:
    entries = list(enumerate(rollout.entries, 1))
    replaced = (number for number, entry in entries if entry is not None and entry.replaced_utf8)
    facts = LineFacts(rollout.kinds, replaced, rollout.has_bom, rollout.crlf_lines, rollout.final_newline)
    unknown = (
        Finding(C.UNKNOWN_RECORD, INFO, line=number)
        for number, entry in entries
        if entry is not None and entry.kind is RolloutKind.OTHER
    )
    return [*reading_findings(facts), *unknown]


def _head_findings(rollout: Rollout) -> list[Finding]:
    if rollout.legacy:
        return [Finding(C.LEGACY_ROLLOUT_LAYOUT, W, line=1)]
    first = next((n for n, entry in enumerate(rollout.entries, 1) if entry is not None), None)
    entry = rollout.entry(first) if first is not None else None
    if entry is None or entry.kind is not RolloutKind.SESSION_META:
        return [Finding(C.SESSION_META_MISSING, W, line=first)]
    return []


def _turn_findings(rollout: Rollout) -> list[Finding]:
    """A turn that starts while another is open, that one never completed nor aborted."""
    findings, open_line = [], None
    for number, entry in enumerate(rollout.entries, 1):
        if entry is None or entry.kind is not RolloutKind.EVENT_MSG:
            continue
        if entry.item in _STARTED:
            if open_line is not None:
                findings.append(Finding(C.TURN_UNFINISHED, INFO, line=open_line))
            open_line = number
        elif entry.item in _ENDED:
            open_line = None
    return findings


def _compaction_findings(rollout: Rollout, malformed: frozenset[int]) -> list[Finding]:
    findings = [Finding(C.COMPACTION_MALFORMED, E, line=number) for number in sorted(malformed)]
    for number in rollout.lines_where(RolloutKind.COMPACTED):
        entry = rollout.entry(number)
        if entry is not None and not entry.replacement:
            findings.append(Finding(C.COMPACTION_REBUILT, INFO, line=number))
    return findings


def _pairing_findings(rebuilt: Rebuilt) -> list[Finding]:
    findings = [
        Finding(C.TOOL_RESULT_WITHOUT_USE, W, line=item.line, ids=(item.call_id or "",))
        for item in rebuilt.orphans
    ]
    calls = Counter(item.call_id for item in rebuilt.items if item.type in CALL_TYPES and item.call_id)
    for item in rebuilt.items:
        if item.origin is ItemOrigin.ABORTED_OUTPUT:
            findings.append(Finding(C.TOOL_USE_UNANSWERED, W, line=item.line, ids=(item.call_id or "",)))
    findings.extend(
        Finding(C.TOOL_USE_ID_DUPLICATE, W, ids=(call_id,), count=count)
        for call_id, count in calls.items()
        if count > 1
    )
    return findings


def rollout_findings(rollout: Rollout, rebuilt: Rebuilt, malformed: frozenset[int]) -> tuple[Finding, ...]:
    """Every finding of one rollout; `malformed`: compacted lines whose history is not a list."""
    return (
        *_line_findings(rollout),
        *_head_findings(rollout),
        *_turn_findings(rollout),
        *_compaction_findings(rollout, malformed),
        *_pairing_findings(rebuilt),
    )
