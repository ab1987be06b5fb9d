"""A pi session as a `ContextSession`: the reader's `PiAnalysis` with what the seam asks of it
(the sent messages measured once, the cut, the evidence, the appended compaction, the report part)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import orjson

from pipeline.agents.pi.pi_evidence import pi_evidence
from pipeline.agents.protocol import PartitionSets
from pipeline.findings import Finding
from pipeline.formats.context_items import BilledTurn, ClassTallies, SentItem, TailPlan
from pipeline.formats.line_guard import LineLimits
from pipeline.formats.pi.agent_messages import compaction_summary_text
from pipeline.formats.pi.archive_form import ARCHIVE_SUMMARY_LINE
from pipeline.formats.pi.billed import billed_usage
from pipeline.formats.pi.call_repair import repair_calls
from pipeline.formats.pi.chat_form import MessageOrigin
from pipeline.formats.pi.message_classes import class_tallies
from pipeline.formats.pi.session_analysis import PiAnalysis, approx_tokens, compress_sets, message_digest
from pipeline.formats.pi.session_decode import PiKind
from pipeline.formats.rewrites import Rewrite, RewriteEdit, RewriteKind, RewriteRefusal
from pipeline.report.resume_context import BilledModelSection, BilledSection, ContextSection
from pipeline.report.sections import line_set
from pipeline.summarize.evidence.items import EvidenceItem
from pipeline.vocabulary import FindingCode, SessionKind

__all__ = ["PiContextSession", "summary_sent"]


def summary_sent(summary: str) -> SentItem:
    """The message pi sends for a compaction summary, measured."""
    body = {"role": "user", "content": [{"type": "text", "text": compaction_summary_text(summary)}]}
    return SentItem(message_digest(body), approx_tokens(len(orjson.dumps(body))))


@dataclass(frozen=True)
class PiContextSession:
    """One pi session read: the context pi rebuilds, message by message, and how a compaction cuts it."""

    analysis: PiAnalysis
    archived: bool = False  # OpenClaw's archive of a reset or deleted session: read, never replaced

    @cached_property
    def _sent(self) -> tuple[SentItem, ...]:
        return tuple(SentItem(sent.digest, sent.tokens) for _, sent in self.analysis.sent())

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
        return SessionKind.MAIN

    @property
    def resumable(self) -> bool:
        """pi resumes it: a header, a leaf, and a parent walk that ends; OpenClaw's archives no
        client resumes."""
        analysis = self.analysis
        return (
            not self.archived
            and analysis.session.header is not None
            and analysis.branch.leaf is not None
            and analysis.branch.loop_at is None
        )

    def sent(self) -> Sequence[SentItem]:
        return self._sent

    def file_tokens(self) -> int:
        session = self.analysis.session
        return sum(approx_tokens(session.lengths[entry.line - 1]) for entry in session.entries)

    def sweep_sets(self) -> PartitionSets:
        return self.analysis.sweep_sets()

    def context_section(self, tokens: int) -> ContextSection:
        """The context pi rebuilds on resume, as counts and digests."""
        analysis = self.analysis
        branch, findings = analysis.branch, analysis.findings
        compaction = branch.compaction
        return ContextSection(
            resumable=self.resumable,
            items=len(analysis.messages),
            lines=line_set(analysis.context_lines()),
            base_line=compaction.line if compaction is not None else None,
            compactions=sum(entry.kind is PiKind.COMPACTION for entry in analysis.session.entries),
            replayed_records=len(branch.context) - (compaction is not None),
            rolled_back_turns=0,
            aborted_calls=sum(m.origin is MessageOrigin.SYNTHETIC for m in analysis.messages),
            dropped_outputs=sum(f.code is FindingCode.TOOL_RESULT_WITHOUT_USE for f in findings),
            estimated_tokens=tokens,
        )

    def class_tallies(self, estimator: str, tokenizers: Mapping[str, Callable[[str], int]]) -> ClassTallies:
        return class_tallies(self.analysis.session, self.analysis.messages, estimator, tokenizers)

    def billed(self) -> BilledSection:
        """The providers' own figures from every billed request the session records, in all and
        by provider and model, with the cost pi records."""
        usage = billed_usage(self.analysis.session)
        return BilledSection(
            events=usage.events,
            input=usage.input + usage.cache_read + usage.cache_write,
            cached_input=usage.cache_read,
            output=usage.output,
            reasoning_output=usage.reasoning,
            last_input=usage.last_input,
            cost=usage.cost,
            by_model={
                model.model: BilledModelSection(
                    events=model.events,
                    input=model.input + model.cache_read + model.cache_write,
                    cached_input=model.cache_read,
                    output=model.output,
                    reasoning_output=model.reasoning,
                    cost=model.cost,
                )
                for model in usage.by_model
            },
        )

    def billed_turns(self, count: Callable[[str], int]) -> tuple[BilledTurn, ...]:
        """No per-request series: this reader does not rebuild the context at each request yet."""
        return ()

    def plan_tail(self, room: int) -> TailPlan | None:
        if self.analysis.session.header is None:  # pi would start a new session, not resume this one
            return None
        return self.analysis.plan_tail([s.tokens for s in self._sent], room)

    def compress_sets(self, plan: TailPlan) -> PartitionSets:
        return compress_sets(self.analysis, plan.first_item)

    def evidence(self, plan: TailPlan) -> tuple[EvidenceItem, ...]:
        return pi_evidence(self.analysis.span(plan.first_item))

    def summary_sent(self, summary: str) -> SentItem:
        return summary_sent(summary)

    def compose(self, plan: TailPlan, summary: str) -> bytes:
        """pi's appended compaction; the archival form when the file holds damaged lines, which the
        appended form would carry and the archival form leaves with the summarized span (a cut is
        placed after them when one can be)."""
        if self.analysis.damaged:
            archived = self.analysis.compose_archive(plan.cut_line, summary)
            if archived is not None:
                return archived
        return self.analysis.compose(plan.cut_line, summary)

    def summary_line(self) -> int:
        """The appended compaction: the line after the original's last (in the archival form, the
        line after the header)."""
        return ARCHIVE_SUMMARY_LINE if self.analysis.damaged else len(self.analysis.session) + 1

    def rewrite(self, kind: RewriteKind, limits: LineLimits) -> Rewrite | RewriteRefusal | None:
        """`repair`: the error result pi gives every unanswered call on each load, written in
        (`formats/pi/call_repair`); no vacuum (pi's file holds what it loads)."""
        if kind is not RewriteKind.REPAIR:
            return None
        repaired = repair_calls(self.analysis, limits)
        if repaired is None:
            return None
        edits = tuple(
            RewriteEdit(call.call_line, FindingCode.TOOL_USE_UNANSWERED, "synthesized-result")
            for call in repaired.answered
        )
        return Rewrite(kind, repaired.data, edits)

    def compose_archive(self, plan: TailPlan, summary: str) -> tuple[bytes, int] | None:
        """pi's compaction with only the kept branch after it: pi resumes it as the appended form."""
        archived = self.analysis.compose_archive(plan.cut_line, summary)
        return None if archived is None else (archived, ARCHIVE_SUMMARY_LINE)
