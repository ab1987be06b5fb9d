"""Claude Code's own resume rule, for files whose pointer names no leaf.

Claude Code resumes from the newest leaf of the main conversation, walks `parentUuid` back to a
root (a compact boundary is a root), and pulls back the fragments and results of parallel tool
calls that hang off the walk as side branches. This module reproduces that choice so the active
chain ends exactly where Claude Code's context ends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pipeline.graph import UuidGraph
from pipeline.index import LineIndex
from pipeline.vocabulary import ChainEnd

__all__ = ["ResumeChain", "claude_code_chain"]

_CONVERSATION_TYPES: Final = frozenset({"user", "assistant", "system", "attachment", "progress"})


@dataclass(frozen=True, slots=True)
class ResumeChain:
    """The inferred leaf, the pure parent walk and the chain with recovered siblings."""

    leaf_line: int | None
    walk: tuple[int, ...]
    chain: tuple[int, ...]
    chain_end: ChainEnd | None
    external_parent: str | None
    refusal: str | None


def _candidate_leaves(index: LineIndex, graph: UuidGraph) -> list[int]:
    lines = [n for n in graph.uuid_lines if n not in graph.children]
    main = [n for n in lines if not index.record(n).sidechain]  # type: ignore[union-attr]
    return main or lines  # a subagent transcript is all sidechain: it is its own main line


def _newest(index: LineIndex, lines: list[int]) -> int | None:
    """The leaf with the latest timestamp; physical order breaks ties and missing timestamps."""
    conversational = [n for n in lines if index.record(n).type in _CONVERSATION_TYPES]  # type: ignore[union-attr]
    pool = conversational or lines
    if not pool:
        return None
    return max(pool, key=lambda n: (index.record(n).timestamp or "", n))  # type: ignore[union-attr]


def _recover_siblings(index: LineIndex, graph: UuidGraph, walk: tuple[int, ...]) -> set[int]:
    """Parallel tool-call fragments and their results hanging off the walk."""
    on_walk = set(walk)
    message_ids = {r.message_id for n in walk if (r := index.record(n)) is not None and r.message_id}
    recovered: set[int] = set()
    pending = list(walk)
    calls: set[str] = {tool for n in walk if (r := index.record(n)) is not None for tool in r.tool_uses}
    while pending:
        for child in graph.children.get(pending.pop(), ()):
            if child in on_walk or child in recovered:
                continue
            record = index.record(child)
            if record is None or record.sidechain != index.record(walk[-1]).sidechain:  # type: ignore[union-attr]
                continue
            sibling_fragment = record.type == "assistant" and record.message_id in message_ids
            answers_call = bool(record.tool_results) and set(record.tool_results) <= calls
            if sibling_fragment or answers_call:
                recovered.add(child)
                calls.update(record.tool_uses)
                pending.append(child)
    return recovered


def _merge(walk: tuple[int, ...], extra: set[int]) -> tuple[int, ...]:
    """Insert recovered lines among the walk by physical position, keeping the walk's order."""
    if not extra:
        return walk
    if list(walk) == sorted(walk):
        return tuple(sorted(set(walk) | extra))
    merged = list(walk)
    for line in sorted(extra):
        positions = [i for i, existing in enumerate(merged) if existing > line]
        merged.insert(positions[0] if positions else len(merged), line)
    return tuple(merged)


def claude_code_chain(index: LineIndex, graph: UuidGraph) -> ResumeChain:
    """Infer the leaf and build the chain Claude Code would resume."""
    leaf = _newest(index, _candidate_leaves(index, graph))
    if leaf is None:
        return ResumeChain(None, (), (), None, None, "no-candidate-leaf")
    trace = graph.trace(index, leaf)
    if trace.end is ChainEnd.LOOP:
        return ResumeChain(leaf, trace.lines, (), trace.end, None, "chain-loop")
    if trace.end is ChainEnd.MALFORMED_PARENT:
        return ResumeChain(leaf, trace.lines, (), trace.end, None, "chain-malformed-parent")
    chain = _merge(trace.lines, _recover_siblings(index, graph, trace.lines))
    return ResumeChain(leaf, trace.lines, chain, trace.end, trace.missing_uuid, None)

