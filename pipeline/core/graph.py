"""The uuid graph of one transcript: who is whose parent, computed once from the index.

Topology, validation and planning all walk this graph; none of them re-derives it. Lines are
kept in flat integer arrays (a giant session has hundreds of thousands): a tuple of Python ints
and a dict of child tuples cost about a quarter of the session's size again.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from pipeline.core.index import LineIndex
from pipeline.formats.claude_code import scan
from pipeline.vocabulary import ChainEnd

__all__ = ["ChainTrace", "Children", "UuidGraph", "build_graph", "build_graph_reference"]

_NO_LINE: Final = 0
COMPILED_ENDS: Final = (
    ChainEnd.ROOT,
    ChainEnd.COMPACT_BOUNDARY,
    ChainEnd.EXTERNAL_PARENT,
    ChainEnd.LOOP,
    ChainEnd.MALFORMED_PARENT,
)
"""How a walk ended, by the number the Rust core's `trace_chain` gives (`rust/src/graph.rs`)."""


@dataclass(frozen=True, slots=True)
class ChainTrace:
    """A walk from a leaf towards the root along `parentUuid`, in root-to-leaf order."""

    lines: tuple[int, ...]
    end: ChainEnd
    missing_uuid: str | None = None  # the parent that is not in the file
    loop_uuid: str | None = None
    malformed_line: int | None = None  # the record whose parentUuid is not a string or null


class Children(Mapping[int, tuple[int, ...]]):
    """Lines whose parentUuid is a line's uuid, in physical order, by that line (lines with children only).

    Stored flat: the children of line n are `kids[starts[n - 1] : starts[n]]`.
    """

    __slots__ = ("_kids", "_starts")

    def __init__(self, starts: array[int], kids: array[int]) -> None:
        self._starts, self._kids = starts, kids

    def __getitem__(self, line: int) -> tuple[int, ...]:
        if not 0 < line < len(self._starts):
            raise KeyError(line)
        first, end = self._starts[line - 1], self._starts[line]
        if first == end:
            raise KeyError(line)
        return tuple(self._kids[first:end])

    def get(self, line: int, default: tuple[int, ...] = ()) -> tuple[int, ...]:  # type: ignore[override]
        """A line's children, or `default`: `Mapping.get` without the KeyError it costs a
        childless line (the topology walks ask for every line of the chain)."""
        starts = self._starts
        if not 0 < line < len(starts):
            return default
        first, end = starts[line - 1], starts[line]
        return tuple(self._kids[first:end]) if first != end else default

    def tables(self) -> tuple[bytes, bytes]:
        """The flat starts and children as native int64 bytes (what the Rust core reads)."""
        return self._starts.tobytes(), self._kids.tobytes()

    def __iter__(self) -> Iterator[int]:
        starts = self._starts
        return (line for line in range(1, len(starts)) if starts[line] > starts[line - 1])

    def __len__(self) -> int:
        return sum(1 for _ in self)


@dataclass(frozen=True, slots=True)
class UuidGraph:
    """Lines by uuid, parents by line, and children by line for one transcript."""

    line_of: MappingProxyType[str, int]  # first line carrying each uuid
    duplicates: tuple[str, ...]
    parent_line: array[int]  # by line - 1; 0: no parent in the file (root, dangling or malformed)
    children: Children  # lines whose parentUuid is this line's uuid
    uuid_lines: array[int]  # every line carrying a uuid, in physical order
    main_rows: bool  # some uuid line is not a sidechain record; else a subagent's file (or none)

    def parent_of(self, line: int) -> int:
        """Line of a line's parent record, or 0."""
        return self.parent_line[line - 1]

    def trace(self, index: LineIndex, leaf_line: int) -> ChainTrace:
        """Walk parents from a leaf until a root, a missing parent, a loop or a malformed link.

        The Rust core walks where it is built (`scan.trace_chain`, over `parent_line`);
        `trace_reference` is what it is held to, and decides a walk the core hands back.
        """
        if scan.COMPILED:
            walked = scan.trace_chain(index.records, self.parent_line.tobytes(), leaf_line)
            if walked is not None:
                return _compiled_trace(index, *walked)
        return self.trace_reference(index, leaf_line)

    def trace_reference(self, index: LineIndex, leaf_line: int) -> ChainTrace:
        """The pure-Python walk: the reference the compiled one is held to."""
        walked: list[int] = []
        seen: set[int] = set()
        line = leaf_line
        while True:
            if line in seen:
                record = index.record(line)
                return ChainTrace(
                    tuple(reversed(walked)), ChainEnd.LOOP, loop_uuid=record.uuid if record else None
                )
            seen.add(line)
            walked.append(line)
            record = index.record(line)
            assert record is not None  # only record lines are graph nodes
            if record.parent_malformed:
                return ChainTrace(tuple(reversed(walked)), ChainEnd.MALFORMED_PARENT, malformed_line=line)
            if record.parent is None:
                end = ChainEnd.COMPACT_BOUNDARY if record.compact_boundary else ChainEnd.ROOT
                return ChainTrace(tuple(reversed(walked)), end)
            parent = self.line_of.get(record.parent, _NO_LINE)
            if parent == _NO_LINE:
                return ChainTrace(
                    tuple(reversed(walked)), ChainEnd.EXTERNAL_PARENT, missing_uuid=record.parent
                )
            line = parent


def _compiled_trace(index: LineIndex, lines: tuple[int, ...], end: int, at: int) -> ChainTrace:
    """The core's walk as a ChainTrace: the ids named by the line that ended it are read here."""
    kind = COMPILED_ENDS[end]
    if kind is ChainEnd.LOOP:
        record = index.record(at)
        return ChainTrace(lines, kind, loop_uuid=record.uuid if record else None)
    if kind is ChainEnd.MALFORMED_PARENT:
        return ChainTrace(lines, kind, malformed_line=at)
    if kind is ChainEnd.EXTERNAL_PARENT:
        return ChainTrace(lines, kind, missing_uuid=index.entry(at).parent)
    return ChainTrace(lines, kind)


def build_graph(index: LineIndex) -> UuidGraph:
    """Index uuids and parent links of every record line.

    The Rust core links them where it is built (`scan.link_lines`), the reference's loops compiled;
    `build_graph_reference` is what it is held to, field for field.
    """
    if not scan.COMPILED:
        return build_graph_reference(index)
    line_of, duplicates, parents, starts, kids, uuid_lines, main_rows = scan.link_lines(index.records)
    return UuidGraph(
        line_of=MappingProxyType(line_of),
        duplicates=duplicates,
        parent_line=_int64(parents),
        children=Children(_int64(starts), _int64(kids)),
        uuid_lines=_int64(uuid_lines),
        main_rows=main_rows,
    )


def _int64(raw: bytes) -> array[int]:
    values: array[int] = array("q")
    values.frombytes(raw)
    return values


def build_graph_reference(index: LineIndex) -> UuidGraph:
    """The pure-Python graph: the reference the compiled one is held to."""
    line_of: dict[str, int] = {}
    duplicates: set[str] = set()
    uuid_lines: list[int] = []
    main_rows = False
    for number, record in enumerate(index.records, 1):
        if record is not None and (uuid := record.uuid) is not None:
            if uuid in line_of:  # the first line keeps the uuid; the rest only make it a duplicate
                duplicates.add(uuid)
            else:
                line_of[uuid] = number
            uuid_lines.append(number)
            main_rows = main_rows or not record.sidechain
    parent_line = array("q", bytes(8 * len(index)))  # _NO_LINE everywhere
    counts = array("q", bytes(8 * (len(index) + 1)))
    for number, record in enumerate(index.records, 1):
        if record is None or record.parent is None:
            continue
        parent = line_of.get(record.parent, _NO_LINE)
        parent_line[number - 1] = parent
        if parent != _NO_LINE:
            counts[parent] += 1
    return UuidGraph(
        line_of=MappingProxyType(line_of),
        duplicates=tuple(sorted(duplicates)),
        parent_line=parent_line,
        children=_children(parent_line, counts),
        uuid_lines=array("q", uuid_lines),
        main_rows=main_rows,
    )


def _children(parent_line: array[int], counts: array[int]) -> Children:
    """The children table of a parent array: starts by prefix sums of the counts, then a fill pass."""
    starts = array("q", bytes(8 * len(counts)))
    total = 0
    for line in range(1, len(counts)):
        total += counts[line]
        starts[line] = total
    kids = array("q", bytes(8 * total))
    filled = array("q", starts)  # where the next child of each line goes (shifted by one)
    for number, parent in enumerate(parent_line, 1):
        if parent != _NO_LINE:
            kids[filled[parent - 1]] = number
            filled[parent - 1] += 1
    return Children(starts, kids)
