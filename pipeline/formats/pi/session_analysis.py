"""One pi session read and judged: its lines, the context pi rebuilds, its findings, and the
lines of each of the six partition sets for a sweep.

The sweep's partition, for a pi session: `raw_keep` holds the lines whose messages pi sends (the
latest compaction, for its summary, and the entries of its context); `control_projection` the
records pi reads but does not send (the header, and on the active branch the model and thinking
level changes, system prompt messages, labels, names, extension state, context edits, and messages
pi skips such as errored turns); `excluded_branch` the entries pi will not read (other branches,
and messages before the latest compaction's kept range, already summarized); and
`excluded_unattributed` the lines pi cannot load (damaged, blank). `summary` is empty: a sweep cuts
nothing.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import orjson

from pipeline.findings import Finding
from pipeline.formats.context_items import TailPlan
from pipeline.formats.line_guard import LineLimits
from pipeline.formats.pi.agent_messages import agent_messages
from pipeline.formats.pi.archive_form import compose_archive
from pipeline.formats.pi.branch import PiBranch, active_branch
from pipeline.formats.pi.chat_form import ChatMessage, MessageOrigin, chat_messages
from pipeline.formats.pi.compaction_entry import compose_compaction
from pipeline.formats.pi.cut import plan_tail
from pipeline.formats.pi.session_decode import PiEntry, PiKind, PiSession, decode_session
from pipeline.formats.pi.session_findings import session_findings
from pipeline.formats.pi.span_pieces import SpanPiece, span_pieces
from pipeline.vocabulary import PartitionSet, Severity

__all__ = ["PiAnalysis", "SentMessage", "analyze_session", "approx_tokens", "compress_sets", "message_digest"]

# Settings pi reads from the whole branch, compacted part included (`getSessionContextSettings`).
_SETTINGS = frozenset({PiKind.MODEL_CHANGE, PiKind.THINKING_LEVEL_CHANGE})


def approx_tokens(size: int) -> int:
    """pi's own estimate of a text's tokens (characters / 4, rounded up), over the JSON sent."""
    return math.ceil(size / 4)


def message_digest(body: object) -> str:
    """SHA-256 of a sent message's canonical JSON (sorted keys): how goldens and checks name it."""
    return hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()


@dataclass(frozen=True, slots=True)
class SentMessage:
    """A message pi sends on resume, without its text: what a compaction's check compares and counts."""

    digest: str
    tokens: int


@dataclass(frozen=True, slots=True)
class PiAnalysis:
    """A session, the context pi rebuilds from it, and what validation found."""

    data: bytes
    session: PiSession
    branch: PiBranch
    messages: tuple[ChatMessage, ...]
    findings: tuple[Finding, ...]

    @property
    def versions(self) -> tuple[str, ...]:
        """The session format version pi reads the file as (pi records no client version)."""
        return (str(self.session.version),) if self.session.header is not None else ()

    def sent(self) -> Iterator[tuple[ChatMessage, SentMessage]]:
        """Each message of the rebuilt context as pi sends it, measured, in order."""
        for message in self.messages:
            yield (
                message,
                SentMessage(message_digest(message.body), approx_tokens(len(orjson.dumps(message.body)))),
            )

    def context_digests(self) -> list[str]:
        """The digest of each sent message, in order (what the goldens compare)."""
        return [message_digest(message.body) for message in self.messages]

    def context_tokens(self) -> int:
        """pi's estimate of the rebuilt context."""
        return sum(sent.tokens for _, sent in self.sent())

    def entries_by_line(self) -> dict[int, PiEntry]:
        """Each entry pi loads, by its line."""
        return {entry.line: entry for entry in self.session.entries}

    def plan_tail(self, tokens: Sequence[int], room: int) -> TailPlan | None:
        """The cut within `room` tokens (None when pi's leaf cannot carry a compaction, or no cut is safe)."""
        leaf = self.branch.leaf
        if (
            leaf is None
            or self.branch.loop_at is not None
            or (self.session.version >= 2 and leaf.entry_id is None)
        ):
            return None
        damaged = max((f.line or 0 for f in self.findings if f.severity is Severity.ERROR), default=0)
        return plan_tail(self.messages, self.entries_by_line(), tokens, room, damaged)

    def span(self, first_item: int) -> tuple[SpanPiece, ...]:
        """The summarized span (the sent messages before `first_item`) as typed pieces."""
        return span_pieces(self.messages, self.entries_by_line(), first_item)

    def compose(self, cut_line: int, summary: str) -> bytes:
        """The candidate: this session and one appended compaction keeping from `cut_line` on."""
        kept = self.entries_by_line()[cut_line]
        return compose_compaction(self.session, self.data, kept, summary, self.context_tokens())

    def compose_archive(self, cut_line: int, summary: str) -> bytes | None:
        """The archival candidate (`archive_form.py`): only the kept branch after the compaction;
        None when a kept line's link is not written as pi writes it."""
        kept = self.entries_by_line()[cut_line]
        form = compose_archive(self.session, self.data, self.branch, kept, summary, self.context_tokens())
        return None if form is None else form[0]

    @property
    def damaged(self) -> bool:
        """Whether a line pi cannot load is in the file (an error finding with a line)."""
        return any(f.severity is Severity.ERROR and f.line is not None for f in self.findings)

    def context_lines(self) -> frozenset[int]:
        """Lines whose messages pi sends (a compaction counts for its summary)."""
        return frozenset(m.line for m in self.messages if m.origin is not MessageOrigin.SYNTHETIC)

    def sweep_sets(self) -> dict[PartitionSet, frozenset[int]]:
        """The six sets of a sweep (no cut), before the partition checks them."""
        raw = self.context_lines()
        header = self.session.header
        read = {entry.line for entry in self.branch.context}
        read |= {entry.line for entry in self.branch.path if entry.kind in _SETTINGS}
        read |= {header.line} if header is not None else set()
        control: set[int] = set()
        branch: set[int] = set()
        for entry in self.session.entries:
            if entry.line not in raw:
                (control if entry.line in read else branch).add(entry.line)
        everything = frozenset(range(1, len(self.session) + 1))
        return {
            PartitionSet.SUMMARY: frozenset(),
            PartitionSet.RAW_KEEP: raw,
            PartitionSet.SIDE_KEEP: frozenset(),
            PartitionSet.CONTROL_PROJECTION: frozenset(control),
            PartitionSet.EXCLUDED_BRANCH: frozenset(branch),
            PartitionSet.EXCLUDED_UNATTRIBUTED: everything - raw - control - branch,
        }


def analyze_session(data: bytes, limits: LineLimits) -> PiAnalysis:
    """Decode, rebuild and judge one session's bytes."""
    session = decode_session(data, limits)
    branch = active_branch(session)
    messages = chat_messages(list(agent_messages(branch.context)))
    findings = session_findings(session, branch, messages)
    return PiAnalysis(data, session, branch, tuple(messages), findings)


def compress_sets(analysis: PiAnalysis, first_item: int) -> dict[PartitionSet, frozenset[int]]:
    """The six sets of a compaction keeping the sent messages from `first_item` on.

    The candidate keeps every line (pi appends its compaction): `summary` holds the lines whose
    messages the summary replaces, `raw_keep` those whose messages stay sent, and the rest are the
    sweep's control and excluded lines, with what is read but not sent before the cut
    (summarized turns pi skipped) as control.
    """
    sweep = analysis.sweep_sets()
    kept = frozenset(
        m.line for m in analysis.messages[first_item:] if m.origin is not MessageOrigin.SYNTHETIC
    )
    summary = (
        frozenset(m.line for m in analysis.messages[:first_item] if m.origin is not MessageOrigin.SYNTHETIC)
        - kept
    )
    cut_line = analysis.messages[first_item].line
    tail = frozenset(e.line for e in analysis.branch.context if e.line >= cut_line) - kept - summary
    control = (sweep[PartitionSet.CONTROL_PROJECTION] | tail) - kept - summary
    return {
        PartitionSet.SUMMARY: summary,
        PartitionSet.RAW_KEEP: kept,
        PartitionSet.SIDE_KEEP: frozenset(),
        PartitionSet.CONTROL_PROJECTION: control,
        PartitionSet.EXCLUDED_BRANCH: sweep[PartitionSet.EXCLUDED_BRANCH] - kept - summary - control,
        PartitionSet.EXCLUDED_UNATTRIBUTED: sweep[PartitionSet.EXCLUDED_UNATTRIBUTED],
    }
