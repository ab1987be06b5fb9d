"""One Codex rollout read and judged: its lines, the context Codex rebuilds, its findings, and
the lines of each of the six partition sets for a sweep.

The sweep's partition, for a rollout: `raw_keep` holds the lines whose items Codex sends (the
base compaction and the replayed response items); `control_projection` the records Codex reads
for its resume state (session_meta, and the turn contexts, events, token usage records and world
states after the base);
`excluded_branch` the response items Codex will not send (before the base, already summarized by
a compaction; or dropped by a rollback); `excluded_unattributed` everything else (damaged lines,
events before the base, records of no kind Codex writes). `summary` is empty: a sweep cuts nothing.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from pipeline.findings import Finding
from pipeline.formats.codex.checkpoint_records import summary_item
from pipeline.formats.codex.integrity import rollout_findings
from pipeline.formats.codex.item_types import CONTROL_RECORD_KINDS
from pipeline.formats.codex.reconstruct import ContextItem, ItemOrigin, Rebuilt, rebuild_context
from pipeline.formats.codex.rollout_decode import Rollout, RolloutKind, decode_rollout
from pipeline.formats.codex.rollout_items import item_digest, replacement_items, sent_items, sent_pairs
from pipeline.formats.codex.sent_form import sent_item
from pipeline.formats.context_items import SentItem
from pipeline.formats.line_guard import LineLimits
from pipeline.vocabulary import PartitionSet

__all__ = ["RolloutAnalysis", "SentItem", "analyze_rollout", "approx_tokens", "compress_sets", "summary_sent"]

_CONTROL_AFTER_BASE = frozenset(RolloutKind(kind) for kind in CONTROL_RECORD_KINDS)


def approx_tokens(size: int) -> int:
    """Codex's own estimate of a text's tokens (`approx_token_count`: bytes / 4, rounded up)."""
    return math.ceil(size / 4)


def _measured(item: dict[str, Any]) -> SentItem:
    return SentItem(item_digest(item), approx_tokens(len(orjson.dumps(item))))


def summary_sent(summary: str) -> SentItem:
    """The summary item a checkpoint's replacement history holds, as Codex sends it."""
    return _measured(sent_item(summary_item(summary), recorded=False))


@dataclass(frozen=True, slots=True)
class RolloutAnalysis:
    """A rollout, the context Codex rebuilds from it, and what validation found."""

    data: bytes
    rollout: Rollout
    rebuilt: Rebuilt
    replacements: dict[int, tuple[ContextItem, ...]]
    findings: tuple[Finding, ...]

    @property
    def versions(self) -> tuple[str, ...]:
        return tuple(e.version for e in self.rollout.entries if e is not None and e.version)

    def context_lines(self) -> frozenset[int]:
        """Lines whose items Codex sends (a base compaction counts once, as its line)."""
        return frozenset(
            i.line for i in self.rebuilt.items if i.origin in (ItemOrigin.LINE, ItemOrigin.REPLACEMENT)
        )

    def sent(self) -> Iterator[tuple[ContextItem, SentItem]]:
        """Each item of the rebuilt context as Codex sends it, with its reference, in order."""
        for reference, item in sent_pairs(self.rollout, self.data, self.rebuilt):
            yield reference, _measured(item)

    def context_digests(self) -> list[str]:
        """SHA-256 of each sent item's canonical JSON, in order (what goldens compare)."""
        return [item_digest(item) for item in sent_items(self.rollout, self.data, self.rebuilt)]

    def context_tokens(self) -> int:
        """Codex's estimate of the rebuilt context (its items' JSON bytes / 4)."""
        items = sent_items(self.rollout, self.data, self.rebuilt)
        return sum(approx_tokens(len(orjson.dumps(item))) for item in items)

    def file_tokens(self) -> int:
        """Codex's estimate of every record line."""
        return sum(
            approx_tokens(n)
            for n, e in zip(self.rollout.lengths, self.rollout.entries, strict=True)
            if e is not None
        )

    def sweep_sets(self) -> dict[PartitionSet, frozenset[int]]:
        """The six sets of a sweep (no cut), before the partition checks them."""
        rollout, base = self.rollout, self.rebuilt.base_line or 0
        raw = self.context_lines()
        control, branch = set(), set()
        for number, entry in enumerate(rollout.entries, 1):
            if entry is None or number in raw:
                continue
            if entry.kind is RolloutKind.SESSION_META or (
                entry.kind in _CONTROL_AFTER_BASE and number > base
            ):
                control.add(number)
            elif entry.is_item or entry.kind is RolloutKind.COMPACTED:
                branch.add(number)
        everything = frozenset(range(1, len(rollout) + 1))
        return {
            PartitionSet.SUMMARY: frozenset(),
            PartitionSet.RAW_KEEP: raw,
            PartitionSet.SIDE_KEEP: frozenset(),
            PartitionSet.CONTROL_PROJECTION: frozenset(control),
            PartitionSet.EXCLUDED_BRANCH: frozenset(branch),
            PartitionSet.EXCLUDED_UNATTRIBUTED: everything - raw - control - branch,
        }


def compress_sets(analysis: RolloutAnalysis, cut_line: int) -> dict[PartitionSet, frozenset[int]]:
    """The six sets of a compaction cutting at `cut_line`: what it summarizes, keeps, projects."""
    rollout = analysis.rollout
    kept = frozenset(range(cut_line, len(rollout) + 1))
    meta = frozenset({next(rollout.lines_where(RolloutKind.SESSION_META))}) - kept
    summary = frozenset(line for line in analysis.context_lines() if line < cut_line)
    branch = frozenset(
        number
        for number, entry in enumerate(rollout.entries[: cut_line - 1], 1)
        if entry is not None
        and (entry.is_item or entry.kind is RolloutKind.COMPACTED)
        and number not in summary
    )
    everything = frozenset(range(1, len(rollout) + 1))
    return {
        PartitionSet.SUMMARY: summary,
        PartitionSet.RAW_KEEP: kept,
        PartitionSet.SIDE_KEEP: frozenset(),
        PartitionSet.CONTROL_PROJECTION: meta,
        PartitionSet.EXCLUDED_BRANCH: branch,
        PartitionSet.EXCLUDED_UNATTRIBUTED: everything - kept - meta - summary - branch,
    }


def analyze_rollout(data: bytes, limits: LineLimits) -> RolloutAnalysis:
    """Decode, rebuild and judge one rollout's bytes."""
    rollout = decode_rollout(data, limits)
    replacements, malformed = replacement_items(rollout, data)
    rebuilt = rebuild_context(rollout, replacements)
    findings = rollout_findings(rollout, rebuilt, malformed)
    return RolloutAnalysis(data, rollout, rebuilt, replacements, findings)
