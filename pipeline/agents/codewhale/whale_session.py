"""A CodeWhale session as a `ContextSession`: the reader's `CodewhaleAnalysis` with what the seam
asks of it (the tallies by content class, the billed truth, the evidence, the report part)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from pipeline.agents.codewhale.whale_evidence import session_evidence
from pipeline.agents.protocol import PartitionSets
from pipeline.findings import Finding
from pipeline.formats.codewhale.whale_analysis import IMAGE_TOKENS, CodewhaleAnalysis
from pipeline.formats.codewhale.whale_document import CALLS, RESULTS, Block, BlockKind, Message
from pipeline.formats.codewhale.whale_markers import is_checkpoint
from pipeline.formats.context_items import BilledTurn, ClassTallies, Key, SentItem, TailPlan, Tally
from pipeline.formats.line_guard import LineLimits
from pipeline.formats.rewrites import Rewrite, RewriteKind, RewriteRefusal
from pipeline.report.resume_context import BilledSection, ContextSection
from pipeline.report.sections import line_set
from pipeline.summarize.evidence.items import EvidenceItem
from pipeline.vocabulary import SessionKind

__all__ = ["CodewhaleSession", "block_class"]

BlockCounter = Callable[[Block], int]


_BLOCK_CLASSES: Final = {BlockKind.THINKING: "reasoning", BlockKind.IMAGE_URL: "image"}
_ROLE_CLASSES: Final = {"system": "context", "user": "human"}


def block_class(message: Message, block: Block, tools: Mapping[str, str]) -> Key:
    """(class, tool name or None) of one block: Claude Code's classes, `summary` for a checkpoint."""
    if block.kind in CALLS:
        return "tool_use", block.name or "unknown"
    if block.kind in RESULTS:
        return "tool_result", tools.get(block.call_id or "", "unknown")
    if block.kind in _BLOCK_CLASSES:
        return _BLOCK_CLASSES[block.kind], None
    if message.role == "user" and is_checkpoint(message):
        return "summary", None
    return _ROLE_CLASSES.get(message.role, "assistant"), None


def _own_estimate(block: Block) -> int:
    """CodeWhale's estimate of one block (`estimate_tokens_for_message`'s per-block term)."""
    return IMAGE_TOKENS if block.kind is BlockKind.IMAGE_URL else len(block.text.encode()) // 4


def _tally(
    messages: Iterable[Message], tools: Mapping[str, str], counters: Mapping[str, BlockCounter]
) -> dict[Key, Tally]:
    table: dict[Key, Tally] = defaultdict(Tally)
    for message in messages:
        for block in message.blocks:
            kind, name = block_class(message, block, tools)
            counts = {estimator: count(block) for estimator, count in counters.items()}
            for key in ((kind, None), (kind, name)) if name else ((kind, None),):
                table[key].items += 1
                for estimator, value in counts.items():
                    table[key].tokens[estimator] += value
    return table


@dataclass(frozen=True)
class CodewhaleSession:
    """One session document read: the history CodeWhale resumes, and how a checkpoint cuts it."""

    analysis: CodewhaleAnalysis

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.analysis.findings

    @property
    def versions(self) -> tuple[str, ...]:
        return ()  # a CodeWhale document names no client version (only `schema_version`)

    @property
    def line_count(self) -> int:
        return self.analysis.line_count

    @property
    def kind(self) -> SessionKind:
        """A sub-agent's session records its spawn depth (or parent) in its metadata."""
        session = self.analysis.session
        if session is not None and (session.metadata.spawn_depth > 0 or session.metadata.parent_session_id):
            return SessionKind.SUBAGENT
        return SessionKind.MAIN

    @property
    def resumable(self) -> bool:
        return self.analysis.resumable

    def sent(self) -> Sequence[SentItem]:
        return self.analysis.sent

    def file_tokens(self) -> int:
        return self.analysis.file_tokens()

    def sweep_sets(self) -> PartitionSets:
        return self.analysis.sweep_sets()

    def _file_messages(self) -> tuple[Message, ...]:
        session = self.analysis.session
        if session is None:
            return ()
        return session.messages if session.entries is None else tuple(e.message for e in session.entries)

    def _sent_messages(self) -> tuple[Message, ...]:
        rebuilt = self.analysis.rebuilt
        return () if rebuilt is None else tuple(item.message for item in rebuilt.messages)

    def context_section(self, tokens: int) -> ContextSection:
        """The history CodeWhale rebuilds on resume, as counts and digests."""
        rebuilt = self.analysis.rebuilt
        sent = self._sent_messages()
        base = None
        if rebuilt is not None:
            checkpoints = [i.record for i in rebuilt.messages if i.record and is_checkpoint(i.message)]
            base = checkpoints[-1] if checkpoints else None
        return ContextSection(
            resumable=self.resumable,
            items=len(sent),
            lines=line_set(self.analysis.context_records()),
            base_line=base,
            compactions=sum(is_checkpoint(m) for m in self._file_messages()),
            aborted_calls=len(rebuilt.repair.unanswered) if rebuilt is not None else 0,
            dropped_outputs=len(rebuilt.repair.orphan_results) if rebuilt is not None else 0,
            estimated_tokens=tokens,
        )

    def class_tallies(self, estimator: str, tokenizers: Mapping[str, Callable[[str], int]]) -> ClassTallies:
        counters: dict[str, BlockCounter] = {estimator: _own_estimate}
        for name, count in tokenizers.items():
            counters[name] = lambda block, count=count: count(block.text)  # type: ignore[misc]
        everything = self._file_messages()
        tools = {
            b.call_id: b.name or "unknown"
            for m in everything
            for b in m.blocks
            if b.kind in CALLS and b.call_id
        }
        return ClassTallies(
            _tally(everything, tools, counters), _tally(self._sent_messages(), tools, counters)
        )

    def billed(self) -> BilledSection:
        """CodeWhale records one figure: `metadata.total_tokens`, its running total over the session."""
        session = self.analysis.session
        total = session.metadata.total_tokens if session is not None else 0
        return BilledSection(
            events=1 if total else 0,
            input=total,
            cached_input=0,
            output=0,
            reasoning_output=0,
            last_input=None,
        )

    def billed_turns(self, count: Callable[[str], int]) -> tuple[BilledTurn, ...]:
        """No per-request series: this reader does not rebuild the context at each request yet."""
        return ()

    def plan_tail(self, room: int) -> TailPlan | None:
        return self.analysis.plan_tail(room)

    def compress_sets(self, plan: TailPlan) -> PartitionSets:
        return self.analysis.compress_sets(plan)

    def evidence(self, plan: TailPlan) -> tuple[EvidenceItem, ...]:
        rebuilt = self.analysis.rebuilt
        return () if rebuilt is None else session_evidence(rebuilt, plan.first_item)

    def summary_sent(self, summary: str) -> SentItem:
        message = self.analysis.summary_message(summary)
        return SentItem(message.digest, sum(_own_estimate(b) for b in message.blocks))

    def compose(self, plan: TailPlan, summary: str) -> bytes:
        return self.analysis.compose(plan, summary)

    def summary_line(self) -> int:
        return 1  # the candidate's checkpoint is its journal's first entry (or its first message)

    def rewrite(self, kind: RewriteKind, limits: LineLimits) -> Rewrite | RewriteRefusal | None:
        return None  # no repair or vacuum is written for CodeWhale yet

    def compose_archive(self, plan: TailPlan, summary: str) -> tuple[bytes, int] | None:
        return None  # its compaction form already leaves the summarized history behind
