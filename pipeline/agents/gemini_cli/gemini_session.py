"""A Gemini CLI session as a `ContextSession`: the reader's `ChatAnalysis` with what the seam asks
of it (the sent items, the cut, the evidence, the candidate in Gemini CLI's compression form)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from pipeline.agents.gemini_cli.chat_evidence import chat_evidence
from pipeline.agents.protocol import PartitionSets
from pipeline.findings import Finding
from pipeline.formats.context_items import BilledTurn, ClassTallies, SentItem, TailPlan
from pipeline.formats.gemini_cli.billed_tokens import billed_usage
from pipeline.formats.gemini_cli.chat_analysis import SUBAGENT_KIND, ChatAnalysis, head_length
from pipeline.formats.gemini_cli.compression_records import (
    SUMMARY_LINE,
    compose_compression,
    compress_sets,
    plan_tail,
    summary_sent,
)
from pipeline.formats.gemini_cli.part_classes import class_tallies, file_tokens
from pipeline.formats.gemini_cli.repair import RepairOutcome, repair
from pipeline.formats.gemini_cli.vacuum import VacuumOutcome, vacuum
from pipeline.formats.line_guard import LineLimits
from pipeline.formats.rewrites import Rewrite, RewriteEdit, RewriteKind, RewriteRefusal
from pipeline.report.resume_context import BilledSection, ContextSection
from pipeline.report.sections import line_set
from pipeline.summarize.evidence.items import EvidenceItem
from pipeline.vocabulary import FindingCode, SessionKind

__all__ = ["CLOSED_CHANGES", "VACUUMED_RECORDS", "GeminiSession"]

VACUUMED_RECORDS = "superseded-records-dropped"  # re-appended messages, snapshots, rewound records
CLOSED_CHANGES = {  # what repair did about each defect of a call it closed
    FindingCode.TOOL_USE_UNANSWERED: "cancelled-response-added",
    FindingCode.TURN_UNFINISHED: "call-status-cancelled",
}


@dataclass(frozen=True)
class GeminiSession:
    """One Gemini CLI session read: the history Gemini CLI sends, and how a compaction cuts it."""

    analysis: ChatAnalysis
    nested: bool = False  # found under `chats/<parent>/`, where Gemini CLI keeps subagents' sessions

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.analysis.findings

    @property
    def versions(self) -> tuple[str, ...]:
        """Gemini CLI records no version of its own; the models its messages name stand in."""
        conversation = self.analysis.conversation
        loaded = conversation.messages if conversation is not None else ()
        return tuple(str(m.value["model"]) for m in loaded if isinstance(m.value.get("model"), str))

    @property
    def line_count(self) -> int:
        return len(self.analysis.chat)

    @property
    def kind(self) -> SessionKind:
        conversation = self.analysis.conversation
        subagent = conversation is not None and conversation.metadata.get("kind") == SUBAGENT_KIND
        return SessionKind.SUBAGENT if subagent or self.nested else SessionKind.MAIN

    @property
    def resumable(self) -> bool:
        """Gemini CLI lists it to resume (never a subagent's session)."""
        return self.analysis.resumable and not self.nested

    def sent(self) -> Sequence[SentItem]:
        return self.analysis.sent()

    def file_tokens(self) -> int:
        return file_tokens(self.analysis)

    def sweep_sets(self) -> PartitionSets:
        return self.analysis.sweep_sets()

    def context_section(self, tokens: int) -> ContextSection:
        """The history Gemini CLI rebuilds on resume, as counts and digests."""
        analysis = self.analysis
        conversation = analysis.conversation
        return ContextSection(
            resumable=analysis.resumable,
            items=len(analysis.sent()),
            lines=line_set(analysis.sent_lines()),
            base_line=analysis.turns[0].line if head_length(analysis.turns) else None,
            compactions=1 if head_length(analysis.turns) else 0,
            replayed_records=len(conversation.messages) if conversation is not None else 0,
            rolled_back_turns=len(conversation.rewinds) if conversation is not None else 0,
            aborted_calls=0,
            dropped_outputs=0,
            estimated_tokens=tokens,
        )

    def class_tallies(self, estimator: str, tokenizers: Mapping[str, Callable[[str], int]]) -> ClassTallies:
        return class_tallies(self.analysis, estimator, tokenizers)

    def billed(self) -> BilledSection:
        """The `tokens` each reply recorded (once per reply, rewound and superseded ones too)."""
        usage = billed_usage(self.analysis)
        return BilledSection(
            events=usage.replies,
            input=usage.input,
            cached_input=usage.cached_input,
            output=usage.output,
            reasoning_output=usage.thoughts,
            last_input=usage.last_input,
        )

    def billed_turns(self, count: Callable[[str], int]) -> tuple[BilledTurn, ...]:
        """No per-request series: this reader does not rebuild the context at each request yet."""
        return ()

    def plan_tail(self, room: int) -> TailPlan | None:
        return plan_tail(self.analysis, room)

    def compress_sets(self, plan: TailPlan) -> PartitionSets:
        return compress_sets(self.analysis, plan)

    def evidence(self, plan: TailPlan) -> tuple[EvidenceItem, ...]:
        return chat_evidence(self.analysis, plan.first_item)

    def summary_sent(self, summary: str) -> SentItem:
        return summary_sent(summary)

    def compose(self, plan: TailPlan, summary: str) -> bytes:
        return compose_compression(self.analysis, plan, summary)

    def summary_line(self) -> int:
        return SUMMARY_LINE

    def compose_archive(self, plan: TailPlan, summary: str) -> tuple[bytes, int] | None:
        return None  # its compaction form already leaves the summarized history behind

    def rewrite(self, kind: RewriteKind, limits: LineLimits) -> Rewrite | RewriteRefusal | None:
        """`vacuum`: the file as small as what Gemini CLI loads from it (`formats/gemini_cli/vacuum`);
        `repair`: each open call closed as Gemini CLI closes a cancelled one, its response declared
        as a change to what Gemini CLI sends (`formats/gemini_cli/repair`)."""
        if kind is RewriteKind.REPAIR:
            return self._repaired(limits)
        data = self.analysis.data
        result = vacuum(data, limits)
        if result.outcome is VacuumOutcome.REFUSED:
            return RewriteRefusal(kind, f"vacuum-{result.refusal or 'refused'}")
        if result.outcome is VacuumOutcome.UNCHANGED:
            return None
        dropped = data.count(b"\n") - result.data.count(b"\n")
        return Rewrite(kind, result.data, (RewriteEdit(1, None, VACUUMED_RECORDS, max(dropped, 0)),))

    def _repaired(self, limits: LineLimits) -> Rewrite | RewriteRefusal | None:
        result = repair(self.analysis.data, limits)
        if result.outcome is RepairOutcome.REFUSED:
            return RewriteRefusal(RewriteKind.REPAIR, f"repair-{result.refusal or 'refused'}")
        if result.outcome is RepairOutcome.UNCHANGED:
            return None
        closed = result.closed
        edits = tuple(RewriteEdit(c.line, code, CLOSED_CHANGES[code]) for c in closed for code in c.codes)
        return Rewrite(RewriteKind.REPAIR, result.data, edits, result.sent)
