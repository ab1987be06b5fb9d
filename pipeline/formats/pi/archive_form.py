"""A smaller pi file for archival: pi's own compaction as the new root, then only the kept tail.

Where the appended form (`compaction_entry.py`) keeps the whole history in the file, this form
drops what the summary replaces (the verified backup keeps it), damaged lines included: the
header; on line 2 a `compaction` entry that retains nothing before itself (its `firstKeptEntryId`
is its own id, as pi writes a retain-none compaction) as the new root; the branch's latest model
and thinking-level changes before the cut (pi reads its model settings from the branch); then the
branch's entries from the cut on, byte for byte but for the links that make them one chain after
the compaction (an entry whose parent was an earlier compaction, which would supersede the new
one, names the entry before it). Entries of other branches after the cut are dropped with the
summarized span. Below version 2, where pi links entries in file order, nothing is rewritten and
the compaction points at itself by `firstKeptEntryIndex`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import orjson

from pipeline.formats.pi.branch import PiBranch
from pipeline.formats.pi.compaction_entry import compaction_record
from pipeline.formats.pi.session_decode import PiEntry, PiKind, PiSession

__all__ = ["ARCHIVE_SUMMARY_LINE", "ArchiveForm", "compose_archive", "relinked"]

ARCHIVE_SUMMARY_LINE: Final = 2  # the compaction follows the header

_SETTINGS = (PiKind.MODEL_CHANGE, PiKind.THINKING_LEVEL_CHANGE)
ArchiveForm = tuple[bytes, tuple[int, ...]]
"""The candidate's bytes, and the original lines it carries (the rewritten links included)."""


def relinked(raw: bytes, old: str | None, new: str | None) -> bytes | None:
    """`raw` with its `parentId` (as pi writes it, `"parentId":...`) naming `new`; None if absent."""
    if old == new:
        return raw
    before = b'"parentId":' + (orjson.dumps(old) if old is not None else b"null")
    after = b'"parentId":' + (orjson.dumps(new) if new is not None else b"null")
    return raw.replace(before, after, 1) if raw.count(before) == 1 else None


def _settings(branch: PiBranch, cut_line: int) -> list[PiEntry]:
    latest = {kind: e for e in branch.path if e.line < cut_line for kind in _SETTINGS if e.kind is kind}
    return sorted(latest.values(), key=lambda entry: entry.line)


def _chain(
    session: PiSession, data: bytes, entries: Sequence[PiEntry], parent: str | None
) -> tuple[list[bytes], str | None] | None:
    """The entries' lines, each re-parented on the one before it (the first on `parent`)."""
    lines = []
    for entry in entries:
        relinked_line = relinked(session.raw_line(data, entry.line), entry.parent_id, parent)
        if relinked_line is None:
            return None
        lines.append(relinked_line)
        parent = entry.entry_id
    return lines, parent


def compose_archive(
    session: PiSession, data: bytes, branch: PiBranch, kept: PiEntry, summary: str, tokens_before: int
) -> ArchiveForm | None:
    """The archival candidate keeping the branch from `kept` on; None when a kept line's link is
    not written as pi writes it (the appended form still serves)."""
    header = session.header
    if header is None or kept not in branch.path:
        return None
    # An earlier compaction after the cut would supersede the new one; its summary is summarized.
    tail = [e for e in branch.path[branch.path.index(kept) :] if e.kind is not PiKind.COMPACTION]
    settings = _settings(branch, kept.line)
    record: dict[str, Any] = compaction_record(session, data, kept, summary, tokens_before)
    if session.version < 2:
        record["firstKeptEntryIndex"] = 1  # itself (the header is entry 0): nothing before it kept
        carried = [session.raw_line(data, entry.line) for entry in (*settings, *tail)]
    else:
        record |= {"parentId": None, "firstKeptEntryId": record["id"]}
        chained = _chain(session, data, (*settings, *tail), record["id"])
        if chained is None:
            return None
        carried = chained[0]
    lines = [session.raw_line(data, header.line), orjson.dumps(record), *carried]
    return b"\n".join(lines) + b"\n", (header.line, *(e.line for e in (*settings, *tail)))
