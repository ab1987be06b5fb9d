"""Claude Code's own resume rule, for files whose pointer names no leaf.

Claude Code (2.1.x) takes the physically last conversation row (user, assistant, attachment or
system, not a sidechain), walks up to its nearest user/assistant ancestor (the leaf), walks
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

from pipeline.formats.claude_code import DecodedRecord
from pipeline.graph import UuidGraph
from pipeline.index import LineIndex
from pipeline.vocabulary import ChainEnd

__all__ = ["ResumeChain", "claude_code_chain", "with_recovered_rows"]

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
    refusal: str | None


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
            and not (record.type == "system" and record.subtype == "file_snapshot")
            and not (record.type == "attachment" and record.subtype == "fork_briefing")
        )

    def bridged_children(self, line: int) -> list[tuple[int, tuple[int, ...]]]:
        """Children of a row with progress rows passed through: (child, progress lines crossed)."""
        found: list[tuple[int, tuple[int, ...]]] = []
        pending: list[tuple[int, tuple[int, ...]]] = [(line, ())]
        while pending:
            node, via = pending.pop()
            for child in self.graph.children.get(node, ()):
                if self.record(child).type == "progress":
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


def _start_row(view: _View, pointer_named: bool) -> int | None:
    """The last conversation row, or the newest row descending from it (Claude Code's `Ei`)."""
    rows = [line for line in view.graph.uuid_lines if view.counts_as_last(line)]
    if not rows:
        return None
    last = rows[-1]
    newest = max(rows, key=lambda line: (view.record(line).timestamp or "", -line))
    if pointer_named or newest == last:
        return last
    below = [line for line in view.descendants(last) if line in set(rows)]
    return max(below, key=lambda line: (view.record(line).timestamp or "", line)) if below else last


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
        record.type == "attachment"
        or (record.type == "system" and not record.compact_boundary)
        or (record.type == "user" and record.meta and not record.tool_results)
    )


def _side_tail(view: _View, start: int, taken: set[int]) -> list[int]:
    """A linear run of side rows that ends without continuing into a real message, or nothing."""
    run, line = [], start
    while True:
        record = view.record(line)
        if record.type != "progress" and not _is_side_row(record):
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
        mid for n in walk if view.record(n).type == "assistant" and (mid := view.record(n).message_id)
    }
    uses: dict[str, str] = {}  # tool id -> message id
    for line in view.graph.uuid_lines:
        record = view.record(line)
        if record.type == "assistant" and record.message_id in message_ids:
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
            if record.type == "assistant" and record.message_id in message_ids:
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


def claude_code_chain(index: LineIndex, graph: UuidGraph, *, pointer_named: bool = False) -> ResumeChain:
    """Infer the leaf and build the chain Claude Code would resume."""
    main_rows = [n for n in graph.uuid_lines if not index.record(n).sidechain]  # type: ignore[union-attr]
    view = _View(index, graph, sidechain=not main_rows)
    start = _start_row(view, pointer_named)
    leaf = _walk_up_to_message(view, start) if start else None
    if leaf is None:
        return ResumeChain(None, (), (), None, None, "no-candidate-leaf")
    trace = graph.trace(index, leaf)
    if trace.end is ChainEnd.LOOP:
        return ResumeChain(leaf, trace.lines, (), trace.end, None, "chain-loop")
    if trace.end is ChainEnd.MALFORMED_PARENT:
        return ResumeChain(leaf, trace.lines, (), trace.end, None, "chain-malformed-parent")
    chain = with_recovered_rows(index, graph, trace.lines)
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
