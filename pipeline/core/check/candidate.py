"""Checks on a composed candidate before anything is written.

The candidate's bytes are indexed and validated from scratch, exactly as a fresh source would
be: its active chain must be reachable from its final pointer and consist of the one new compact
pair followed by the kept suffix, tool pairing must hold, no internal field may leak, the token
target must hold, and the survival contract must pass against the source. Any failure means
nothing is written for the session.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.core.check.contract import ContractMessage, Violation, check_survival
from pipeline.core.graph import build_graph
from pipeline.core.index import LineIndex, build_index
from pipeline.core.topology.select import AUTO, resolve_topology
from pipeline.core.validate.checks import validate
from pipeline.core.validate.pairing import api_messages
from pipeline.findings import Finding
from pipeline.formats.claude_code.records import has_internal_field, message_text
from pipeline.formats.line_guard import LineLimits
from pipeline.reasons import INTERNAL_CANDIDATE_FAILURES, CandidateFailure, Figure, Reason
from pipeline.vocabulary import FindingCode, Role, Severity, SourceFormat

__all__ = ["CandidateCheck", "check_candidate", "contract_messages"]

# Block codes other than these (images, documents) are media: no checkpoint text can restate them.
_TEXT_OR_RESULT = frozenset("TR")


@dataclass(frozen=True, slots=True)
class CandidateCheck:
    """The verdict on a candidate and the figures the report shows."""

    failures: tuple[Reason, ...]  # content-free; empty means the candidate may be written
    findings: tuple[Finding, ...]
    violations: tuple[Violation, ...]
    output_tokens: int
    output_lines: int

    @property
    def ok(self) -> bool:
        """Whether the candidate passed every check."""
        return not self.failures

    @property
    def internal(self) -> bool:
        """Whether a failure is our own inconsistency (`INTERNAL_CANDIDATE_FAILURES`), not the session's."""
        return any(failure.code in INTERNAL_CANDIDATE_FAILURES for failure in self.failures)


def contract_messages(
    data: bytes, index: LineIndex, chain: Sequence[int], *, from_line: int | None = None
) -> list[ContractMessage]:
    """API messages of a chain as contract values (texts read by offset, from `from_line` on)."""
    messages: list[ContractMessage] = []
    start = chain.index(from_line) if from_line in chain else 0
    for message in api_messages(index, tuple(chain[start:])):
        # User records stay apart (a prompt is judged on its own text); assistant fragments merge.
        groups = [(line,) for line in message.lines] if message.role == Role.USER else [message.lines]
        for lines in groups:
            texts: list[str] = []
            uses: list[str] = []
            results: list[str] = []
            checkpoint = meta = media = False
            for line in lines:
                record = index.entry(line)
                text, summary = "", record.compact_summary
                if "T" in record.blocks:  # only text blocks are read: a 50 MB tool result is not parsed
                    _, text, summary = message_text(index.raw_line(data, line))
                checkpoint = checkpoint or summary
                meta = meta or record.meta
                media = media or bool(set(record.blocks) - _TEXT_OR_RESULT)
                uses.extend(record.tool_uses)
                results.extend(record.tool_results)
                if text:
                    texts.append(text)
            messages.append(
                ContractMessage(
                    message.role, "\n".join(texts), tuple(uses), tuple(results), checkpoint, meta, media
                )
            )
    return messages


def _internal_fields(data: bytes, index: LineIndex, lines: Sequence[int]) -> bool:
    return any(has_internal_field(index.raw_line(data, line)) for line in lines)


def _chain_difference(
    chain_uuids: Sequence[str | None], expected: Sequence[str], chain: Sequence[int]
) -> Reason:
    """Where the candidate's chain parts from the plan's: the figures that reproduce the defect."""
    first = next(
        (n for n, (got, want) in enumerate(zip(chain_uuids, expected, strict=False)) if got != want),
        min(len(chain_uuids), len(expected)),
    )
    figures = [
        (Figure.EXPECTED_RECORDS, len(expected)),
        (Figure.CANDIDATE_RECORDS, len(chain_uuids)),
        (Figure.FIRST_DIFFERENCE, first),
    ]
    if first < len(chain):
        figures.append((Figure.LINE, chain[first]))  # the candidate's line there, 1-based
    return Reason(CandidateFailure.CHAIN_DIFFERS_FROM_PLAN, figures=tuple(figures))


def check_candidate(
    candidate: bytes,
    *,
    expected_chain_uuids: Sequence[str],
    new_lines: Sequence[int],
    source_messages: Sequence[ContractMessage],
    anchors: Sequence[str] = (),
    target_estimated_tokens: int | None,
    limits: LineLimits,
    compact_pairs: int = 1,
) -> CandidateCheck:
    """Validate candidate bytes as a fresh transcript and hold them to the survival contract.

    `compact_pairs` is how many compact pairs the file must hold: the one new pair of a summary;
    for a masked candidate (no summary), the ones its kept records hold (none, or Claude Code's own).
    """
    failures: list[Reason] = []
    index = build_index(candidate, SourceFormat.CLAUDE_CODE, limits)
    graph = build_graph(index)
    topology = resolve_topology(index, graph, AUTO)
    if topology.refused:
        failures.append(Reason(CandidateFailure.TOPOLOGY, topology.refusal))
    chain_uuids = [index.record(line).uuid for line in topology.chain]  # type: ignore[union-attr]
    if chain_uuids != list(expected_chain_uuids):
        failures.append(_chain_difference(chain_uuids, expected_chain_uuids, topology.chain))
    validation = validate(index, graph, topology.chain, candidate)
    findings = tuple(f for f in validation.findings if f.severity is Severity.ERROR)
    if findings:
        failures.append(Reason(CandidateFailure.VALIDATION_ERRORS))
    stale = tuple(f for f in validation.findings if f.code is FindingCode.LAST_PROMPT_MISSING_LEAF)
    if stale:  # the output's pointers are ours: each must name a record the file holds
        failures.append(Reason(CandidateFailure.STALE_POINTER))
        findings += stale
    boundaries = sum(1 for r in index.records if r is not None and r.compact_boundary)
    summaries = sum(1 for r in index.records if r is not None and r.compact_summary)
    if boundaries != compact_pairs or summaries != compact_pairs:
        failures.append(Reason(CandidateFailure.COMPACT_PAIR_COUNT))
        findings += (Finding(FindingCode.CURRENT_COMPACT_PAIR, Severity.ERROR, count=boundaries + summaries),)
    if _internal_fields(candidate, index, new_lines):
        failures.append(Reason(CandidateFailure.INTERNAL_FIELD))
        findings += (Finding(FindingCode.INTERNAL_FIELD, Severity.ERROR),)
    output_tokens = sum(record.tokens for record in index.records if record is not None)
    if target_estimated_tokens is not None and output_tokens > target_estimated_tokens:
        figures = ((Figure.NEEDED_TOKENS, output_tokens), (Figure.ALLOWED_TOKENS, target_estimated_tokens))
        failures.append(Reason(CandidateFailure.OVER_TOKEN_TARGET, figures=figures))
    summary_line = next((line for line in topology.chain if index.record(line).compact_summary), None)  # type: ignore[union-attr]
    after = contract_messages(candidate, index, topology.chain, from_line=summary_line)
    violations = check_survival(source_messages, after, anchors=anchors, checkpoints=min(1, compact_pairs))
    failures.extend(Reason(CandidateFailure.CONTRACT, violation) for violation in violations)
    return CandidateCheck(tuple(failures), findings, violations, output_tokens, len(index))
