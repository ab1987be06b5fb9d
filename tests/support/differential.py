"""Sessions to hold a compiled stage to its pure-Python reference on: real, damaged and generated.

The corpus's files (every one indexed as Claude Code, whatever agent wrote it), fuzzed sessions of
every mutation kind (from generated scenarios and corpus files) and a small generated fleet, each
indexed and linked as the job does.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pipeline.core.graph import UuidGraph, build_graph
from pipeline.core.index import LineIndex, build_index
from pipeline.testing.fuzz import Mutation
from pipeline.testing.fuzzing import builder_sources, corpus_sources, fuzz_cases
from pipeline.testing.settings import LIMITS
from pipeline.testing.synth import generate_fleet
from pipeline.vocabulary import SourceFormat

__all__ = ["differential_sessions"]


def _sources(corpus_files: Path, fleet: Path) -> Iterator[tuple[str, bytes]]:
    for path in sorted(corpus_files.iterdir()):
        yield path.name, path.read_bytes()
    sources = builder_sources() | corpus_sources(corpus_files, limit=8)
    cases = fuzz_cases(sources, seed=4242, count=3 * len(Mutation), depth=2_000, huge_bytes=50_000)
    for case in cases:
        yield case.name, case.data
    generate_fleet(fleet, target_bytes=4 << 20, seed=42)
    for path in sorted(fleet.rglob("*.jsonl")):
        yield path.relative_to(fleet).as_posix(), path.read_bytes()


def differential_sessions(corpus_files: Path, fleet: Path) -> Iterator[tuple[str, LineIndex, UuidGraph]]:
    """(name, index, graph) of every session; `fleet` is an empty folder for the generated ones."""
    for name, data in _sources(corpus_files, fleet):
        index = build_index(data, SourceFormat.CLAUDE_CODE, LIMITS)
        yield name, index, build_graph(index)
