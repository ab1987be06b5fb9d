"""The rows the Rust core recovers around a walk equal the pure-Python reference's, line for line.

`with_recovered_rows` (the core's `recover_rows` where built) must give
`with_recovered_rows_reference`'s chain on the corpus, fuzzed damage and a generated fleet, for
the walk up from every uuid line (every leaf Claude Code could resume), with and without a
`below_until` line; and the topology built on it must be the same as the reference's.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from pipeline.core.graph import UuidGraph, build_graph
from pipeline.core.index import LineIndex, build_index
from pipeline.core.topology import resume_chain
from pipeline.core.topology.resume_chain import with_recovered_rows, with_recovered_rows_reference
from pipeline.core.topology.select import AUTO, resolve_topology
from pipeline.formats.claude_code import scan
from pipeline.testing.settings import LIMITS
from pipeline.vocabulary import ChainEnd, SourceFormat
from tests.support.differential import differential_sessions

pytestmark = pytest.mark.skipif(not scan.COMPILED, reason="the compiled core is not built here")


def _walks(index: LineIndex, graph: UuidGraph, rng: random.Random) -> list[tuple[int, ...]]:
    """The walk up from each of up to 40 uuid lines (the last ones always among them)."""
    lines = list(graph.uuid_lines)
    picked = set(lines[-10:]) | set(rng.sample(lines, min(30, len(lines))))
    walks = []
    for line in sorted(picked):
        trace = graph.trace(index, line)
        if trace.end not in (ChainEnd.LOOP, ChainEnd.MALFORMED_PARENT):
            walks.append(trace.lines)
    return walks


def test_corpus_fuzzed_and_generated_walks_recover_identically(corpus_files: Path, tmp_path: Path) -> None:
    recovered = compared = 0
    for name, index, graph in differential_sessions(corpus_files, tmp_path):
        rng = random.Random(name)
        for walk in _walks(index, graph, rng):
            until = rng.choice((None, walk[-1] + 1, len(index)))
            compiled = with_recovered_rows(index, graph, walk, below_until=until)
            assert compiled == with_recovered_rows_reference(index, graph, walk, below_until=until), name
            recovered += len(compiled) > len(walk)
            compared += 1
    assert compared > 1_000 and recovered > 100


def test_the_topology_is_the_same_on_either_path(corpus_files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for path in sorted(corpus_files.iterdir()):
        index = build_index(path.read_bytes(), SourceFormat.CLAUDE_CODE, LIMITS)
        graph = build_graph(index)
        compiled = resolve_topology(index, graph, AUTO)
        with monkeypatch.context() as patch:
            patch.setattr(resume_chain, "with_recovered_rows", with_recovered_rows_reference)
            patch.setattr("pipeline.core.topology.select.with_recovered_rows", with_recovered_rows_reference)
            reference = resolve_topology(index, graph, AUTO)
        assert compiled == reference, path.name
