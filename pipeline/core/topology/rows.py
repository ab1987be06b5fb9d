"""Claude Code's view of a transcript's rows: which rows are conversation, and the links between.

`progress` rows are transparent bridges between a row and its parent; a subagent transcript
(sidechain rows only) is its own main line.
"""

from __future__ import annotations

from typing import Final

from pipeline.core.graph import UuidGraph
from pipeline.core.index import LineIndex
from pipeline.formats.claude_code.decode import DecodedRecord
from pipeline.vocabulary import RecordType

__all__ = ["MESSAGE_TYPES", "RowView", "is_side_row"]

ROW_TYPES: Final = frozenset(
    {RecordType.USER, RecordType.ASSISTANT, RecordType.ATTACHMENT, RecordType.SYSTEM}
)
MESSAGE_TYPES: Final = frozenset({RecordType.USER, RecordType.ASSISTANT})


class RowView:
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
        return record.type in ROW_TYPES and record.sidechain == self.sidechain

    def counts_as_last(self, line: int) -> bool:
        record = self._records[line - 1]  # `is_row` inlined: this runs for every row, several times
        kind = record.type  # type: ignore[union-attr]
        if kind not in ROW_TYPES or record.sidechain != self.sidechain:  # type: ignore[union-attr]
            return False
        subtype = record.subtype  # type: ignore[union-attr]
        return not (
            (kind == RecordType.SYSTEM and subtype == "file_snapshot")
            or (kind == RecordType.ATTACHMENT and subtype == "fork_briefing")
        )

    def bridged_children(self, line: int) -> list[tuple[int, tuple[int, ...]]]:
        """Children of a row with progress rows passed through: (child, progress lines crossed)."""
        children = self.graph.children.get(line, ())
        records = self._records
        if all(records[child - 1].type != RecordType.PROGRESS for child in children):  # type: ignore[union-attr]
            return [(child, ()) for child in children]  # the common case: children are in line order
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


def is_side_row(record: DecodedRecord) -> bool:
    return (
        record.type == RecordType.ATTACHMENT
        or (record.type == RecordType.SYSTEM and not record.compact_boundary)
        or (record.type == RecordType.USER and record.meta and not record.tool_results)
    )
