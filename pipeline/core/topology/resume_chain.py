"""Claude Code's resume rule: the chain it rebuilds from the leaf it walks up to.

From the start row (`checkpoint.py`) Claude Code walks up to the nearest user/assistant ancestor
(the leaf), walks `parentUuid` back to a root (a compact boundary is a root), pulls back the
fragments, results and dangling side rows of parallel tool calls that hang off the walk, and
appends the system and attachment rows below the leaf. This reproduces the choice so the active
chain ends exactly where Claude Code's context ends.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.core.graph import UuidGraph
from pipeline.core.index import LineIndex
from pipeline.core.topology.rows import MESSAGE_TYPES, RowView, is_side_row
from pipeline.formats.claude_code import scan
from pipeline.reasons import TopologyRefusal
from pipeline.vocabulary import ChainEnd, RecordType

__all__ = ["ResumeChain", "claude_code_chain", "with_recovered_rows", "with_recovered_rows_reference"]


@dataclass(frozen=True, slots=True)
class ResumeChain:
    """The inferred leaf, the pure parent walk and the chain with recovered rows."""

    leaf_line: int | None
    walk: tuple[int, ...]
    chain: tuple[int, ...]
    chain_end: ChainEnd | None
    external_parent: str | None
    refusal: TopologyRefusal | None


def _walk_up_to_message(view: RowView, line: int) -> int | None:
    seen: set[int] = set()
    while line and line not in seen:
        seen.add(line)
        if view.record(line).type in MESSAGE_TYPES:
            return line
        line = view.graph.parent_of(line)
    return None


def _side_tail(view: RowView, start: int, taken: set[int]) -> list[int]:
    """A linear run of side rows that ends without continuing into a real message, or nothing."""
    run, line = [], start
    while True:
        record = view.record(line)
        if record.type != RecordType.PROGRESS and not is_side_row(record):
            return []
        run.append(line)
        children = [c for c in view.graph.children.get(line, ()) if c not in taken]
        if not children:
            return run
        if len(children) > 1:
            return []
        line = children[0]


def _recover(view: RowView, walk: tuple[int, ...]) -> set[int]:
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


def _below_leaf(view: RowView, leaf: int, taken: set[int]) -> list[int]:
    """System, attachment and progress rows below the leaf, pre-order (Claude Code's `bRr`)."""
    found: list[int] = []
    pending = [leaf]
    while pending:
        node = pending.pop()
        children = [
            c
            for c in view.graph.children.get(node, ())
            if c not in taken
            and view.record(c).type not in MESSAGE_TYPES
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
    view = RowView(index, graph, sidechain=not graph.main_rows)
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
    names the leaf; what was written after it is not part of the selected state). The Rust core
    builds it where it is built (`scan.recover_rows`: the same rules, compiled);
    `with_recovered_rows_reference` is what it is held to, and decides what the core hands back.
    """
    if not walk:
        return walk
    if scan.COMPILED:
        tables = (*graph.children.tables(), graph.uuid_lines.tobytes())
        chain = scan.recover_rows(index.records, tables, walk, below_until)
        if chain is not None:
            return chain
    return with_recovered_rows_reference(index, graph, walk, below_until=below_until)


def with_recovered_rows_reference(
    index: LineIndex, graph: UuidGraph, walk: tuple[int, ...], *, below_until: int | None = None
) -> tuple[int, ...]:
    """The pure-Python recovery: the reference the compiled one is held to."""
    if not walk:
        return walk
    view = RowView(index, graph, sidechain=bool(index.record(walk[-1]).sidechain))  # type: ignore[union-attr]
    chain = list(_merge(walk, _recover(view, walk)))
    below = _below_leaf(view, walk[-1], set(chain))
    chain.extend(line for line in below if below_until is None or line < below_until)
    return tuple(chain)
