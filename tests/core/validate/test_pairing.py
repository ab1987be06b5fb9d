"""The tool pairing the Rust core checks equals the pure-Python reference's, finding for finding.

`check_pairing` (the core's `pair_tools` where built) must give `check_pairing_reference`'s
findings, in order, and its counts on the corpus, fuzzed damage and a generated fleet, over the
chain the topology selects, every uuid line in file order and a shuffled sample; and on chains
built to hit each rule (split messages, duplicate and empty ids, misplaced and foreign results).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from pipeline.core.graph import build_graph
from pipeline.core.index import LineIndex, build_index
from pipeline.core.topology.select import AUTO, resolve_topology
from pipeline.core.validate.pairing import check_pairing, check_pairing_reference
from pipeline.formats.claude_code import scan
from pipeline.testing.settings import LIMITS
from pipeline.vocabulary import FindingCode, SourceFormat
from tests.support.differential import differential_sessions

pytestmark = pytest.mark.skipif(not scan.COMPILED, reason="the compiled core is not built here")


def _same_pairing(index: LineIndex, chain: tuple[int, ...]) -> set[FindingCode]:
    graph = build_graph(index)
    compiled, reference = check_pairing(index, graph, chain), check_pairing_reference(index, graph, chain)
    assert compiled == reference
    return {finding.code for finding in compiled.findings}


def test_corpus_fuzzed_and_generated_sessions_pair_identically(corpus_files: Path, tmp_path: Path) -> None:
    codes: set[FindingCode] = set()
    sessions = 0
    for name, index, graph in differential_sessions(corpus_files, tmp_path):
        rng = random.Random(name)
        lines = tuple(graph.uuid_lines)
        sample = rng.sample(lines, len(lines) // 2)
        chains = (resolve_topology(index, graph, AUTO).chain, lines, tuple(sample))
        for chain in chains:
            codes |= _same_pairing(index, chain)
        sessions += 1
    assert sessions > 100
    assert {FindingCode.TOOL_RESULT_MISMATCH, FindingCode.TOOL_USE_UNANSWERED} <= codes


def _assistant(uuid: str, parent: str | None, message_id: str, *blocks: dict[str, object]) -> str:
    message = {"id": message_id, "role": "assistant", "content": list(blocks)}
    record = {"type": "assistant", "uuid": uuid, "parentUuid": parent, "message": message}
    return json.dumps(record, separators=(",", ":"))


def _user(uuid: str, parent: str | None, *blocks: dict[str, object], source: str | None = None) -> str:
    record: dict[str, object] = {"type": "user", "uuid": uuid, "parentUuid": parent}
    record["message"] = {"role": "user", "content": list(blocks)}
    if source is not None:
        record["sourceToolAssistantUUID"] = source
    return json.dumps(record, separators=(",", ":"))


def _use(tool: str) -> dict[str, object]:
    return {"type": "tool_use", "id": tool, "name": "Bash", "input": {}}


def _result(tool: str) -> dict[str, object]:
    return {"type": "tool_result", "tool_use_id": tool, "content": "ok"}


TEXT = {"type": "text", "text": "hi"}


def test_each_rule_pairs_identically() -> None:
    lines = [
        _user("u1", None, TEXT),
        _assistant("a1", "u1", "m1", _use("t1")),
        _assistant("a2", "a1", "m1", _use("t2"), _use("t1")),  # a fragment; a repeated call id
        _user("u2", "a2", _result("t2")),
        _user("u3", "u2", _result("t1"), TEXT),  # a later user line: one message with u2
        _assistant("a3", "u3", "m2", _use("")),  # an empty id
        _user("u4", "a3", TEXT, _result("")),  # the result not first
        _assistant("a4", "u4", "m3", _use("t3"), _use("t4")),
        _user("u5", "a4", _result("t4")),  # partial, in another order
        _assistant("a5", "u5", "m4", _use("t5")),
        _assistant("a6", "a5", "m5", TEXT),  # calls followed by another assistant message
        _user("u6", "a6", _result("t9"), source="a4"),  # results after no calls: judged by source
        _user("u7", "u6", TEXT),
        _user("u8", "u7", _result("t3"), source="u1"),
        _assistant("a7", "u8", "m6", _use("t6")),  # unanswered at the end
    ]
    index = build_index("\n".join(lines).encode(), SourceFormat.CLAUDE_CODE, LIMITS)
    everything = tuple(range(1, len(lines) + 1))
    codes = _same_pairing(index, everything)
    assert len(codes) >= 6
    for start in range(len(lines)):
        _same_pairing(index, everything[start:])
        _same_pairing(index, everything[::-1][start:])


def test_a_surrogate_id_is_left_to_the_reference() -> None:
    lines = [
        _assistant("a1", None, "m1", _use("t\\ud800")),
        _user("u1", "a1", _result("t\\ud800")),
    ]
    data = "\n".join(lines).replace("\\\\ud800", "\\ud800").encode()
    index = build_index(data, SourceFormat.CLAUDE_CODE, LIMITS)
    graph = build_graph(index)
    assert scan.pair_tools(index.records, (1, 2), graph.line_of) is None
    assert check_pairing(index, graph, (1, 2)) == check_pairing_reference(index, graph, (1, 2))
