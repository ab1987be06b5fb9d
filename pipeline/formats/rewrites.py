"""The format-neutral values of a rewrite: a session file rewritten so its client sends the same.

A format may rewrite a session's file in place of a compaction: `repair` writes into the file the
repair its client applies on every load (the defect leaves the file, the context sent stays the
same), `vacuum` drops what its client never loads (the same context from fewer bytes). Each edit
is a line, a code and what changed, never text, so it goes into reports as it is.

A repair whose client does not make it on load changes what the client sends (a client that sends
an open call as it is, the repair answering it): such a rewrite declares each item it changes
(`SentEdit`), and the check and the judge hold it to exactly those items, every other item the same.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from pipeline.vocabulary import FindingCode

__all__ = ["Rewrite", "RewriteEdit", "RewriteKind", "RewriteRefusal", "SentEdit", "expected_sent"]


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
class SentEdit:
    """An item the rewritten file's client sends that the original's does not: where it stands
    among the rewritten file's sent items, the item as the client sends it (its canonical JSON, as
    a `SentItem`'s digest is taken; held for the check and the judge, never reported), and whether
    it takes the place of the original's item there (else it is inserted)."""

    position: int
    item: bytes
    replaces: bool = False

    @property
    def digest(self) -> str:
        """SHA-256 of the item's canonical JSON (what `SentItem.digest` holds)."""
        return hashlib.sha256(self.item).hexdigest()


def expected_sent(original: Sequence[str], changes: Sequence[SentEdit]) -> list[str]:
    """The digests the rewritten file must send: the original's, each declared item put in."""
    expected = list(original)
    for change in sorted(changes, key=lambda c: c.position):  # positions in the rewritten order
        if not change.replaces:
            expected.insert(change.position, change.digest)
        elif change.position < len(expected):
            expected[change.position] = change.digest
        else:  # a replacement of no item: no file can send what it declares
            expected.append(f"no-item-{change.position}-to-replace")
    return expected


@dataclass(frozen=True, slots=True)
class Rewrite:
    """The rewritten file's bytes and the edits that made them (the codes it removes: `repaired`),
    and the items it changes in what the client sends (`sent`: none for a rewrite that sends the
    same context)."""

    kind: RewriteKind
    data: bytes
    edits: tuple[RewriteEdit, ...]
    sent: tuple[SentEdit, ...] = ()

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
