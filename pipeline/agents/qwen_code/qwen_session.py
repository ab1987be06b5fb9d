"""A Qwen Code session as a `ContextSession`: the reader's `QwenAnalysis` with what the seam asks
of it (the sent messages measured, the cut, the evidence, the compression record, the report part)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from pipeline.agents.protocol import PartitionSets
from pipeline.agents.qwen_code.qwen_evidence import session_evidence
from pipeline.findings import Finding
from pipeline.formats.context_items import BilledTurn, ClassTallies, SentItem, TailPlan
from pipeline.formats.line_guard import LineLimits
from pipeline.formats.qwen_code.answer_repair import repair_answers
from pipeline.formats.qwen_code.content_tallies import content_tallies
from pipeline.formats.qwen_code.session_analysis import QwenAnalysis, summary_sent
from pipeline.formats.qwen_code.session_records import PartKind
from pipeline.formats.rewrites import Rewrite, RewriteKind, RewriteRefusal
from pipeline.report.resume_context import BilledSection, ContextSection
from pipeline.report.sections import line_set
from pipeline.summarize.evidence.items import EvidenceItem
from pipeline.vocabulary import SessionKind

__all__ = ["QwenSession"]


@dataclass(frozen=True)
class QwenSession:
    """One session read: the history Qwen Code sends, message by message, and how a cut composes."""

    analysis: QwenAnalysis

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.analysis.findings

    @property
    def versions(self) -> tuple[str, ...]:
        return self.analysis.versions

    @property
    def line_count(self) -> int:
        return len(self.analysis.session)

    @property
    def kind(self) -> SessionKind:
        return SessionKind.SUBAGENT if self.analysis.subagent else SessionKind.MAIN

    @property
    def resumable(self) -> bool:
        return self.analysis.resumable

    def sent(self) -> Sequence[SentItem]:
        return self.analysis.items

    def file_tokens(self) -> int:
        return self.analysis.file_tokens()

    def sweep_sets(self) -> PartitionSets:
        return self.analysis.sweep_sets()

    def context_section(self, tokens: int) -> ContextSection:
        """The history Qwen Code rebuilds on resume, as counts and line digests."""
        analysis = self.analysis
        base = analysis.rebuilt.base_line
        calls = [p for e in analysis.sent_history for p in e.content.parts if p.call_id]
        answered = {p.call_id for p in calls if p.kind is PartKind.FUNCTION_RESPONSE}
        called = {p.call_id for p in calls if p.kind is PartKind.FUNCTION_CALL}
        return ContextSection(
            resumable=analysis.resumable,
            items=len(analysis.messages),
            lines=line_set(analysis.context_lines()),
            base_line=base,
            compactions=sum(1 for r in analysis.session.records if r.subtype == "chat_compression"),
            replayed_records=sum(1 for e in analysis.rebuilt.entries if not e.from_compression),
            rolled_back_turns=0,  # a rewind is a branch Qwen Code leaves: excluded_branch counts it
            aborted_calls=len(called - answered),  # calls Qwen Code drops before sending
            dropped_outputs=len(answered - called),
            estimated_tokens=tokens,
        )

    def class_tallies(self, estimator: str, tokenizers: Mapping[str, Callable[[str], int]]) -> ClassTallies:
        analysis = self.analysis
        return content_tallies(analysis.session.records, analysis.messages, estimator, tokenizers)

    def billed(self) -> BilledSection:
        """Qwen Code's own figures, summed: its `api_response` telemetry (every call, its compression
        and memory calls too), else the assistant records' `usageMetadata`; the last call's input."""
        records = self.analysis.session.records
        usages = [r.api_usage for r in records if r.api_usage is not None]
        usages = usages or [r.usage for r in records if r.usage is not None]
        return BilledSection(
            events=len(usages),
            input=sum(u.prompt for u in usages),
            cached_input=sum(u.cached for u in usages),
            output=sum(u.output for u in usages),
            reasoning_output=sum(u.thoughts for u in usages),
            last_input=usages[-1].prompt if usages else None,
        )

    def billed_turns(self, count: Callable[[str], int]) -> tuple[BilledTurn, ...]:
        """No per-request series: this reader does not rebuild the context at each request yet."""
        return ()

    def plan_tail(self, room: int) -> TailPlan | None:
        return self.analysis.plan_tail(room)

    def compress_sets(self, plan: TailPlan) -> PartitionSets:
        return self.analysis.compress_sets(plan.cut_line)

    def evidence(self, plan: TailPlan) -> tuple[EvidenceItem, ...]:
        return session_evidence(self.analysis, plan.cut_line)

    def summary_sent(self, summary: str) -> SentItem:
        return summary_sent(summary)

    def compose(self, plan: TailPlan, summary: str) -> bytes:
        return self.analysis.compose(plan.cut_line, summary)

    def summary_line(self) -> int:
        return 1  # the compression record opens the candidate

    def compose_archive(self, plan: TailPlan, summary: str) -> tuple[bytes, int] | None:
        return None  # its compaction form already leaves the summarized history behind

    def rewrite(self, kind: RewriteKind, limits: LineLimits) -> Rewrite | RewriteRefusal | None:
        """`repair`: Qwen Code's own repair of its calls' answers on every load (a failure for a call
        never answered, a late answer moved up, a second one dropped), written in; no vacuum (Qwen
        Code's file holds what it loads)."""
        if kind is not RewriteKind.REPAIR:
            return None
        return repair_answers(self.analysis)
