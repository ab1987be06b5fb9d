"""The active branch pi resumes and the entries it rebuilds the context from (pi 1.6.0).

pi's leaf is the last entry it loads; the branch is the walk up `parentId` from it (an id seen
twice names its later entry). On that branch the latest `compaction` stands for everything before
it except the range starting at its `firstKeptEntryId` (system messages there are dropped in favour
of its own checkpoint); everything after it follows. Below version 2 pi links entries in file
order and maps a compaction's `firstKeptEntryIndex` (a position among the records it parsed) to
the entry there. A parent cycle, which would keep pi walking forever, stops the walk here.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.formats.pi.session_decode import PiEntry, PiKind, PiSession

__all__ = ["PiBranch", "active_branch"]


@dataclass(frozen=True, slots=True)
class PiBranch:
    """The leaf, the branch from the root to it, and what pi builds its context from."""

    path: tuple[PiEntry, ...]  # root first
    context: tuple[PiEntry, ...]  # the latest compaction first when there is one
    compaction: PiEntry | None
    kept_from: PiEntry | None  # the compaction's first kept entry, when it is on the branch
    kept_id: str | None  # the id the compaction names as its first kept entry (its own: none kept)
    loop_at: int | None  # the line where the parent walk met itself again
    dangling: tuple[int, ...]  # lines on the branch whose parent names no entry

    @property
    def leaf(self) -> PiEntry | None:
        return self.path[-1] if self.path else None


def _first_kept_id(session: PiSession, compaction: PiEntry) -> str | None:
    kept = compaction.record.get("firstKeptEntryId")
    if isinstance(kept, str):
        return kept
    index = compaction.record.get("firstKeptEntryIndex")
    if session.version < 2 and isinstance(index, int) and 0 <= index < len(session.entries):
        target = session.entries[index]
        return target.entry_id if target.kind is not PiKind.SESSION else None
    return None


def _walk(session: PiSession) -> tuple[list[PiEntry], int | None, list[int]]:
    entries = [entry for entry in session.entries if entry.kind is not PiKind.SESSION]
    by_id = {entry.entry_id: entry for entry in entries if entry.entry_id is not None}
    current: PiEntry | None = entries[-1] if entries else None
    if current is not None and current.entry_id is not None:
        current = by_id[current.entry_id]
    path: list[PiEntry] = []
    seen: set[int] = set()
    loop_at, dangling = None, []
    while current is not None:
        if current.line in seen:
            loop_at = current.line
            break
        seen.add(current.line)
        path.append(current)
        parent = current.parent_id
        current = by_id.get(parent) if parent else None
        if parent and current is None:
            dangling.append(path[-1].line)
    path.reverse()
    return path, loop_at, dangling


def _is_system(entry: PiEntry) -> bool:
    return entry.kind is PiKind.MESSAGE and entry.role == "system"


def active_branch(session: PiSession) -> PiBranch:
    """The branch pi resumes and its context entries."""
    path, loop_at, dangling = _walk(session)
    at = max((i for i, entry in enumerate(path) if entry.kind is PiKind.COMPACTION), default=None)
    if at is None:
        return PiBranch(tuple(path), tuple(path), None, None, None, loop_at, tuple(dangling))
    compaction = path[at]
    kept_id = _first_kept_id(session, compaction)
    start = next((i for i, entry in enumerate(path[:at]) if entry.entry_id == kept_id), at)
    kept = [entry for entry in path[start:at] if not _is_system(entry)]
    context = (compaction, *kept, *path[at + 1 :])
    kept_from = path[start] if start < at else None
    return PiBranch(tuple(path), context, compaction, kept_from, kept_id, loop_at, tuple(dangling))
