"""Plant damage in the recent tail of a session, where a compaction keeps it and `repair` must act.

For tests and benchmarks of `compaction repair`: each pairing defect of `fuzz.PAIRING` at the
latest tool result of the protected last round where the validator sees it (a dropped result of
a parallel batch is only a partial answer, a reused id of a rewound call no duplicate), a torn
final line, and a parent link broken near the middle of the chain.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

import orjson

from pipeline.core.graph import build_graph
from pipeline.core.index import build_index
from pipeline.core.plan import protected_round_of
from pipeline.core.topology.select import AUTO, Topology, resolve_topology
from pipeline.core.validate.checks import validate
from pipeline.formats.detect import detect_format
from pipeline.testing.fuzz import PAIRING, Mutation, plant, result_lines
from pipeline.testing.settings import LIMITS
from pipeline.vocabulary import Severity

__all__ = ["MISSING_PARENT", "TORN_BYTES", "break_link", "tail_plants", "torn_tail"]

TORN_BYTES: Final = 40  # cut from the end: inside the last record, as a crash mid-append leaves it
MISSING_PARENT: Final = "00000000-dead-4bad-8bad-000000000000"
SEEN: Final = {
    Mutation.DROPPED_RESULT: "tool-use-not-followed-by-user",
    Mutation.DUPLICATED_TOOL_ID: "tool-use-id-duplicate",
    Mutation.RESULT_NOT_FIRST: "tool-result-not-first",
    Mutation.ORPHAN_RESULT: "tool-result-mismatch",
}


def _resolved(data: bytes) -> tuple[Topology, set[str]]:
    index = build_index(data, detect_format(data), LIMITS)
    graph = build_graph(index)
    topology = resolve_topology(index, graph, AUTO)
    findings = validate(index, graph, topology.chain, data).findings
    return topology, {f.code.value for f in findings if f.severity is Severity.ERROR}


def tail_plants(data: bytes) -> Iterator[tuple[Mutation, int, bytes]]:
    """(kind, line, damaged bytes) for each pairing defect the recent tail of `data` can take."""
    topology, _ = _resolved(data)
    chain = topology.chain
    if not chain:
        return
    index = build_index(data, detect_format(data), LIMITS)
    protected = set(chain[protected_round_of(index, chain).start :])
    sites = [line for line in result_lines(data) if line in protected][::-1]
    for kind in PAIRING:
        for site in sites:
            damaged = plant(data, kind, site)
            if damaged != data and SEEN[kind] in _resolved(damaged)[1]:
                yield kind, site, damaged
                break


def torn_tail(data: bytes) -> bytes:
    """The file cut inside its last record."""
    return data[: max(0, len(data.rstrip(b"\n")) - TORN_BYTES)]


def break_link(data: bytes) -> tuple[bytes, int] | None:
    """A user prompt near the middle of the chain naming a parent never written, whose true parent
    is not the record just before it (Claude Code then resumes from the break only)."""
    topology, _ = _resolved(data)
    index = build_index(data, detect_format(data), LIMITS)
    graph = build_graph(index)
    chain = topology.chain
    for line in (*chain[len(chain) // 2 :], *chain[1 : len(chain) // 2][::-1]):  # the middle first
        record = index.entry(line)
        if (
            record.type != "user"
            or "T" not in record.blocks
            or record.meta
            or graph.parent_of(line) == line - 1
        ):
            continue
        lines = data.split(b"\n")
        value = orjson.loads(lines[line - 1])
        value["parentUuid"] = MISSING_PARENT
        lines[line - 1] = orjson.dumps(value)
        return b"\n".join(lines), line
    return None
