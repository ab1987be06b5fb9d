"""Composition: the compacted transcript's bytes, exactly as seed 004 lays them out.

Order: the projected control prefix, side snapshots, one `system`/`compact_boundary` record and
its `isCompactSummary` user child, the projected resume state (summarized attachment records
Claude Code folds on resume, each as in the source but for its `parentUuid`, chained after the
summary, then the records written afresh for it: a `task_status` per carried background shell, a
user record of no content carrying the launch result of each carried background agent),
the raw suffix (every byte as in the source except the first record's `parentUuid`
and tool outputs bounded as declared), and a final `last-prompt`
deep-copied from the source pointer with its leaf updated (or, for a source without one, a new
pointer naming the leaf): the only pointer the output holds, as the README promises.
Pure: the new records' uuids and timestamp are inputs (the compress job draws them), and the
records themselves are built by the format module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

import msgspec

from pipeline.core.index import LineIndex
from pipeline.errors import CompactionError
from pipeline.formats.claude_code.build import (
    CompactionMetadata,
    PreservedSegmentStamp,
    SharedFields,
    ToolMetadata,
    attachment_line,
    boundary_line,
    declaring_pointer,
    launch_line,
    new_pointer,
    projected_pointer,
    replace_parent,
    shared_fields,
    summary_line,
)
from pipeline.formats.claude_code.tasks import BackgroundAgent, BackgroundShell, task_status
from pipeline.reasons import ReasonCode

__all__ = [
    "SUMMARY_PREAMBLE",
    "ComposeError",
    "ComposeFailure",
    "ComposeInput",
    "ComposedTranscript",
    "MaskInput",
    "PairIds",
    "WrittenRecord",
    "compose",
    "compose_masked",
]

SUMMARY_PREAMBLE: Final = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The earlier part is summarized below; the most recent messages follow verbatim."
)
TRIGGER: Final = "manual"  # an offline compaction is the user's decision, never Claude Code's auto trigger
_COMMON_SAMPLE: Final = 64  # kept records sampled for the shared fields of the new pair
_SAMPLE_LINE_BYTES: Final = 1 << 20  # a huge tool output carries the same fields: not parsed for them


class ComposeFailure(ReasonCode):
    """Why a compacted transcript cannot be built."""

    EMPTY_RAW_SUFFIX = "empty-raw-suffix"
    RAW_SUFFIX_WITHOUT_UUID = "raw-suffix-without-uuid"
    POINTER_UNREADABLE = "pointer-unreadable"


class ComposeError(CompactionError):
    """The compacted transcript cannot be built (a code, never content)."""

    def __init__(self, code: ComposeFailure) -> None:
        self.code = code
        super().__init__(code.value)


@dataclass(frozen=True, slots=True)
class PairIds:
    """The identities of the new compact pair, drawn by the caller."""

    boundary_uuid: str
    summary_uuid: str
    timestamp: str  # ISO 8601 UTC with milliseconds, as Claude Code writes them


@dataclass(frozen=True, slots=True)
class WrittenRecord:
    """A record the compaction writes after the summary, with its uuid (drawn by the caller): the
    `task_status` of a background shell it carries, or the launch result of a background agent
    (`pipeline.formats.claude_code.tasks`)."""

    uuid: str
    task: BackgroundShell | BackgroundAgent

    def line(self, common: SharedFields, parent: str, stamp: str) -> bytes:
        """The record's line, hung off `parent`."""
        if isinstance(self.task, BackgroundAgent):
            return launch_line(common, self.uuid, parent, stamp, self.task)
        return attachment_line(common, self.uuid, parent, stamp, task_status(self.task))


@dataclass(frozen=True, slots=True)
class ComposeInput:
    """Everything composition needs; all of it already decided by earlier stages."""

    data: bytes
    index: LineIndex
    raw_lines: tuple[int, ...]  # the kept suffix in chain order
    side_lines: tuple[int, ...]
    control_lines: tuple[int, ...]
    summary_text: str
    pointer_line: int | None
    session_id: str | None  # the session the suffix belongs to (lineage's current one)
    logical_parent: str | None  # the last summarized record's uuid
    metadata: ToolMetadata
    pre_tokens: int
    ids: PairIds
    bounded: Mapping[int, bytes] = field(default_factory=dict)  # kept lines with bounded tool outputs
    state_lines: tuple[int, ...] = ()  # summarized attachment records carried after the summary
    written: tuple[WrittenRecord, ...] = ()  # new records (shells, then agents), after the carried ones
    discovered_tools: tuple[str, ...] = ()  # deferred tools the summarized span loaded
    leaf_line: int | None = None  # the leaf the source's pointer names (`resumed_leaf`)


@dataclass(frozen=True, slots=True)
class ComposedTranscript:
    """The candidate's bytes and the identities of what was added."""

    data: bytes
    boundary_uuid: str
    summary_uuid: str
    leaf_uuid: str | None
    source_lines: tuple[int | None, ...]  # per output line: the source line, or None for a new record
    state_uuids: tuple[str, ...] = ()  # the projected state records, in chain order after the summary
    written_uuids: tuple[str, ...] = ()  # the records written afresh, after them

    @property
    def tail_parent(self) -> str:
        """The uuid the first kept record hangs off: the last record before the raw suffix."""
        return (self.summary_uuid, *self.state_uuids, *self.written_uuids)[-1]


def resumed_leaf(index: LineIndex, kept: tuple[int, ...], leaf_line: int | None) -> tuple[str, str | None]:
    """The uuid (and session) the candidate's pointer names: the leaf the source's own pointer
    names, when the candidate keeps it, so its client resumes where it resumed the source (the
    chain may run past that leaf, through results it recovers); else the last kept record's."""
    record = index.record(leaf_line if leaf_line in kept else kept[-1])
    if record is None or record.uuid is None:
        raise ComposeError(ComposeFailure.RAW_SUFFIX_WITHOUT_UUID)
    return record.uuid, record.session


def compose(spec: ComposeInput) -> ComposedTranscript:
    """Lay out the compacted transcript (pure: the same input gives the same bytes)."""
    if not spec.raw_lines:
        raise ComposeError(ComposeFailure.EMPTY_RAW_SUFFIX)
    data, index, ids = spec.data, spec.index, spec.ids
    first, last = index.record(spec.raw_lines[0]), index.record(spec.raw_lines[-1])
    if first is None or last is None or first.uuid is None or last.uuid is None:
        raise ComposeError(ComposeFailure.RAW_SUFFIX_WITHOUT_UUID)
    small = [line for line in spec.raw_lines if index.lengths[line - 1] <= _SAMPLE_LINE_BYTES]
    sample = (index.raw_line(data, line) for line in (small or spec.raw_lines[:1])[:_COMMON_SAMPLE])
    common = shared_fields(sample, spec.session_id)
    state = [(line, index.entry(line).uuid or "") for line in spec.state_lines]
    heads = [*(uid for _, uid in state), *(record.uuid for record in spec.written), first.uuid]
    metadata = CompactionMetadata(
        TRIGGER,
        spec.metadata,
        spec.pre_tokens,
        PreservedSegmentStamp(heads[0], ids.summary_uuid, last.uuid),
        list(spec.discovered_tools) if spec.discovered_tools else msgspec.UNSET,
    )
    leaf, leaf_session = resumed_leaf(index, spec.raw_lines, spec.leaf_line)
    lines = [index.raw_line(data, line) for line in (*spec.control_lines, *spec.side_lines)]
    origins: list[int | None] = [*spec.control_lines, *spec.side_lines]
    lines.append(boundary_line(common, ids.boundary_uuid, spec.logical_parent, ids.timestamp, metadata))
    lines.append(summary_line(common, ids.summary_uuid, ids.boundary_uuid, ids.timestamp, spec.summary_text))
    origins.extend((None, None))
    parent = ids.summary_uuid
    for line, uid in state:
        lines.append(replace_parent(index.raw_line(data, line), parent))
        origins.append(line)
        parent = uid
    for record in spec.written:
        lines.append(record.line(common, parent, ids.timestamp))
        origins.append(None)
        parent = record.uuid
    for position, line in enumerate(spec.raw_lines):
        raw = spec.bounded.get(line) or index.raw_line(data, line)
        lines.append(replace_parent(raw, parent) if position == 0 else raw)
        origins.append(line)
    if spec.pointer_line is None:
        lines.append(new_pointer(leaf, leaf_session))
    else:
        pointer = projected_pointer(index.raw_line(data, spec.pointer_line), leaf, leaf_session)
        if pointer is None:
            raise ComposeError(ComposeFailure.POINTER_UNREADABLE)
        lines.append(pointer)
    origins.append(None)
    return ComposedTranscript(
        b"\n".join(lines) + b"\n",
        ids.boundary_uuid,
        ids.summary_uuid,
        leaf,
        tuple(origins),
        tuple(uid for _, uid in state),
        tuple(record.uuid for record in spec.written),
    )


@dataclass(frozen=True, slots=True)
class MaskInput:
    """What a masked candidate is made of: no compact pair, the whole chain kept."""

    data: bytes
    index: LineIndex
    chain_lines: tuple[int, ...]  # the active chain, every record kept
    side_lines: tuple[int, ...]
    control_lines: tuple[int, ...]
    pointer_line: int | None
    metadata: ToolMetadata  # declared on the pointer: the cleared outputs have no boundary to live in
    bounded: Mapping[int, bytes] = field(default_factory=dict)  # chain lines with tool outputs cleared
    leaf_line: int | None = None  # the leaf the source's pointer names (`resumed_leaf`)


def compose_masked(spec: MaskInput) -> ComposedTranscript:
    """Lay out a masked candidate: the control prefix, side snapshots, the chain as it is but for
    its cleared tool outputs (every parent kept), and the pointer naming the same leaf with our
    declarations. Pure, like `compose`; the pair's uuids are empty (there is none)."""
    if not spec.chain_lines:
        raise ComposeError(ComposeFailure.EMPTY_RAW_SUFFIX)
    data, index = spec.data, spec.index
    last = index.record(spec.chain_lines[-1])
    if last is None or last.uuid is None:
        raise ComposeError(ComposeFailure.RAW_SUFFIX_WITHOUT_UUID)
    leaf, leaf_session = resumed_leaf(index, spec.chain_lines, spec.leaf_line)
    kept = (*spec.control_lines, *spec.side_lines, *spec.chain_lines)
    lines = [spec.bounded.get(line) or index.raw_line(data, line) for line in kept]
    if spec.pointer_line is None:
        pointer: bytes | None = new_pointer(leaf, leaf_session)
    else:
        pointer = projected_pointer(index.raw_line(data, spec.pointer_line), leaf, leaf_session)
    if pointer is None:
        raise ComposeError(ComposeFailure.POINTER_UNREADABLE)
    lines.append(declaring_pointer(pointer, spec.metadata))
    return ComposedTranscript(b"\n".join(lines) + b"\n", "", "", leaf, (*kept, None))
