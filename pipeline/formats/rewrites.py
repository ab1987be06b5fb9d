"""The format-neutral values of a rewrite: a session file rewritten so its client sends the same.

A format may rewrite a session's file in place of a compaction: `repair` writes into the file the
repair its client applies on every load (the defect leaves the file, the context sent stays the
same), `vacuum` drops what its client never loads (the same context from fewer bytes). Each edit
is a line, a code and what changed, never text, so it goes into reports as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from pipeline.vocabulary import FindingCode

__all__ = ["Rewrite", "RewriteEdit", "RewriteKind", "RewriteRefusal"]


class RewriteKind(StrEnum):
    """What a rewrite is for."""

    REPAIR = "repair"  # the defects the client repairs on load, written into the file
    VACUUM = "vacuum"  # what the client never loads, dropped


@dataclass(frozen=True, slots=True)
class RewriteEdit:
    """One change: the original's line it is at, the defect or kind of waste, what was done."""

    line: int
    code: FindingCode | None  # the finding it removes (None: waste no finding names)
    change: str  # e.g. `synthesized-response`, `superseded-records-dropped`
    count: int = 1


@dataclass(frozen=True, slots=True)
class Rewrite:
    """The rewritten file's bytes and the edits that made them (the codes it removes: `repaired`)."""

    kind: RewriteKind
    data: bytes
    edits: tuple[RewriteEdit, ...]

    @property
    def repaired(self) -> frozenset[FindingCode]:
        """The finding codes the rewritten file must no longer hold."""
        return frozenset(edit.code for edit in self.edits if edit.code is not None)


@dataclass(frozen=True, slots=True)
class RewriteRefusal:
    """The format's own reason it will not rewrite this file (a damaged line it cannot account for,
    a re-read that differs): the session is refused, nothing is written."""

    kind: RewriteKind
    reason: str
