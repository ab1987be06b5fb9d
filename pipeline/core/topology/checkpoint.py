"""Where Claude Code starts its walk to the leaf: the checkpoint its pointers leave, and the last row.

Claude Code (2.1.332) replays the file's `last-prompt` pointers into one checkpoint: a compact
boundary forgets it, a pointer naming `null` with `explicit: true` clears it, a row written after
a pointer makes it no longer explicit. It starts from the record the checkpoint names, unless the
session went on below it (the pointer is not explicit and the physically last conversation row
descends from it, directly or through another call of the same parallel batch); then, as without a
usable pointer, it starts from that last row.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pipeline.core.graph import UuidGraph
from pipeline.core.index import LineIndex
from pipeline.core.topology.rows import RowView, is_side_row
from pipeline.formats.claude_code import scan
from pipeline.formats.claude_code.decode import DecodedRecord
from pipeline.vocabulary import PointerState, RecordType

__all__ = ["ResumeStart", "resume_start", "rows_and_checkpoint_reference"]


@dataclass(frozen=True, slots=True)
class ResumeStart:
    """Where Claude Code starts its walk to the leaf, and what the latest pointer said."""

    start: int | None  # the row the leaf is walked up from
    checkpoint: int | None  # line of the record the effective pointer names, when in the file
    pointer_line: int | None  # the `last-prompt` holding that checkpoint
    below_checkpoint: bool  # the session went on below the checkpoint: the last row wins


@dataclass(frozen=True, slots=True)
class _Checkpoint:
    """The pointer state Claude Code keeps while it reads a transcript top to bottom."""

    leaf: str | None  # the uuid the effective pointer names
    pointer_line: int | None
    explicit: bool  # written with `explicit: true` and no row written after it
    ever_explicit: bool  # some pointer naming this leaf was explicit (rows do not reset it)
    named: bool  # some pointer carried a leafUuid member at all


def _checkpoint(view: RowView, rows: frozenset[int]) -> _Checkpoint:
    """Replay the pointers: a compact boundary forgets the checkpoint, a pointer naming `null`
    with `explicit: true` clears it, and a row written after a pointer (one of `rows`) makes it
    not explicit."""
    leaf: str | None = None
    pointer_line: int | None = None
    explicit = ever = named = False
    for line, record in enumerate(view.index.records, 1):
        if record is None:
            continue
        if record.type == RecordType.LAST_PROMPT:
            state = record.pointer_state
            named = named or state is not PointerState.ABSENT
            if state is PointerState.LEAF or state is PointerState.INVALID:
                same = record.pointer == leaf
                explicit = record.pointer_explicit or (explicit and same)
                ever = record.pointer_explicit or (ever and same)
                leaf, pointer_line = record.pointer, line  # an invalid value names nothing
            elif state is PointerState.NULL and record.pointer_explicit:
                leaf, pointer_line, explicit, ever = None, None, False, False
            continue
        if line in rows:
            explicit = False
        if record.compact_boundary:
            leaf, pointer_line, explicit, ever = None, None, False, False
    return _Checkpoint(leaf, pointer_line, explicit, ever, named)


def _parent_row(view: RowView, line: int) -> int:
    """A row's parent with progress rows passed through (Claude Code re-links around them)."""
    parent = view.graph.parent_of(line)
    seen: set[int] = set()
    while parent and view.record(parent).type == RecordType.PROGRESS and parent not in seen:
        seen.add(parent)
        parent = view.graph.parent_of(parent)
    return parent


def _in_batch(record: DecodedRecord, message_id: str | None) -> bool:
    """Whether a row belongs to the streaming of one assistant message's tool batch."""
    if record.type == RecordType.ASSISTANT:
        return message_id is not None and record.message_id == message_id
    if record.type == RecordType.USER:
        return record.meta or bool(record.tool_results)
    return record.type == RecordType.ATTACHMENT or (
        record.type == RecordType.SYSTEM and not record.compact_boundary
    )


def _batch_ancestors(view: RowView, line: int, message_id: str | None) -> list[int]:
    found: list[int] = []
    seen = {line}
    node = _parent_row(view, line)
    while node and node not in seen and _in_batch(view.record(node), message_id):
        seen.add(node)
        found.append(node)
        node = _parent_row(view, node)
    return found


def _batch_anchor(view: RowView, checkpoint: int) -> tuple[int | None, tuple[str, ...], bool]:
    """(the fragment whose calls the checkpoint answers, the call ids it answers, via a hook)."""
    seen: set[int] = set()
    top: int | None = None
    node = checkpoint
    while node and node not in seen and is_side_row(view.record(node)):
        seen.add(node)
        top, node = node, _parent_row(view, node)
    record = view.record(node) if node else None
    if record is not None and record.type == RecordType.USER and record.tool_results:
        return _parent_row(view, node) or None, record.tool_results, False
    if top is None:
        return node or None, (), False
    tool = view.record(top).attachment_tool_use
    if record is None or record.type != RecordType.ASSISTANT or not record.message_id or tool is None:
        return None, (), False
    owner = next(
        (
            n
            for n in (node, *_batch_ancestors(view, node, record.message_id))
            if tool in view.record(n).tool_uses
        ),
        None,
    )
    return owner, (tool,) if owner else (), owner is not None


def _continues_from(view: RowView, start: int, checkpoint: int, *, through_batch: bool) -> bool:
    """Whether the walk up from `start` reaches the checkpoint (Claude Code's `Kin`, direct mode).

    Through a batch, reaching the assistant message whose calls the checkpoint answers by way of
    another fragment or another result of that same parallel batch counts too.
    """
    owner, answered, via_hook = _batch_anchor(view, checkpoint) if through_batch else (None, (), False)
    calls = view.record(owner).tool_uses if owner else ()
    owner_record = view.record(owner) if owner else None
    message_id = (
        owner_record.message_id
        if owner_record is not None and owner_record.type == RecordType.ASSISTANT and calls
        else None
    )
    earlier = set(_batch_ancestors(view, owner, message_id)) if owner and message_id else set()
    seen: set[int] = set()
    previous: int | None = None
    in_batch = False
    node = start
    while node and node not in seen:
        if node == checkpoint:
            return True
        seen.add(node)
        record = view.record(node)
        if message_id is not None:
            if in_batch and node == owner:
                return True
            if (
                record.type == RecordType.ASSISTANT
                and node != owner
                and record.message_id == message_id
                and record.tool_uses
            ):
                if node in earlier:
                    return True
                in_batch = True
            elif not _in_batch(record, message_id):
                in_batch = False
        if (
            node == owner
            and previous is not None
            and set(answered) & set(calls)
            and any(
                tool in calls and (len(calls) > 1 if via_hook else tool not in answered)
                for tool in view.record(previous).tool_results
            )
        ):
            return True  # reached the batch's owner from another of its results
        previous, node = node, _parent_row(view, node)
    return False


def _time_keys(view: RowView, lines: Iterable[int]) -> dict[int, int | str]:
    """Each line's `timestamp` as a key that orders as its text does (`or ""`): the index's
    compact stamp (fixed-width digits, so numeric order is the text's) with -1 for none, unless
    some line holds another form; then the text itself, for every line."""
    stamps = {line: view.record(line).stamp for line in lines}
    if all(stamp is None or isinstance(stamp, int) for stamp in stamps.values()):
        return {line: -1 if stamp is None else stamp for line, stamp in stamps.items()}
    return {line: view.record(line).timestamp or "" for line in stamps}


def rows_and_checkpoint_reference(view: RowView) -> tuple[tuple[int, ...], _Checkpoint]:
    """The uuid lines that count as the last row, in file order, and the checkpoint (pure Python)."""
    ordered = tuple(line for line in view.graph.uuid_lines if view.counts_as_last(line))  # one call a row
    return ordered, _checkpoint(view, frozenset(ordered))


def _rows_and_checkpoint(view: RowView) -> tuple[tuple[int, ...], _Checkpoint]:
    """The two whole-file passes, in the Rust core where it is built (`scan.resume_rows`);
    `rows_and_checkpoint_reference` decides what the core hands back, and is what it is held to."""
    if scan.COMPILED:
        uuid_lines = view.graph.uuid_lines.tobytes()
        found = scan.resume_rows(view.index.records, uuid_lines, sidechain=view.sidechain)
        if found is not None:
            ordered, (leaf, pointer_line, explicit, ever, named) = found
            return ordered, _Checkpoint(leaf, pointer_line, explicit, ever, named)
    return rows_and_checkpoint_reference(view)


def _newest_below(view: RowView, rows: frozenset[int], last: int) -> int:
    """The newest row descending from the last one (Claude Code, when no pointer names a leaf)."""
    times = _time_keys(view, rows)
    newest = max(rows, key=lambda line: (times[line], -line))
    if newest == last:
        return last
    below = [line for line in view.descendants(last) if line in rows]
    return max(below, key=lambda line: (times[line], line)) if below else last


def resume_start(index: LineIndex, graph: UuidGraph) -> ResumeStart:
    """Claude Code's choice of the row its leaf is walked up from.

    The effective pointer's record wins unless the session went on below it: when the pointer is
    not explicit and the last row descends from it (directly, or through another call of the
    same parallel batch), the last row wins. Without a pointer naming a record of the file, the
    last row (or, where no pointer ever named a leaf, the newest row below it) is the start.
    """
    view = RowView(index, graph, sidechain=not graph.main_rows)
    ordered, pointer = _rows_and_checkpoint(view)
    last = ordered[-1] if ordered else None
    checkpoint = graph.line_of.get(pointer.leaf) if pointer.leaf else None
    if checkpoint is not None:
        below = (
            not pointer.explicit
            and last is not None
            and last != checkpoint
            and _continues_from(view, last, checkpoint, through_batch=not pointer.ever_explicit)
        )
        return ResumeStart(last if below else checkpoint, checkpoint, pointer.pointer_line, below)
    if last is None:
        return ResumeStart(None, None, pointer.pointer_line, False)
    start = last if pointer.named else _newest_below(view, frozenset(ordered), last)
    return ResumeStart(start, None, pointer.pointer_line, False)
