"""The uuid graph the Rust core links equals the pure-Python reference's, part for part.

`build_graph` (the core's `link_lines` where built) must give `build_graph_reference`'s lines by
uuid, duplicates, parents, children and uuid lines on every corpus file, every kind of fuzzed
damage and the links that break a chain (duplicates, loops, dangling, empty and surrogate ids).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from pipeline.core.graph import UuidGraph, build_graph, build_graph_reference
from pipeline.core.index import build_index
from pipeline.formats.claude_code import scan
from pipeline.testing.fuzz import Mutation, mutate
from pipeline.testing.fuzzing import builder_sources
from pipeline.testing.settings import LIMITS
from pipeline.vocabulary import ChainEnd, SourceFormat

pytestmark = pytest.mark.skipif(not scan.COMPILED, reason="the compiled core is not built here")


def _parts(graph: UuidGraph) -> tuple[object, ...]:
    return (
        dict(graph.line_of),
        graph.duplicates,
        graph.parent_line.tolist(),
        dict(graph.children.items()),
        graph.uuid_lines.tolist(),
        graph.main_rows,
    )


def _same_graph(data: bytes) -> UuidGraph:
    index = build_index(data, SourceFormat.CLAUDE_CODE, LIMITS)
    compiled, reference = build_graph(index), build_graph_reference(index)
    assert _parts(compiled) == _parts(reference)
    assert len(compiled.children) == len(reference.children)
    lines = compiled.uuid_lines.tolist()
    for leaf in {*lines[-300:], *lines[::7]}:  # the walk from many leaves, compiled and reference
        assert compiled.trace(index, leaf) == compiled.trace_reference(index, leaf)
    return compiled


def test_every_corpus_file_links_identically(corpus_files: Path) -> None:
    linked, subagents = 0, 0
    for path in sorted(corpus_files.iterdir()):
        graph = _same_graph(path.read_bytes())
        linked += len(graph.uuid_lines)
        subagents += bool(graph.uuid_lines) and not graph.main_rows
    assert linked > 10_000
    assert subagents  # the corpus holds sidechain-only (subagent) files too


@pytest.mark.parametrize("kind", list(Mutation))
def test_fuzzed_sessions_link_identically(kind: Mutation, corpus_files: Path) -> None:
    sources = builder_sources()
    corpus = sorted(p for p in corpus_files.iterdir() if p.suffix == ".jsonl")[:6]
    sources.update({p.name: p.read_bytes() for p in corpus})
    for seed, (name, data) in enumerate(sorted(sources.items())):
        damaged = mutate(data, random.Random(f"{kind}-{name}-{seed}"), kind, depth=2_000, huge_bytes=20_000)
        _same_graph(damaged)


def _line(uuid: object, parent: object, **members: object) -> str:
    record = {"type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": "s", **members}
    return json.dumps(record, separators=(",", ":"))


def test_a_sidechain_only_file_has_no_main_rows() -> None:
    side = [_line("a", None, isSidechain=True), _line("b", "a", isSidechain=True), "{}"]
    assert not _same_graph("\n".join(side).encode()).main_rows
    assert _same_graph("\n".join([*side, _line("c", "b")]).encode()).main_rows


def test_broken_links_link_identically() -> None:
    lines = [
        _line("a", None),
        _line("b", "a"),
        _line("a", "b"),  # a duplicate whose parent is a later-kept line: a loop through the first
        _line("c", "c"),  # its own parent
        _line("d", "gone"),  # dangling
        _line("", ""),  # empty uuid and parent
        '{"type":"user","uuid":"\\ud800","parentUuid":"a"}',  # a lone surrogate, escaped
        _line("e", "\ud800"),
        "not json",
        "",
        _line(7, ["a"]),  # ids that are not strings
        _line("b", "a"),
        _line("a", "d", isSidechain=True),
        json.dumps({"type": "progress", "uuid": "f", "parentUuid": "b"}),
        _line("g", ""),  # an empty parent: the walk stops at a malformed link
    ]
    graph = _same_graph("\n".join(lines).encode("utf-8", "surrogatepass"))
    assert set(graph.duplicates) >= {"a", "b"}
    assert 2 in graph.children[1] and graph.parent_of(4) == 4  # a child of the first "a"; c's own
    index = build_index("\n".join(lines).encode("utf-8", "surrogatepass"), SourceFormat.CLAUDE_CODE, LIMITS)
    ends = {graph.trace(index, leaf).end for leaf in graph.uuid_lines}
    assert ends >= {ChainEnd.ROOT, ChainEnd.LOOP, ChainEnd.EXTERNAL_PARENT, ChainEnd.MALFORMED_PARENT}
