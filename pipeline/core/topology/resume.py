"""Claude Code's own resume rule: where its leaf is, and the chain it rebuilds from there.

Claude Code (2.1.332) replays the file's `last-prompt` pointers into one checkpoint and starts
from the record it names, unless the session went on below it (the pointer is not explicit and
the physically last conversation row, user, assistant, attachment or system and not a sidechain,
descends from it): then, as without a usable pointer, it starts from that last row. It walks up
to the nearest user/assistant ancestor (the leaf), walks
`parentUuid` back to a root (a compact boundary is a root), pulls back the fragments, results
and dangling side rows of parallel tool calls that hang off the walk, and appends the system and
attachment rows below the leaf. `progress` rows are transparent bridges between a row and its
parent. A subagent transcript (sidechain rows only) is its own main line, as when Claude Code
resumes a transcript by path. This reproduces the choice so the active chain ends exactly where
Claude Code's context ends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pipeline.core.graph import UuidGraph
from pipeline.core.index import LineIndex
from pipeline.formats.claude_code.decode import DecodedRecord
from pipeline.reasons import TopologyRefusal
from pipeline.vocabulary import ChainEnd, PointerState, RecordType

__all__ = ["ResumeChain", "ResumeStart", "claude_code_chain", "resume_start", "with_recovered_rows"]

_ROW_TYPES: Final = frozenset({"user", "assistant", "attachment", "system"})
_MESSAGE_TYPES: Final = frozenset({"user", "assistant"})


@dataclass(frozen=True, slots=True)
class ResumeChain:
    """The inferred leaf, the pure parent walk and the chain with recovered rows."""

    leaf_line: int | None
    walk: tuple[int, ...]
    chain: tuple[int, ...]
    chain_end: ChainEnd | None
    external_parent: str | None
    refusal: TopologyRefusal | None


class _View:
    """Graph helpers that see through progress rows, bound to one transcript."""

    def __init__(self, index: LineIndex, graph: UuidGraph, sidechain: bool) -> None:
        self.index = index
        self.graph = graph
        self.sidechain = sidechain
        self._records = index.records

    def record(self, line: int) -> DecodedRecord:
        """The record on a graph node's line (every line the walk visits holds one)."""
        return self._records[line - 1]  # type: ignore[return-value]

    def is_row(self, line: int) -> bool:
        record = self.record(line)
        return record.type in _ROW_TYPES and record.sidechain == self.sidechain

    def counts_as_last(self, line: int) -> bool:
        record = self.record(line)
        return (
            self.is_row(line)
            and not (record.type == RecordType.SYSTEM and record.subtype == "file_snapshot")
            and not (record.type == RecordType.ATTACHMENT and record.subtype == "fork_briefing")
        )

    def bridged_children(self, line: int) -> list[tuple[int, tuple[int, ...]]]:
        """Children of a row with progress rows passed through: (child, progress lines crossed)."""
        found: list[tuple[int, tuple[int, ...]]] = []
        pending: list[tuple[int, tuple[int, ...]]] = [(line, ())]
        while pending:
            node, via = pending.pop()
            for child in self.graph.children.get(node, ()):
                if self.record(child).type == RecordType.PROGRESS:
                    pending.append((child, (*via, child)))
                else:
                    found.append((child, via))
        return sorted(found)

    def descendants(self, line: int) -> set[int]:
        seen: set[int] = set()
        pending = [line]
        while pending:
            for child in self.graph.children.get(pending.pop(), ()):
                if child not in seen:
                    seen.add(child)
                    pending.append(child)
        return seen


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


def _checkpoint(view: _View) -> _Checkpoint:
    """Replay the pointers: a compact boundary forgets the checkpoint, a pointer naming `null`
    with `explicit: true` clears it, and a row written after a pointer makes it not explicit."""
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
        if record.uuid is not None and view.counts_as_last(line):
            explicit = False
        if record.compact_boundary:
            leaf, pointer_line, explicit, ever = None, None, False, False
    return _Checkpoint(leaf, pointer_line, explicit, ever, named)


def _parent_row(view: _View, line: int) -> int:
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


def _batch_ancestors(view: _View, line: int, message_id: str | None) -> list[int]:
    found: list[int] = []
    seen = {line}
    node = _parent_row(view, line)
    while node and node not in seen and _in_batch(view.record(node), message_id):
        seen.add(node)
        found.append(node)
        node = _parent_row(view, node)
    return found


def _batch_anchor(view: _View, checkpoint: int) -> tuple[int | None, tuple[str, ...], bool]:
    """(the fragment whose calls the checkpoint answers, the call ids it answers, via a hook)."""
    seen: set[int] = set()
    top: int | None = None
    node = checkpoint
    while node and node not in seen and _is_side_row(view.record(node)):
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


def _continues_from(view: _View, start: int, checkpoint: int, *, through_batch: bool) -> bool:
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


def _last_row(view: _View) -> int | None:
    rows = [line for line in view.graph.uuid_lines if view.counts_as_last(line)]
    return rows[-1] if rows else None


def _newest_below(view: _View, last: int) -> int:
    """The newest row descending from the last one (Claude Code, when no pointer names a leaf)."""
    rows = {line for line in view.graph.uuid_lines if view.counts_as_last(line)}
    newest = max(rows, key=lambda line: (view.record(line).timestamp or "", -line))
    if newest == last:
        return last
    below = [line for line in view.descendants(last) if line in rows]
    return max(below, key=lambda line: (view.record(line).timestamp or "", line)) if below else last


def resume_start(index: LineIndex, graph: UuidGraph) -> ResumeStart:
    """Claude Code's choice of the row its leaf is walked up from.

    The effective pointer's record wins unless the session went on below it: when the pointer is
    not explicit and the last row descends from it (directly, or through another call of the
    same parallel batch), the last row wins. Without a pointer naming a record of the file, the
    last row (or, where no pointer ever named a leaf, the newest row below it) is the start.
    """
    main_rows = [n for n in graph.uuid_lines if not index.entry(n).sidechain]
    view = _View(index, graph, sidechain=not main_rows)
    pointer = _checkpoint(view)
    last = _last_row(view)
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
    start = last if pointer.named else _newest_below(view, last)
    return ResumeStart(start, None, pointer.pointer_line, False)


def _walk_up_to_message(view: _View, line: int) -> int | None:
    seen: set[int] = set()
    while line and line not in seen:
        seen.add(line)
        if view.record(line).type in _MESSAGE_TYPES:
            return line
        line = view.graph.parent_of(line)
    return None


def _is_side_row(record: DecodedRecord) -> bool:
    return (
        record.type == RecordType.ATTACHMENT
        or (record.type == RecordType.SYSTEM and not record.compact_boundary)
        or (record.type == RecordType.USER and record.meta and not record.tool_results)
    )


def _side_tail(view: _View, start: int, taken: set[int]) -> list[int]:
    """A linear run of side rows that ends without continuing into a real message, or nothing."""
    run, line = [], start
    while True:
        record = view.record(line)
        if record.type != RecordType.PROGRESS and not _is_side_row(record):
            return []
        run.append(line)
        children = [c for c in view.graph.children.get(line, ()) if c not in taken]
        if not children:
            return run
        if len(children) > 1:
            return []
        line = children[0]


def _recover(view: _View, walk: tuple[int, ...]) -> set[int]:
    """Parallel-call fragments, their results and dangling side tails hanging off the walk."""
    chain = set(walk)
    recovered: set[int] = set()
    message_ids = {
        mid
        for n in walk
        if view.record(n).type == RecordType.ASSISTANT and (mid := view.record(n).message_id)
    }
    uses: dict[str, str] = {}  # tool id -> message id
    for line in view.graph.uuid_lines:
        record = view.record(line)
        if record.type == RecordType.ASSISTANT and record.message_id in message_ids:
            uses.update((tool, record.message_id) for tool in record.tool_uses if record.message_id)
    answered = {tool for n in walk for tool in view.record(n).tool_results}

    def admit(line: int, via: tuple[int, ...]) -> None:
        recovered.add(line)
        recovered.update(via)

    pending = list(walk)
    while pending:
        node = pending.pop()
        for child, via in view.bridged_children(node):
            if child in chain or child in recovered or view.record(child).sidechain != view.sidechain:
                continue
            record = view.record(child)
            if record.type == RecordType.ASSISTANT and record.message_id in message_ids:
                admit(child, via)
                pending.append(child)
            elif (
                record.tool_results
                and all(uses.get(t) in message_ids for t in record.tool_results)
                and not set(record.tool_results) & answered
            ):
                admit(child, via)
                answered.update(record.tool_results)
                pending.append(child)
            elif (
                view.record(node).type in ("assistant", "user")
                and (view.record(node).tool_uses or view.record(node).tool_results)
                and (tail := _side_tail(view, child, chain | recovered))
            ):
                recovered.update(tail)
                recovered.update(via)
    return recovered


def _below_leaf(view: _View, leaf: int, taken: set[int]) -> list[int]:
    """System, attachment and progress rows below the leaf, pre-order (Claude Code's `bRr`)."""
    found: list[int] = []
    pending = [leaf]
    while pending:
        node = pending.pop()
        children = [
            c
            for c in view.graph.children.get(node, ())
            if c not in taken
            and view.record(c).type not in _MESSAGE_TYPES
            and view.record(c).sidechain == view.sidechain
        ]
        children.sort(key=lambda c: (view.record(c).timestamp or "", c), reverse=True)
        for child in children:
            taken.add(child)
            found.append(child)
            pending.append(child)
    return found


def _merge(walk: tuple[int, ...], extra: set[int]) -> tuple[int, ...]:
    """Insert recovered lines among the walk by physical position, keeping the walk's order."""
    if not extra:
        return walk
    if list(walk) == sorted(walk):
        return tuple(sorted(set(walk) | extra))
    merged = list(walk)
    for line in sorted(extra):
        after = next((i for i, existing in enumerate(merged) if existing > line), len(merged))
        merged.insert(after, line)
    return tuple(merged)


def claude_code_chain(
    index: LineIndex, graph: UuidGraph, start: int | None, *, below_until: int | None = None
) -> ResumeChain:
    """The leaf Claude Code walks up to from `start` (see `resume_start`) and the chain it resumes.

    `below_until` is passed on to `with_recovered_rows` when a pointer names the leaf.
    """
    main_rows = [n for n in graph.uuid_lines if not index.entry(n).sidechain]
    view = _View(index, graph, sidechain=not main_rows)
    leaf = _walk_up_to_message(view, start) if start else None
    if leaf is None:
        return ResumeChain(None, (), (), None, None, TopologyRefusal.NO_CANDIDATE_LEAF)
    trace = graph.trace(index, leaf)
    if trace.end is ChainEnd.LOOP:
        return ResumeChain(leaf, trace.lines, (), trace.end, None, TopologyRefusal.CHAIN_LOOP)
    if trace.end is ChainEnd.MALFORMED_PARENT:
        return ResumeChain(leaf, trace.lines, (), trace.end, None, TopologyRefusal.CHAIN_MALFORMED_PARENT)
    chain = with_recovered_rows(index, graph, trace.lines, below_until=below_until)
    return ResumeChain(leaf, trace.lines, chain, trace.end, trace.missing_uuid, None)


def with_recovered_rows(
    index: LineIndex, graph: UuidGraph, walk: tuple[int, ...], *, below_until: int | None = None
) -> tuple[int, ...]:
    """A parent walk plus what Claude Code pulls back: parallel-call rows, and rows below the leaf.

    `below_until` keeps only rows below the leaf that lie physically before that line (a pointer
    names the leaf; what was written after it is not part of the selected state).
    """
    if not walk:
        return walk
    view = _View(index, graph, sidechain=bool(index.record(walk[-1]).sidechain))  # type: ignore[union-attr]
    chain = list(_merge(walk, _recover(view, walk)))
    below = _below_leaf(view, walk[-1], set(chain))
    chain.extend(line for line in below if below_until is None or line < below_until)
    return tuple(chain)
