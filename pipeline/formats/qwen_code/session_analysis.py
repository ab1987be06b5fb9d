"""One Qwen Code session read and judged: its lines, the history Qwen Code rebuilds and sends, its
findings, the six sets, and where a compaction may cut.

The sweep's partition: `raw_keep` holds the lines whose contents Qwen Code sends (the base
compression record, and the branch's records after it that carry a message); `control_projection`
the other records of the branch after the base (telemetry, attribution snapshots, slash commands:
what Qwen Code replays for its resume state) and the session's artifact and sidecar records;
`excluded_branch` the conversation records Qwen Code does not resume (off the branch: rewound; or
before the base, already summarized by its own compression); `excluded_unattributed` everything
else (damaged lines, objects it skips). `summary` is empty: a sweep cuts nothing.

A cut falls on a model record of the branch after the base whose message starts an assistant
message (the content before it is a user's), with every call before it answered before it and the
branch's records before it physically before it, after it physically after it: the candidate's
history is then the summary, then the original's messages from that one, unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate
from pathlib import PurePath

from pipeline.findings import Finding
from pipeline.formats.context_items import SentItem, TailPlan
from pipeline.formats.line_guard import LineLimits
from pipeline.formats.qwen_code.active_chain import ActiveChain, ChainRecord, active_chain
from pipeline.formats.qwen_code.api_history import Entry, Rebuilt, curated, rebuild_history
from pipeline.formats.qwen_code.call_repair import TurnRepair, repair_calls
from pipeline.formats.qwen_code.chat_compression import compose_compression, summary_message, summary_text
from pipeline.formats.qwen_code.chat_messages import SentMessage, message_digest, sent_messages
from pipeline.formats.qwen_code.part_estimate import estimate_tokens
from pipeline.formats.qwen_code.session_decode import (
    Session,
    decode_session,
    json_document_layout,
    raw_line,
)
from pipeline.formats.qwen_code.session_findings import session_findings
from pipeline.formats.qwen_code.session_records import PartKind
from pipeline.formats.qwen_code.signature import is_subagent_transcript
from pipeline.vocabulary import FindingCode, PartitionSet, Severity

__all__ = ["QwenAnalysis", "analyze_session"]


@dataclass(frozen=True)
class QwenAnalysis:
    """A session, the history Qwen Code rebuilds and sends from it, and what validation found."""

    data: bytes
    session: Session
    chain: ActiveChain
    rebuilt: Rebuilt
    sent_history: tuple[Entry, ...]  # the curated history
    messages: tuple[SentMessage, ...]
    findings: tuple[Finding, ...]
    nested: bool = False  # found where Qwen Code keeps its subagents' transcripts
    repairs: tuple[TurnRepair, ...] = ()  # Qwen Code's repair of the calls' answers, turn by turn

    @property
    def versions(self) -> tuple[str, ...]:
        """The Qwen Code versions the records name, in file order."""
        return tuple(r.version for r in self.session.records if r.version)

    @property
    def subagent(self) -> bool:
        """A subagent's transcript (`subagents/<sessionId>/agent-<id>.jsonl`, its records marked
        `isSidechain`): Qwen Code continues it only as that agent's, never by `--resume`."""
        return self.nested or any(r.sidechain for r in self.session.records)

    @property
    def resumable(self) -> bool:
        """Qwen Code resumes it as a session: one session id and a branch (a cycle only stops the
        walk), and no subagent's transcript."""
        return bool(self.chain.records) and len(self.chain.session_ids) == 1 and not self.subagent

    @cached_property
    def items(self) -> tuple[SentItem, ...]:
        """Each message Qwen Code sends, in order: its digest and Qwen Code's own estimate of its
        parts (as `tokens` counts its content classes)."""
        return tuple(SentItem(message_digest(m.message), m.tokens) for m in self.messages)

    def context_lines(self) -> frozenset[int]:
        """Lines whose contents Qwen Code sends (a base compression counts as its line)."""
        return frozenset(line for entry in self.rebuilt.entries for line in entry.lines)

    def file_tokens(self) -> int:
        """Qwen Code's estimate of every record line of the file."""
        return sum(
            estimate_tokens(raw_line(self.data, self.session, r.line).decode("utf-8", "replace"))
            for r in self.session.records
        )

    def _after_base(self) -> tuple[ChainRecord, ...]:
        base = self.rebuilt.base_line or 0
        return tuple(entry for entry in self.chain.records if min(entry.lines) >= base)

    def sweep_sets(self) -> dict[PartitionSet, frozenset[int]]:
        """The six sets of a sweep (no cut), before the partition checks them."""
        raw = self.context_lines()
        branch_after = {line for entry in self._after_base() for line in entry.lines}
        sidecars = {r.line for r in self.session.records if not r.is_conversation}
        control = frozenset((branch_after | sidecars) - raw)
        conversation = {r.line for r in self.session.records if r.is_conversation}
        excluded = frozenset(conversation - raw - control)
        everything = frozenset(range(1, len(self.session) + 1))
        return {
            PartitionSet.SUMMARY: frozenset(),
            PartitionSet.RAW_KEEP: raw,
            PartitionSet.SIDE_KEEP: frozenset(),
            PartitionSet.CONTROL_PROJECTION: control,
            PartitionSet.EXCLUDED_BRANCH: excluded,
            PartitionSet.EXCLUDED_UNATTRIBUTED: everything - raw - control - excluded,
        }

    def compress_sets(self, cut_line: int) -> dict[PartitionSet, frozenset[int]]:
        """The six sets of a compaction cutting at `cut_line`: summarized, kept, excluded."""
        kept = frozenset(range(cut_line, len(self.session) + 1))
        summary = frozenset(line for line in self.context_lines() if line < cut_line)
        conversation = {r.line for r in self.session.records if r.is_conversation and r.line < cut_line}
        branch_lines = {line for entry in self._after_base() for line in entry.lines}
        excluded = frozenset(conversation - summary - branch_lines)
        everything = frozenset(range(1, len(self.session) + 1))
        return {
            PartitionSet.SUMMARY: summary,
            PartitionSet.RAW_KEEP: kept,
            PartitionSet.SIDE_KEEP: frozenset(),
            PartitionSet.CONTROL_PROJECTION: frozenset(),
            PartitionSet.EXCLUDED_BRANCH: excluded,
            PartitionSet.EXCLUDED_UNATTRIBUTED: everything - kept - summary - excluded,
        }

    def cut_points(self) -> tuple[tuple[int, int], ...]:
        """(first kept message, cut line) of every safe cut, earliest first."""
        first_message = {
            m.lines[0]: index for index, m in enumerate(self.messages) if m.message["role"] == "assistant"
        }
        chain = self._after_base()
        cuts: list[tuple[int, int]] = []
        open_calls: set[str] = set()
        seen_before = 0  # the largest line of the branch's records so far
        previous_role = ""
        by_line = {entry.lines[0]: entry for entry in self.sent_history}
        later_lines = _suffix_minima([min(record.lines) for record in chain])
        for position, record in enumerate(chain):
            line = record.lines[0]
            entry = by_line.get(line)
            later = later_lines[position]
            if (
                entry is not None
                and entry.content.role == "model"
                and previous_role == "user"
                and not open_calls
                and seen_before < line <= later
                and first_message.get(line, 0) > 0
            ):
                cuts.append((first_message[line], line))
            if entry is not None:
                previous_role = entry.content.role
                _track_calls(entry, open_calls)
            seen_before = max(seen_before, *record.lines)
        return tuple(cuts)

    def plan_tail(self, room: int) -> TailPlan | None:
        """The largest safe tail within `room` tokens; the smallest safe one when none fits."""
        cuts = self.cut_points()
        if not cuts:
            return None
        tail = [*reversed(list(accumulate(reversed([item.tokens for item in self.items])))), 0]
        for first, line in cuts:
            if tail[first] <= room:
                return TailPlan(first, line, target_met=True, at_turn=False)
        first, line = cuts[-1]
        return TailPlan(first, line, target_met=False, at_turn=False)

    def compose(self, cut_line: int, summary: str) -> bytes:
        """The candidate cutting at `cut_line` with `summary`, in Qwen Code's compression form."""
        record = next(r for r in self.session.records if r.line == cut_line)
        start = self.session.offsets[cut_line] if cut_line < len(self.session) else len(self.data)
        first_item = next(i for i, m in enumerate(self.messages) if m.lines[0] == cut_line)
        kept = sum(item.tokens for item in self.items[first_item:])
        tokens = (sum(item.tokens for item in self.items), kept + summary_sent(summary).tokens)
        line = raw_line(self.data, self.session, cut_line)
        return compose_compression(record, line, self.data[start:], summary, tokens)


def summary_sent(summary: str) -> SentItem:
    """The message Qwen Code sends for a compression record carrying `summary`, and its estimate
    (the one text part the compression's history holds)."""
    return SentItem(message_digest(summary_message(summary)), estimate_tokens(summary_text(summary)))


def _suffix_minima(values: list[int]) -> list[int]:
    """For each position, the least value from it to the end."""
    minima = list(accumulate(reversed(values), min))
    return minima[::-1]


def _track_calls(entry: Entry, open_calls: set[str]) -> None:
    for part in entry.content.parts:
        if part.kind is PartKind.FUNCTION_CALL and part.call_id:
            open_calls.add(part.call_id)
        elif part.kind is PartKind.FUNCTION_RESPONSE and part.call_id:
            open_calls.discard(part.call_id)


def _document_findings(data: bytes) -> tuple[Finding, ...] | None:
    """The one finding of a file holding no record but one JSON document, its `ids` naming the
    layout (the older `tmp/<hash>/chats/session-*.json` chat, a `/chat save` checkpoint): what it
    is, not why each of its lines is no record. Qwen Code 0.24.4 resumes neither ("No saved session
    found"). None when it is no JSON document."""
    layout = json_document_layout(data)
    if layout is None:
        return None
    return (Finding(FindingCode.SESSION_DOCUMENT_NOT_RESUMED, Severity.WARNING, line=1, ids=(layout.value,)),)


def analyze_session(data: bytes, limits: LineLimits, path: PurePath | None = None) -> QwenAnalysis:
    """Decode, rebuild and judge one session's bytes (never raises for bad input); `path`: where
    the file is (a subagent's transcript is told by it too), None for bytes in memory."""
    session = decode_session(data, limits)
    chain = active_chain(session.records)
    rebuilt = rebuild_history(chain.records)
    repair = repair_calls(rebuilt.entries)
    history = curated(repair.entries)
    messages = sent_messages(history)
    findings = _document_findings(data) if not session.records else None
    if findings is None:
        findings = session_findings(session, chain, rebuilt, repair.plans)
    nested = is_subagent_transcript(path)
    return QwenAnalysis(data, session, chain, rebuilt, history, messages, findings, nested, repair.plans)
