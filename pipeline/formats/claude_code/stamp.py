"""Reading back what a compaction of ours recorded on its boundary (`compactMetadata`).

`compaction probe ORIGINAL COMPACTED` rebuilds the summarized span from the two files alone: the
boundary names the source's SHA-256, the leaf and policy that chose its chain, the digest of the
summarized lines and the first kept record (`preservedSegment.headUuid`), and the records it
carries after its summary that are not kept source records.
"""

from __future__ import annotations

from typing import Final

import msgspec

from pipeline.formats.claude_code.build import CompactionMetadata, ToolMetadata
from pipeline.formats.claude_code.records import MASK_STAMP_KEY
from pipeline.vocabulary import PartitionSet

__all__ = ["CompactionStamp", "MaskStamp", "compaction_stamp", "mask_stamp"]


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
            + [agent.uuid for agent in ours.carried_background_agents or ()]
        ),
        tuple(state.line for state in ours.projected_state),
    )


class MaskStamp(msgspec.Struct, frozen=True):
    """What a masked candidate's pointer names: the source and the leaf policy that chose its chain."""

    source_sha256: str
    leaf_policy: str


class _Pointer(msgspec.Struct):
    type: str = ""
    sessionCompaction: ToolMetadata | None = None  # the record's own member name


_POINTER: Final = msgspec.json.Decoder(_Pointer)


def mask_stamp(data: bytes) -> MaskStamp | None:
    """Our stamp on a masked candidate's last `last-prompt` (`--strategy mask`), or None."""
    needle = f'"{MASK_STAMP_KEY}"'.encode()
    for line in reversed(data.split(b"\n")):
        if b'"last-prompt"' not in line or needle not in line:
            continue
        try:
            pointer = _POINTER.decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
        if pointer.type == "last-prompt" and pointer.sessionCompaction is not None:
            ours = pointer.sessionCompaction
            return MaskStamp(ours.source_sha256, ours.leaf.policy)
    return None
