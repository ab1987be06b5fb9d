"""Findings: one stable code, a severity, the 1-based line and uuid where relevant, never text.

The human-readable reason comes from a fixed table keyed by code, so no transcript content can
reach a report through a finding.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from pipeline.vocabulary import FindingCode, LineKind, Severity

__all__ = ["REASONS", "Finding", "LineFacts", "reading_findings"]

C = FindingCode
REASONS: Final = MappingProxyType(
    {
        C.LINE_NOT_JSON: "the line is not valid JSON",
        C.LINE_NOT_OBJECT: "the line is JSON but not an object",
        C.LINE_INVALID_UTF8: "bytes that are not UTF-8, read as U+FFFD the way Claude Code reads them",
        C.LINE_TRUNCATED: "the line ends before its JSON value is complete",
        C.LINE_NESTING_TOO_DEEP: "the line nests deeper than sweep.max_json_depth; it is not read",
        C.LINE_TOO_LONG: "the line is longer than sweep.max_line_bytes; it is not read",
        C.BLANK_LINE: "the line is empty or whitespace only",
        C.BYTE_ORDER_MARK: "the file starts with a UTF-8 byte order mark",
        C.CRLF_LINE_ENDINGS: "lines end with CR LF",
        C.MISSING_FINAL_NEWLINE: "the last line has no terminating newline",
        C.DUPLICATE_UUID: "the same uuid is carried by more than one record",
        C.MALFORMED_UUID: "uuid is present but not a non-empty string",
        C.MALFORMED_PARENT: "parentUuid is neither null nor a non-empty string",
        C.DANGLING_PARENT: "parentUuid names a uuid that is not in this file",
        C.EXTERNAL_PARENT: "the active chain starts at a record whose parent lives in another file",
        C.CROSS_SESSION_PARENT: "a record's parent belongs to a different sessionId",
        C.LAST_PROMPT_MALFORMED: "a last-prompt leafUuid is present but not a non-empty string",
        C.LAST_PROMPT_MISSING_LEAF: "a last-prompt leafUuid names a uuid that is not in this file",
        C.LAST_PROMPT_CROSS_SESSION: "a last-prompt points at a record of another sessionId",
        C.LAST_PROMPT_TEXT_MISMATCH: "the last-prompt text does not match the chosen chain's last prompt",
        C.LEAF_BELOW_LAST_PROMPT: "the session went on below its last pointer, where Claude Code resumes it",
        C.STRICT_REFUSAL: "the strict policy cannot select an active chain for this file",
        C.LEAF_INFERRED: "no pointer names the leaf; it was inferred from the transcript's structure",
        C.NO_BRANCH_ISOLATION: "physical-tail mode: rewound branches are not excluded",
        C.CHAIN_LOOP: "the parent walk from the leaf returns to a record it already visited",
        C.CHAIN_NON_MONOTONIC: "a parent on the active chain is physically after its child",
        C.ATTACHMENT_INVERSION: "accepted a same-session attachment parent edge out of physical order",
        C.SESSION_LINEAGE_UNSAFE: "the active chain's sessionId runs are not a safe one-way lineage",
        C.SESSION_LINEAGE_TRANSITION: "the active chain crosses from an earlier session into the current one",
        C.NO_ACTIVE_CHAIN: "the file has no record that can be resumed",
        C.TOOL_ID_MALFORMED: "a tool_use or tool_result id is missing or not a string",
        C.TOOL_USE_ID_DUPLICATE: "a tool_use id appears more than once on the active chain",
        C.TOOL_RESULT_ID_DUPLICATE: "a tool_result id appears more than once on the active chain",
        C.TOOL_USE_UNANSWERED: "the chain ends on a tool call whose result was never written",
        C.TOOL_USE_NOT_FOLLOWED_BY_USER: "an assistant tool_use is not followed by a user message",
        C.TOOL_RESULT_MISMATCH: "tool_result ids are not an ordered subset of the preceding tool_use ids",
        C.TOOL_RESULT_WITHOUT_USE: "a tool_result opens the active chain with no tool_use before it",
        C.TOOL_RESULT_NOT_FIRST: "tool_result blocks are not first in their user message",
        C.TOOL_RESULT_PARTIAL: "accepted a message answering only part of a multi-tool call",
        C.TOOL_RESULT_ORDER: "accepted results written in completion order, not call order",
        C.COMPACT_BOUNDARY_WITHOUT_UUID: "a compact_boundary has no uuid",
        C.COMPACT_BOUNDARY_SUMMARY_COUNT: "a compact_boundary lacks exactly one isCompactSummary child",
        C.COMPACT_SUMMARY_ORPHAN: "an isCompactSummary record is not the child of a compact_boundary",
        C.COMPACT_SUMMARY_LEGACY: "an isCompactSummary written before compact boundaries existed",
        C.COMPACT_SUMMARY_EMPTY: "an isCompactSummary record has no non-empty user text",
        C.COMPACT_METADATA_MISSING: "a compact_boundary has no compactMetadata object",
        C.COMPACT_PRESERVED_INVALID: "compactMetadata preserved references are malformed or point nowhere",
        C.COMPACT_PRESERVED_HISTORICAL: "compactMetadata names preserved records that are no longer current",
        C.COMPACT_NOT_ON_ACTIVE_CHAIN: "a compact pair exists but the active chain does not pass through it",
        C.CURRENT_COMPACT_PAIR: "the output does not hold exactly one current compact pair on its chain",
        C.INTERNAL_FIELD: "an internal planning field leaked into a record",
        C.SESSION_META_MISSING: "the rollout does not start with the session_meta record Codex resumes from",
        C.LEGACY_ROLLOUT_LAYOUT: "a rollout of the oldest layout (bare records): Codex no longer resumes it",
        C.UNKNOWN_RECORD: "a JSON object of no kind Codex writes; Codex skips it on resume",
        C.SESSION_DOCUMENT_NOT_RESUMED: (
            "a session saved as one JSON document (an older chat layout, or a checkpoint its client "
            "loads by tag): not a session file its client resumes, so it is read, never compacted"
        ),
        C.TURN_UNFINISHED: "a turn started and was neither completed nor aborted before the next one",
        C.COMPACTION_REBUILT: "a compaction without replacement_history: Codex rebuilds it from user texts",
        C.COMPACTION_MALFORMED: "a compacted record whose replacement_history is not a list of items",
        C.LINE_RECORDS_JOINED: "two or more records run together on one line: the agent skips the line",
        C.SESSION_HEADER_MISSING: "no session header line: pi would start a new session, not resume this one",
        C.UNKNOWN_ENTRY: "an entry of no type the agent writes: it adds nothing to the context",
        C.COMPACTION_KEPT_MISSING: "a compaction's first kept entry is off the branch: none before it kept",
        C.UNSUPPORTED_FORMAT: "a known transcript format this tool does not process yet",
        C.NOT_A_TRANSCRIPT: "no line of the file is a record of a known agent (ids say what it holds)",
        C.NOT_A_REGULAR_FILE: "a named pipe, socket or device with a session's name: skipped, never read",
        C.OBJECT_KEY_UNSAFE: "an object key with an empty, . or .. segment cannot be mirrored: never read",
        C.UNREADABLE: "the file could not be read",
        C.INTERNAL_ERROR: "an unexpected error stopped this session; see the log",
    }
)


@dataclass(frozen=True, slots=True)
class Finding:
    """One content-free observation about a session."""

    code: FindingCode
    severity: Severity
    line: int | None = None
    uuid: str | None = None
    count: int = 1
    ids: tuple[str, ...] = ()  # tool ids, session ids or reason codes: identifiers only


_LINE_CODES: Final = {
    LineKind.NOT_JSON: (C.LINE_NOT_JSON, Severity.ERROR),
    LineKind.NOT_OBJECT: (C.LINE_NOT_OBJECT, Severity.ERROR),
    LineKind.TRUNCATED: (C.LINE_TRUNCATED, Severity.ERROR),
    LineKind.NESTING_TOO_DEEP: (C.LINE_NESTING_TOO_DEEP, Severity.ERROR),
    LineKind.TOO_LONG: (C.LINE_TOO_LONG, Severity.ERROR),
    LineKind.BLANK: (C.BLANK_LINE, Severity.INFO),
}


@dataclass(frozen=True, slots=True)
class LineFacts:
    """What any format's reader found about a file's physical lines, for its reading findings."""

    kinds: Sequence[LineKind]
    replaced_utf8: Iterable[int]  # lines read with invalid UTF-8 replaced (the record is kept)
    has_bom: bool
    crlf_lines: int
    final_newline: bool


def reading_findings(facts: LineFacts) -> list[Finding]:
    """One finding per line that is not a record, plus file-level encoding observations."""
    findings = [
        Finding(code, severity, line=number)
        for number, kind in enumerate(facts.kinds, 1)
        if kind is not LineKind.RECORD
        for code, severity in (_LINE_CODES[kind],)
    ]
    findings.extend(
        Finding(C.LINE_INVALID_UTF8, Severity.WARNING, line=number) for number in facts.replaced_utf8
    )
    if facts.has_bom:
        findings.append(Finding(C.BYTE_ORDER_MARK, Severity.INFO, line=1))
    if facts.crlf_lines:
        findings.append(Finding(C.CRLF_LINE_ENDINGS, Severity.INFO, count=facts.crlf_lines))
    if len(facts.kinds) and not facts.final_newline:
        findings.append(Finding(C.MISSING_FINAL_NEWLINE, Severity.INFO, line=len(facts.kinds)))
    return findings
