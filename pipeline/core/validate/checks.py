"""The transcript validator (seed 004, "Validation Boundary"), tuned to what real files contain.

File-wide checks cover reading, identity, links, pointers and compact pairs; pairing checks run
on the active chain only, so damage confined to an excluded branch is a warning, never a block.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Final

from pipeline.core.graph import UuidGraph
from pipeline.core.index import LineIndex
from pipeline.core.validate.pairing import check_pairing
from pipeline.findings import Finding, LineFacts, reading_findings
from pipeline.formats.claude_code import scan
from pipeline.formats.claude_code.decode import RecordFlag
from pipeline.formats.claude_code.records import (
    CompactMetadataRefs,
    RefState,
    compact_metadata,
    summary_has_text,
)
from pipeline.vocabulary import FindingCode, PointerState, RecordType, Severity

__all__ = [
    "COMPILED_IDENTITY",
    "READING_CODES",
    "Validation",
    "identity_line_facts",
    "identity_line_facts_reference",
    "read_findings",
    "validate",
]

C = FindingCode
E, W, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO
_MALFORMED: Final = RecordFlag.UUID_MALFORMED.value | RecordFlag.PARENT_MALFORMED.value  # one test a line
COMPILED_IDENTITY: Final = (C.MALFORMED_UUID, C.MALFORMED_PARENT, C.DANGLING_PARENT)
"""The identity facts' kinds, by the index the Rust core gives them (`rust/src/sweep.rs`)."""
READING_CODES: Final = frozenset({C.LINE_NOT_JSON, C.LINE_NOT_OBJECT, C.LINE_TRUNCATED, C.BLANK_LINE})
"""Lines Claude Code skips as well, so a compaction that leaves them out changes nothing it reads.

A line too deep or too long for our readers is one Claude Code keeps: it is an error of the
session, and a compaction is refused rather than made without it.
"""


@dataclass(frozen=True, slots=True)
class Validation:
    """Everything the validator found, plus the counts reports show."""

    findings: tuple[Finding, ...]
    partial_results: int
    api_messages: int


def read_findings(index: LineIndex) -> list[Finding]:
    """One finding per line that is not a record, plus file-level encoding observations."""
    replaced = index.flagged(RecordFlag.REPLACED_UTF8.value)
    return reading_findings(
        LineFacts(index.kinds, replaced, index.has_bom, index.crlf_lines, index.final_newline)
    )


def _identity_findings(
    index: LineIndex, graph: UuidGraph, active: frozenset[int], chain: tuple[int, ...]
) -> list[Finding]:
    findings: list[Finding] = []
    for uuid in graph.duplicates:
        lines = [n for n in graph.uuid_lines if (r := index.record(n)) is not None and r.uuid == uuid]
        on_chain = any(line in active for line in lines)
        findings.append(
            Finding(
                C.DUPLICATE_UUID,
                E if on_chain else W,
                line=lines[1],
                uuid=uuid if on_chain else None,
                count=len(lines),
            )
        )
    facts, cross_session = identity_line_facts(index, graph, chain)
    findings.extend(_line_finding(kind, line, bit) for kind, line, bit in facts)
    if cross_session:
        findings.append(Finding(C.CROSS_SESSION_PARENT, W, count=cross_session))
    return findings


def _line_finding(kind: int, line: int, bit: bool) -> Finding:
    """The finding of one identity fact; `bit` is "on the chain" for a malformed parent and "a
    sidechain record" for a dangling one (subagent files point into their parent's by design)."""
    code = COMPILED_IDENTITY[kind]
    if code is C.MALFORMED_UUID:
        return Finding(code, W, line=line)
    if code is C.MALFORMED_PARENT:
        return Finding(code, E if bit else W, line=line)
    return Finding(code, INFO if bit else W, line=line)


def identity_line_facts(index: LineIndex, graph: UuidGraph, chain: tuple[int, ...]) -> scan.IdentityFacts:
    """The identity checks' per-line facts: one whole-file pass, in the Rust core where built
    (`identity_line_facts_reference` is what it is held to)."""
    if scan.COMPILED:
        return scan.identity_facts(index.records, graph.parent_line.tobytes(), chain)
    return identity_line_facts_reference(index, graph, frozenset(chain))


def identity_line_facts_reference(
    index: LineIndex, graph: UuidGraph, active: frozenset[int]
) -> scan.IdentityFacts:
    """`identity_line_facts` in pure Python: (kind, line, bit) in file order, kind indexing
    `COMPILED_IDENTITY`, and the parent links off the chain that cross sessions."""
    facts: list[tuple[int, int, bool]] = []
    cross_session = 0
    records, parents = index.records, graph.parent_line  # read directly: this runs for every line
    for number, record in enumerate(records, 1):
        if record is None:
            continue
        on_chain = number in active
        if record.flags & _MALFORMED:
            if record.uuid_malformed:
                facts.append((0, number, False))
            if record.parent_malformed:
                facts.append((1, number, on_chain))
        parent_line = parents[number - 1]
        if record.parent is not None and parent_line == 0 and not on_chain:
            facts.append((2, number, record.sidechain))
        if parent_line:
            parent = records[parent_line - 1]
            if parent is not None and record.session and parent.session and record.session != parent.session:
                cross_session += not on_chain
    return tuple(facts), cross_session


def _pointer_findings(index: LineIndex, graph: UuidGraph) -> list[Finding]:
    findings: list[Finding] = []
    for number in index.typed(RecordType.LAST_PROMPT):
        record = index.entry(number)
        if record.pointer_state is PointerState.ABSENT:
            continue
        if record.pointer_state is PointerState.NULL and record.pointer_explicit:
            continue  # Claude Code's own "nothing to resume" marker (written by /clear and rewinds)
        if record.pointer_state is not PointerState.LEAF:
            findings.append(Finding(C.LAST_PROMPT_MALFORMED, W, line=number))
            continue
        target_line = graph.line_of.get(record.pointer or "")
        if target_line is None:
            findings.append(Finding(C.LAST_PROMPT_MISSING_LEAF, W, line=number))
            continue
        target = index.record(target_line)
        if target is not None and record.session and target.session and record.session != target.session:
            findings.append(Finding(C.LAST_PROMPT_CROSS_SESSION, W, line=number))
    return findings


def _preserved_findings(
    metadata: CompactMetadataRefs, graph: UuidGraph, line: int, on_chain: bool
) -> list[Finding]:
    findings: list[Finding] = []
    severity = E if on_chain else W
    preserved, segment = metadata.preserved, metadata.segment
    if preserved.state is RefState.VALID:
        if not preserved.uuids_valid:
            findings.append(Finding(C.COMPACT_PRESERVED_INVALID, severity, line=line))
        elif any(u not in graph.line_of for u in preserved.uuids):
            findings.append(Finding(C.COMPACT_PRESERVED_HISTORICAL, W, line=line))
        if preserved.anchor is None or preserved.anchor not in graph.line_of:
            findings.append(Finding(C.COMPACT_PRESERVED_INVALID, severity, line=line))
    elif preserved.state is RefState.MALFORMED:
        findings.append(Finding(C.COMPACT_PRESERVED_INVALID, severity, line=line))
    if segment.state is RefState.MALFORMED or (
        segment.state is RefState.VALID and segment.anchor not in graph.line_of
    ):
        findings.append(Finding(C.COMPACT_PRESERVED_INVALID, severity, line=line))
    elif segment.state is RefState.VALID and (
        segment.head not in graph.line_of or segment.tail not in graph.line_of
    ):
        findings.append(Finding(C.COMPACT_PRESERVED_HISTORICAL, W, line=line))
    return findings


def _compact_findings(
    index: LineIndex, graph: UuidGraph, active: frozenset[int], data: bytes
) -> list[Finding]:
    boundaries = index.flagged(RecordFlag.COMPACT_BOUNDARY.value)
    summaries = index.flagged(RecordFlag.COMPACT_SUMMARY.value)
    boundary_uuids = {index.record(n).uuid: n for n in boundaries if index.record(n).uuid}  # type: ignore[union-attr]
    children: Counter[int] = Counter()
    findings: list[Finding] = []
    for line in summaries:
        record = index.record(line)
        assert record is not None
        on_chain = line in active
        if record.parent in boundary_uuids:
            children[boundary_uuids[record.parent]] += 1
        elif not boundaries:
            findings.append(Finding(C.COMPACT_SUMMARY_LEGACY, INFO, line=line))
        else:
            findings.append(Finding(C.COMPACT_SUMMARY_ORPHAN, E if on_chain else W, line=line))
        if not summary_has_text(index.raw_line(data, line)):
            findings.append(Finding(C.COMPACT_SUMMARY_EMPTY, E if on_chain else W, line=line))
    for line in boundaries:
        record = index.record(line)
        assert record is not None
        on_chain = line in active
        if record.uuid is None:
            findings.append(Finding(C.COMPACT_BOUNDARY_WITHOUT_UUID, E if on_chain else W, line=line))
            continue
        if children[line] != 1:
            findings.append(
                Finding(
                    C.COMPACT_BOUNDARY_SUMMARY_COUNT, E if on_chain else W, line=line, count=children[line]
                )
            )
        metadata = compact_metadata(index.raw_line(data, line))
        if metadata is None:
            findings.append(Finding(C.COMPACT_METADATA_MISSING, W, line=line))
        else:
            findings.extend(_preserved_findings(metadata, graph, line, on_chain))
    if boundaries and active and not any(line in active for line in boundaries):
        findings.append(Finding(C.COMPACT_NOT_ON_ACTIVE_CHAIN, INFO, count=len(boundaries)))
    return findings


def validate(index: LineIndex, graph: UuidGraph, chain: tuple[int, ...], data: bytes) -> Validation:
    """Run every check; `chain` is the active chain in logical order (empty when refused)."""
    active = frozenset(chain)
    findings = read_findings(index)
    findings += _identity_findings(index, graph, active, chain)
    findings += _pointer_findings(index, graph)
    findings += _compact_findings(index, graph, active, data)
    pairing = check_pairing(index, graph, chain)
    findings += pairing.findings
    return Validation(tuple(findings), pairing.partial_results, pairing.message_count)
