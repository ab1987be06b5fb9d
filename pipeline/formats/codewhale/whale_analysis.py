"""One CodeWhale session read and judged: the document, the history CodeWhale resumes it with,
its findings, the six sets of a sweep and of a compaction, and the candidate's parts.

The partition, over the document's records (journal entries, or messages without a journal):
`raw_keep` holds the records whose messages CodeWhale sends; `excluded_branch` the journal's
entries off the active branch (rewinds, edits, earlier compactions' superseded history);
`excluded_unattributed` the rest (records serde refuses, results the resume repair drops).
`control_projection` is empty: the metadata CodeWhale reads is no record. A compaction moves
the sent records before its cut to `summary`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from pipeline.findings import Finding
from pipeline.formats.codewhale.whale_compose import compose_candidate, plan_cut
from pipeline.formats.codewhale.whale_document import (
    BlockKind,
    Decoded,
    Message,
    SavedSession,
    decode_document,
)
from pipeline.formats.codewhale.whale_history import Rebuilt, rebuild_context
from pipeline.formats.codewhale.whale_integrity import session_findings
from pipeline.formats.codewhale.whale_markers import checkpoint_message
from pipeline.formats.codewhale.whale_survival import pinned_anchors
from pipeline.formats.context_items import SentItem, TailPlan
from pipeline.formats.line_guard import LineLimits
from pipeline.vocabulary import PartitionSet, Severity

__all__ = ["IMAGE_TOKENS", "CodewhaleAnalysis", "analyze_session", "estimate_tokens"]

IMAGE_TOKENS = 1000  # CodeWhale's IMAGE_TOKEN_ESTIMATE: a flat estimate per image


def estimate_tokens(message: Message) -> int:
    """CodeWhale's own estimate of a message (`estimate_tokens_for_message`, thinking included):
    each block's UTF-8 bytes / 4, rounded down, and a flat estimate per image."""
    total = 0
    for block in message.blocks:
        if block.kind is BlockKind.IMAGE_URL:
            total += IMAGE_TOKENS
        else:
            total += len(block.text.encode()) // 4
    return total


def measured(message: Message) -> SentItem:
    """A sent message without its text: its digest and CodeWhale's estimate of it."""
    return SentItem(message.digest, estimate_tokens(message))


@dataclass(frozen=True)
class CodewhaleAnalysis:
    """A session document, the history CodeWhale rebuilds from it, and what validation found."""

    data: bytes
    decoded: Decoded
    rebuilt: Rebuilt | None
    findings: tuple[Finding, ...]

    @property
    def session(self) -> SavedSession | None:
        """The decoded document (None when it is unreadable)."""
        return self.decoded.session

    @property
    def line_count(self) -> int:
        """The document's records (at least 1: an unreadable document is one record)."""
        session = self.session
        if session is None:
            return 1
        if session.entries is not None:
            return max(1, len(session.fields["journal"].get("entries", [])))
        return max(1, len(session.fields["messages"]))

    @property
    def resumable(self) -> bool:
        """CodeWhale loads it: no fault serde or its journal check refuses, and something to send."""
        errors = any(f.severity is Severity.ERROR for f in self.findings)
        return self.rebuilt is not None and bool(self.rebuilt.messages) and not errors

    @cached_property
    def sent(self) -> tuple[SentItem, ...]:
        """Each message CodeWhale sends on resume, measured, in order."""
        if self.rebuilt is None:
            return ()
        return tuple(measured(item.message) for item in self.rebuilt.messages)

    def context_records(self) -> frozenset[int]:
        """The records whose messages CodeWhale sends."""
        if self.rebuilt is None:
            return frozenset()
        return frozenset(item.record for item in self.rebuilt.messages if item.record is not None)

    def file_tokens(self) -> int:
        """CodeWhale's estimate of every record's message the document holds."""
        session = self.session
        if session is None:
            return math.ceil(len(self.data) / 4)
        messages: Sequence[Message] = (
            session.messages if session.entries is None else [e.message for e in session.entries]
        )
        return sum(estimate_tokens(m) for m in messages)

    def _off_branch(self) -> frozenset[int]:
        session, rebuilt = self.session, self.rebuilt
        if session is None or session.entries is None or rebuilt is None or rebuilt.faults:
            return frozenset()
        active = {entry.record for entry in rebuilt.active}
        return frozenset(entry.record for entry in session.entries if entry.record not in active)

    def _sets(self, summary: frozenset[int], kept: frozenset[int]) -> dict[PartitionSet, frozenset[int]]:
        branch = self._off_branch()
        everything = frozenset(range(1, self.line_count + 1))
        return {
            PartitionSet.SUMMARY: summary,
            PartitionSet.RAW_KEEP: kept,
            PartitionSet.SIDE_KEEP: frozenset(),
            PartitionSet.CONTROL_PROJECTION: frozenset(),
            PartitionSet.EXCLUDED_BRANCH: branch,
            PartitionSet.EXCLUDED_UNATTRIBUTED: everything - summary - kept - branch,
        }

    def sweep_sets(self) -> dict[PartitionSet, frozenset[int]]:
        """The six sets of a sweep: nothing summarized, the sent records kept."""
        return self._sets(frozenset(), self.context_records())

    def compress_sets(self, plan: TailPlan) -> dict[PartitionSet, frozenset[int]]:
        """The six sets of a compaction whose kept tail starts at `plan.first_item`."""
        items = self.rebuilt.messages if self.rebuilt is not None else ()
        before = frozenset(i.record for i in items[: plan.first_item] if i.record is not None)
        after = frozenset(i.record for i in items[plan.first_item :] if i.record is not None)
        return self._sets(before, after)

    def anchors(self) -> str | None:
        """The `/anchor` pins the session's latest checkpoint restated."""
        if self.rebuilt is None:
            return None
        return pinned_anchors([item.message for item in self.rebuilt.messages])

    def plan_tail(self, room: int) -> TailPlan | None:
        """The largest safe tail within `room` tokens (see `whale_compose.py`); None when no cut is safe."""
        if self.rebuilt is None or not self.resumable:
            return None
        return plan_cut(self.rebuilt, [item.tokens for item in self.sent], room)

    def summary_message(self, summary: str) -> Message:
        """The checkpoint message a candidate carrying `summary` resumes with."""
        return checkpoint_message(summary, self.anchors())

    def compose(self, plan: TailPlan, summary: str) -> bytes:
        """The candidate document (see `whale_compose.py`)."""
        assert self.session is not None  # a plan needs the document
        assert self.rebuilt is not None
        return compose_candidate(
            self.data, self.session, self.rebuilt, plan.first_item, summary, self.anchors()
        )


def analyze_session(data: bytes, limits: LineLimits) -> CodewhaleAnalysis:
    """Decode, rebuild and judge one session document (never raises for bad input)."""
    decoded = decode_document(data, limits)
    rebuilt = rebuild_context(decoded.session) if decoded.session is not None else None
    return CodewhaleAnalysis(data, decoded, rebuilt, session_findings(decoded, rebuilt))
