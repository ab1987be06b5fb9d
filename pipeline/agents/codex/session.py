"""A Codex rollout as a `ContextSession`: the reader's `RolloutAnalysis` with what the seam asks
of it (the sent items measured once, the cut, the evidence, the checkpoint, the report part)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from pipeline.agents.codex.evidence import rollout_evidence
from pipeline.agents.protocol import PartitionSets
from pipeline.findings import Finding
from pipeline.formats.codex.analysis import RolloutAnalysis, compress_sets, summary_sent
from pipeline.formats.codex.billed_requests import billed_turns
from pipeline.formats.codex.checkpoint_records import compose_checkpoint
from pipeline.formats.codex.item_classes import class_tallies
from pipeline.formats.codex.reconstruct import ContextItem, ItemOrigin
from pipeline.formats.codex.rollout_decode import RolloutKind
from pipeline.formats.codex.tail import plan_tail
from pipeline.formats.context_items import BilledTurn, ClassTallies, SentItem, TailPlan
from pipeline.formats.line_guard import LineLimits
from pipeline.formats.rewrites import Rewrite, RewriteKind, RewriteRefusal
from pipeline.report.resume_context import BilledSection, ContextSection
from pipeline.report.sections import line_set
from pipeline.summarize.evidence.items import EvidenceItem
from pipeline.vocabulary import SessionKind

__all__ = ["CodexSession"]


@dataclass(frozen=True)
class CodexSession:
    """One rollout read: the context Codex rebuilds, item by item, and how a checkpoint cuts it."""

    analysis: RolloutAnalysis

    @cached_property
    def _measured(self) -> tuple[tuple[ContextItem, ...], tuple[SentItem, ...]]:
        pairs = list(self.analysis.sent())
        return tuple(reference for reference, _ in pairs), tuple(item for _, item in pairs)

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.analysis.findings

    @property
    def versions(self) -> tuple[str, ...]:
        return self.analysis.versions

    @property
    def line_count(self) -> int:
        return len(self.analysis.rollout)

    @property
    def kind(self) -> SessionKind:
        return SessionKind.MAIN

    @property
    def resumable(self) -> bool:
        """Codex resumes it: a layout current Codex reads, with its `session_meta`."""
        meta = next(self.analysis.rollout.lines_where(RolloutKind.SESSION_META), None)
        return self.analysis.rebuilt.resumable and meta is not None

    def sent(self) -> Sequence[SentItem]:
        return self._measured[1]

    def file_tokens(self) -> int:
        return self.analysis.file_tokens()

    def sweep_sets(self) -> PartitionSets:
        return self.analysis.sweep_sets()

    def context_section(self, tokens: int) -> ContextSection:
        """The context Codex rebuilds on resume, as counts and digests."""
        analysis = self.analysis
        rebuilt, rollout = analysis.rebuilt, analysis.rollout
        return ContextSection(
            resumable=rebuilt.resumable,
            items=sum(item.origin is not ItemOrigin.INITIAL_CONTEXT for item in rebuilt.items),
            lines=line_set(analysis.context_lines()),
            base_line=rebuilt.base_line,
            compactions=sum(1 for _ in rollout.lines_where(RolloutKind.COMPACTED)),
            replayed_records=len(rebuilt.replayed),
            rolled_back_turns=rebuilt.rolled_back,
            aborted_calls=sum(item.origin is ItemOrigin.ABORTED_OUTPUT for item in rebuilt.items),
            dropped_outputs=len(rebuilt.orphans),
            estimated_tokens=tokens,
        )

    def class_tallies(self, estimator: str, tokenizers: Mapping[str, Callable[[str], int]]) -> ClassTallies:
        analysis = self.analysis
        return class_tallies(analysis.rollout, analysis.data, analysis.rebuilt, estimator, tokenizers)

    def billed(self) -> BilledSection:
        """Codex's own figures: its running totals at the last token_count, and the last request's input."""
        events = [
            e
            for e in self.analysis.rollout.entries
            if e is not None and e.kind is RolloutKind.EVENT_MSG and (e.usage or e.total_usage)
        ]
        total = next((e.total_usage for e in reversed(events) if e.total_usage), None) or (0, 0, 0, 0)
        last = next((e.usage for e in reversed(events) if e.usage), None)
        return BilledSection(
            events=len(events),
            input=total[0],
            cached_input=total[1],
            output=total[2],
            reasoning_output=total[3],
            last_input=last[0] if last else None,
        )

    def billed_turns(self, count: Callable[[str], int]) -> tuple[BilledTurn, ...]:
        """Each billed request beside the history Codex sent before it (`billed_requests`)."""
        return billed_turns(self.analysis, count)

    def plan_tail(self, room: int) -> TailPlan | None:
        references, items = self._measured
        tokens = [item.tokens for item in items]
        return plan_tail(self.analysis.rollout, self.analysis.rebuilt, references, tokens, room)

    def compress_sets(self, plan: TailPlan) -> PartitionSets:
        return compress_sets(self.analysis, plan.cut_line)

    def evidence(self, plan: TailPlan) -> tuple[EvidenceItem, ...]:
        return rollout_evidence(self.analysis, plan.first_item)

    def summary_sent(self, summary: str) -> SentItem:
        return summary_sent(summary)

    def compose(self, plan: TailPlan, summary: str) -> bytes:
        analysis = self.analysis
        return compose_checkpoint(analysis.rollout, analysis.data, plan.cut_line, summary)

    def summary_line(self) -> int:
        return 2  # compose_checkpoint writes the `compacted` record right after session_meta

    def compose_archive(self, plan: TailPlan, summary: str) -> tuple[bytes, int] | None:
        return None  # its compaction form already leaves the summarized history behind

    def rewrite(self, kind: RewriteKind, limits: LineLimits) -> Rewrite | RewriteRefusal | None:
        """Codex repairs nothing on load that a rewrite could write in, and its rollouts hold
        nothing it does not load: no rewrite of either kind."""
        return None
