"""The resume start's two whole-file passes in the Rust core equal the pure-Python reference's.

`resume_start` reads, through the core's `resume_rows` where built, which uuid lines count as the
last row and the checkpoint the `last-prompt` pointers leave; on the corpus, fuzzed damage and a
generated fleet both must equal `rows_and_checkpoint_reference`'s, and so must the start and the
whole topology chosen from them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.core.graph import build_graph
from pipeline.core.index import build_index
from pipeline.core.topology import checkpoint
from pipeline.core.topology.checkpoint import resume_start, rows_and_checkpoint_reference
from pipeline.core.topology.rows import RowView
from pipeline.core.topology.select import AUTO, resolve_topology
from pipeline.formats.claude_code import scan
from pipeline.testing.settings import LIMITS
from pipeline.vocabulary import SourceFormat
from tests.support.differential import differential_sessions

pytestmark = pytest.mark.skipif(not scan.COMPILED, reason="the compiled core is not built here")


def test_corpus_fuzzed_and_generated_sessions_start_identically(
    corpus_files: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pointed = sessions = 0
    for name, index, graph in differential_sessions(corpus_files, tmp_path):
        view = RowView(index, graph, sidechain=not graph.main_rows)
        compiled = checkpoint._rows_and_checkpoint(view)
        assert compiled == rows_and_checkpoint_reference(view), name
        start, topology = resume_start(index, graph), resolve_topology(index, graph, AUTO)
        with monkeypatch.context() as patch:
            patch.setattr(scan, "COMPILED", False)  # every stage on its reference
            assert resume_start(index, graph) == start, name
            assert resolve_topology(index, graph, AUTO) == topology, name
        pointed += compiled[1].leaf is not None
        sessions += 1
    assert sessions > 100 and pointed > 20


def _pointer(leaf: object, **members: object) -> str:
    return json.dumps({"type": "last-prompt", "leafUuid": leaf, "sessionId": "s", **members})


def _row(uuid: str, parent: str | None, kind: str = "user", **members: object) -> str:
    return json.dumps({"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s", **members})


def test_each_pointer_rule_replays_identically() -> None:
    lines = [
        _row("a", None),
        _pointer("a", explicit=True),
        _row("b", "a", "assistant"),  # a row after an explicit pointer
        _pointer("b"),
        _pointer("b", explicit=True),  # the same leaf again, explicit
        _pointer(None, explicit=True),  # cleared
        _row("c", "b", "system", subtype="file_snapshot"),  # not a row that counts as last
        _pointer(7),  # an invalid value names nothing
        _row("d", "c", "attachment", subtype="fork_briefing"),
        _pointer(""),  # falsy: ignored
        _row("e", "b", "system", subtype="compact_boundary"),  # forgets the checkpoint
        _pointer("c"),
        _row("f", "e", isSidechain=True),
    ]
    for end in range(1, len(lines) + 1):
        index = build_index("\n".join(lines[:end]).encode(), SourceFormat.CLAUDE_CODE, LIMITS)
        view = RowView(index, build_graph(index), sidechain=False)
        assert checkpoint._rows_and_checkpoint(view) == rows_and_checkpoint_reference(view)
