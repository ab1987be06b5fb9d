"""The sections a damage repair adds to a report: its receipts, the defect it left, Claude Code's verdict.

`compaction repair` writes them in its own report; `compress --repair` writes them in the
compress report's `source_repair`, for the repair made before the compaction. Content-free:
lines, defect codes, actions, byte counts, tool ids, verdicts and the API's rule codes.
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET, UnsetType

from pipeline.report.sections import Section

__all__ = ["EditEntry", "ProofSection", "SourceRepairSection", "UnrepairedEntry"]


class EditEntry(Section, frozen=True, kw_only=True):
    """One receipt line: where, which defect, what was done, bytes before and after."""

    line: int
    code: str
    action: str
    bytes_before: int
    bytes_after: int
    ids: list[str] = msgspec.field(default_factory=list)


class UnrepairedEntry(Section, frozen=True, kw_only=True):
    """The defect that left the file as it was."""

    line: int
    code: str
    reason: str


class ProofSection(Section, frozen=True, kw_only=True):
    """Claude Code's verdict on the repaired file, beside the damaged one."""

    verdict: str
    damaged_blocks: int
    repaired_blocks: int
    damaged_rejected: list[str]  # the API rules the damaged file's context broke
    repaired_rejected: list[str]
    missing: list[str]  # content-free labels of blocks the repaired context lacks


class SourceRepairSection(Section, frozen=True, kw_only=True):
    """`compress --repair`: the repair made before compressing, or why none was made.

    `status` is repaired (the compaction ran on the repaired bytes: every line number elsewhere
    in the report is a line of those bytes, `repaired_sha256`), or unrepaired / refuted (the
    compaction ran on the original). The original's own digest stays in `session`.
    """

    status: str  # repaired, unrepaired, refuted, or off (the refusal's `remedy` names the fix)
    edits: list[EditEntry] = msgspec.field(default_factory=list)
    unrepaired: UnrepairedEntry | UnsetType = UNSET
    proof: ProofSection | UnsetType = UNSET
    repaired_sha256: str | UnsetType = UNSET
    repaired_lines: int | UnsetType = UNSET
    remedy: str | UnsetType = UNSET
