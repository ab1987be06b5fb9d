"""A transcript's bytes indexed and resolved the way every job sees them, for tests of the core."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.core.graph import UuidGraph, build_graph
from pipeline.core.index import LineIndex, build_index
from pipeline.core.topology.select import AUTO, Topology, TopologyOptions, resolve_topology
from pipeline.formats.claude_code.decode import DecodedRecord
from pipeline.formats.detect import detect_format
from pipeline.testing.settings import LIMITS

__all__ = ["Resolved", "resolve"]


@dataclass(frozen=True, slots=True)
class Resolved:
    """Index, uuid graph and topology of one transcript."""

    data: bytes
    index: LineIndex
    graph: UuidGraph
    topology: Topology

    @property
    def chain(self) -> tuple[int, ...]:
        """The active chain's lines, root to leaf."""
        return self.topology.chain

    def record(self, line: int) -> DecodedRecord:
        """The decoded record of a line that holds one."""
        record = self.index.record(line)
        assert record is not None, f"line {line} holds no record"
        return record


def resolve(data: bytes, options: TopologyOptions = AUTO) -> Resolved:
    """Index `data`, build its graph and choose its chain under `options` (Claude Code's own by default)."""
    index = build_index(data, detect_format(data), LIMITS)
    graph = build_graph(index)
    return Resolved(data, index, graph, resolve_topology(index, graph, options))
