"""Claude Code's active chain as a `ChainFormat`: its bounded-output rule, its records read back,
its parent link, what a candidate carries past its summary, its compaction form and our stamps."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pipeline.agents.claude_code.chain_candidate import (
    carried_past,
    compose_candidate,
    compose_masked_candidate,
    projected_state,
)
from pipeline.agents.claude_code.chain_evidence import extract_evidence
from pipeline.agents.protocol import CarriedPast, ChainCut, ChainSession
from pipeline.core.compose import ComposedTranscript
from pipeline.core.index import LineIndex
from pipeline.core.plan import Plan
from pipeline.formats.bound_rule import BoundRule
from pipeline.formats.claude_code.bounded_output import (
    CLEARED_MARKER,
    BoundedRecord,
    bound_line,
    declared_bounds,
)
from pipeline.formats.claude_code.build import replace_parent
from pipeline.formats.claude_code.decode import DecodedRecord, decode_record
from pipeline.formats.claude_code.records import message_text
from pipeline.formats.claude_code.resume_state import StateRecord
from pipeline.formats.claude_code.stamp import CompactionStamp, MaskStamp, compaction_stamp, mask_stamp
from pipeline.formats.line_guard import LineLimits
from pipeline.summarize.evidence.items import EvidenceItem
from pipeline.vocabulary import SourceFormat

__all__ = ["CLAUDE_CODE_CHAIN", "ClaudeCodeChain"]


@dataclass(frozen=True, slots=True)
class ClaudeCodeChain:
    """Claude Code's transcripts, as the active-chain compress job writes and reads them back."""

    format: SourceFormat = SourceFormat.CLAUDE_CODE
    cleared_marker: str = CLEARED_MARKER  # the line Claude Code itself writes for a cleared result

    def evidence(self, data: bytes, index: LineIndex, lines: Iterable[int]) -> tuple[EvidenceItem, ...]:
        return extract_evidence(data, index, lines)

    def bound(
        self, data: bytes, rule: BoundRule, span: tuple[int, int]
    ) -> tuple[bytes, tuple[BoundedRecord, ...]] | None:
        return bound_line(data, rule, span=span)

    def record_tokens(self, line: bytes, limits: LineLimits) -> int | None:
        record = decode_record(line, limits=limits)
        return record.tokens if isinstance(record, DecodedRecord) else None

    def instruction(self, line: bytes) -> str:
        return message_text(line)[1]

    def reparented(self, line: bytes, parent: str) -> bytes:
        return replace_parent(line, parent)

    def projected(self, session: ChainSession, plan: Plan) -> tuple[StateRecord, ...]:
        return projected_state(session, plan)

    def carried(self, session: ChainSession, plan: Plan) -> CarriedPast:
        return carried_past(session, plan)

    def compose(self, session: ChainSession, cut: ChainCut, summary_text: str) -> ComposedTranscript:
        return compose_candidate(session, cut, summary_text)

    def compose_masked(self, session: ChainSession, cut: ChainCut) -> ComposedTranscript:
        return compose_masked_candidate(session, cut)

    def compaction_stamp(self, line: bytes) -> CompactionStamp | None:
        return compaction_stamp(line)

    def mask_stamp(self, data: bytes) -> MaskStamp | None:
        return mask_stamp(data)

    def cleared_tools(self, data: bytes) -> frozenset[str]:
        return frozenset(tool for tool, rule in declared_bounds(data).items() if rule.clear)


CLAUDE_CODE_CHAIN = ClaudeCodeChain()
