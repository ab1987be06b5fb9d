"""Reading back what a compaction of ours recorded on its boundary (`compactMetadata`).

`compaction probe ORIGINAL COMPACTED` rebuilds the summarized span from the two files alone: the
boundary names the source's SHA-256, the leaf and policy that chose its chain, the digest of the
summarized lines and the first kept record (`preservedSegment.headUuid`), and the records it
carries after its summary that are not kept source records.
"""

from __future__ import annotations

import msgspec

from pipeline.formats.claude_code.build import CompactionMetadata
from pipeline.vocabulary import PartitionSet

__all__ = ["CompactionStamp", "compaction_stamp"]


class CompactionStamp(msgspec.Struct, frozen=True):
    """The part of a boundary's metadata that names the source and its summarized span."""

    source_sha256: str
    leaf_uuid: str | None
    leaf_policy: str
    summary_lines: int
    summary_digest: str
    head_uuid: str
    # Records of ours after the summary, not kept source records: carried state (source lines that
    # left the summarized span) and the `task_status` records written for background shells.
    carried_uuids: frozenset[str] = frozenset()
    projected_lines: tuple[int, ...] = ()


class _Boundary(msgspec.Struct):
    compactMetadata: CompactionMetadata | None = None  # the record's own member name


_DECODER = msgspec.json.Decoder(_Boundary)


def compaction_stamp(line: bytes) -> CompactionStamp | None:
    """Our stamp on one boundary line, or None (Claude Code's own boundary, another tool's, damage)."""
    try:
        metadata = _DECODER.decode(line).compactMetadata
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if metadata is None:
        return None
    ours = metadata.session_compaction
    summary = PartitionSet.SUMMARY.value
    if summary not in ours.counts or summary not in ours.digests:
        return None
    return CompactionStamp(
        ours.source_sha256,
        ours.leaf.uuid,
        ours.leaf.policy,
        ours.counts[summary],
        ours.digests[summary],
        metadata.preserved_segment.head_uuid,
        frozenset(
            [state.uuid for state in ours.projected_state]
            + [shell.uuid for shell in ours.carried_background_shells]
        ),
        tuple(state.line for state in ours.projected_state),
    )
