"""What every item-context judge hands the generic job: its verdict as the report's resume-check
section (Claude Code's shape, the items counted as blocks), wrapped as the seam's `JudgedPair`."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.proof.context import ContextSize
from pipeline.proof.item_verdict import ItemVerdict
from pipeline.report.resume_check import ResumeCheckSection, SentSizes, SizeSection

__all__ = ["JudgedItems", "item_check_section"]


def _size(side: ContextSize | None) -> SizeSection | None:
    if side is None:
        return None
    return SizeSection(
        messages=side.messages, characters=side.characters, estimated_tokens=side.estimated_tokens
    )


def item_check_section(verdict: ItemVerdict, elapsed_ms: float) -> ResumeCheckSection:
    """The report section of an item-context proof."""
    before, after = verdict.original, verdict.compacted
    reduction = None
    if before is not None and after is not None and before.characters:
        reduction = round(1 - after.characters / before.characters, 4)
    return ResumeCheckSection(
        verdict=verdict.verdict,
        differences=list(verdict.differences),
        notes=list(verdict.notes),
        summary_blocks=verdict.summary_items,
        kept_blocks=verdict.kept_items,
        sent=SentSizes(original=_size(before), compacted=_size(after)),
        characters_reduction=reduction,
        elapsed_ms=elapsed_ms,
    )


@dataclass(frozen=True, slots=True)
class JudgedItems:
    """An item-context verdict as the seam's `JudgedPair`."""

    verdict: ItemVerdict

    @property
    def ok(self) -> bool:
        return self.verdict.ok

    def section(self, elapsed_ms: float) -> ResumeCheckSection:
        return item_check_section(self.verdict, elapsed_ms)
