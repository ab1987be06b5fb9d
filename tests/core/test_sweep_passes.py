"""The sweep's whole-file passes the Rust core makes (`rust/src/sweep.rs`) equal their references.

Seed tokens, client versions, the lines of a record type, the correlated file-history snapshots,
the identity checks' per-line facts and a chain's session runs, compiled and pure Python, on the corpus, fuzzed damage
and a generated fleet, over the chain the topology selects, every uuid line and a shuffled sample;
and on hand-made sessions where each fact is known.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import orjson
import pytest

from pipeline.core.graph import build_graph
from pipeline.core.index import LineIndex, build_index
from pipeline.core.partition import correlated_snapshots_reference, select_snapshots
from pipeline.core.topology.select import AUTO, resolve_topology
from pipeline.core.topology.strict import analyze_lineage, session_runs, session_runs_reference
from pipeline.core.validate.checks import (
    COMPILED_IDENTITY,
    identity_line_facts,
    identity_line_facts_reference,
)
from pipeline.formats.claude_code import scan
from pipeline.testing.settings import LIMITS
from pipeline.vocabulary import CheckpointPolicy, FindingCode, RecordType, SourceFormat
from tests.support.differential import differential_sessions

pytestmark = pytest.mark.skipif(not scan.COMPILED, reason="the compiled core is not built here")


def _chains(name: str, index: LineIndex) -> list[tuple[int, ...]]:
    graph = build_graph(index)
    rng = random.Random(name)
    sample = list(graph.uuid_lines)
    rng.shuffle(sample)
    chain = resolve_topology(index, graph, AUTO).chain
    return [chain, tuple(graph.uuid_lines), tuple(sample[: len(sample) // 2]), ()]


def _same_everywhere(name: str, index: LineIndex, kinds: Counter[int]) -> None:
    graph = build_graph(index)
    assert index.tokens() == index.tokens_reference()
    assert index.client_versions() == index.client_versions_reference()
    for kind in RecordType:
        assert index.typed(kind) == index.typed_reference(kind)
    for chain in _chains(name, index):
        assert index.tokens(chain) == index.tokens_reference(chain)
        for last in (len(index), len(index) // 2, 0, -3):
            compiled = scan.snapshot_lines(index.records, chain, last)
            assert compiled == correlated_snapshots_reference(index, chain, last), (name, last)
        assert session_runs(index, chain) == session_runs_reference(index, chain), name
        facts = identity_line_facts(index, graph, chain)
        assert facts == identity_line_facts_reference(index, graph, frozenset(chain)), name
        kinds.update(kind for kind, _, _ in facts[0])
        kinds[len(COMPILED_IDENTITY)] += facts[1]


def test_corpus_fuzzed_and_generated_sessions_pass_identically(corpus_files: Path, tmp_path: Path) -> None:
    kinds: Counter[int] = Counter()
    sessions = 0
    for name, index, _ in differential_sessions(corpus_files, tmp_path):
        _same_everywhere(name, index, kinds)
        sessions += 1
    assert sessions > 100
    # Dangling parents and cross-session links occur in these sessions, so those branches were
    # compared; malformed ids do not (the hand-made session below has them).
    assert kinds[2] and kinds[len(COMPILED_IDENTITY)], kinds


def _session(*records: dict[str, object]) -> LineIndex:
    data = b"".join(orjson.dumps(record) + b"\n" for record in records)
    return build_index(data, SourceFormat.CLAUDE_CODE, LIMITS)


def _user(uuid: str, parent: str | None, session: str = "s", **extra: object) -> dict[str, object]:
    message = {"role": "user", "content": "hi"}
    return {
        "type": "user",
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": session,
        "message": message,
        **extra,
    }


def test_identity_facts_name_each_defect_where_it_is() -> None:
    index = _session(
        _user("a", None),
        _user("", "a"),  # malformed uuid
        _user("c", ""),  # malformed parent, on the chain below
        _user("d", "nowhere", isSidechain=True),  # dangling, a sidechain record
        _user("e", "a", session="other"),  # a parent in another session, off the chain
    )
    graph = build_graph(index)
    for facts in (
        identity_line_facts(index, graph, (1, 3)),
        identity_line_facts_reference(index, graph, {1, 3}),
    ):
        found = {(COMPILED_IDENTITY[kind], line, bit) for kind, line, bit in facts[0]}
        assert found == {
            (FindingCode.MALFORMED_UUID, 2, False),
            (FindingCode.MALFORMED_PARENT, 3, True),
            (FindingCode.DANGLING_PARENT, 4, True),
        }
        assert facts[1] == 1


def test_snapshots_follow_the_kept_records_message_ids_and_sessions() -> None:
    def snapshot(message_id: str, session: str) -> dict[str, object]:
        return {
            "type": "file-history-snapshot",
            "messageId": message_id,
            "sessionId": session,
            "snapshot": {},
        }

    index = _session(
        snapshot("a", "s"),
        _user("a", None),
        snapshot("b", "s"),  # correlates with no kept record
        snapshot("a", "other"),  # another session's
        snapshot("a", "s"),
    )
    for stop_line in (None, 5):
        kept = select_snapshots(
            index, (2,), policy=CheckpointPolicy.ACTIVE_CORRELATED, limit=10, stop_line=stop_line
        )
        assert kept == ({1, 5} if stop_line is None else {1})
    assert scan.snapshot_lines(index.records, (2,), len(index)) == (1, 5)
    assert index.tokens() == sum(record.tokens for record in index.records if record is not None) > 0
    assert index.typed(RecordType.FILE_HISTORY_SNAPSHOT) == (1, 3, 4, 5)


def test_session_runs_follow_the_chain_and_skip_records_without_a_session() -> None:
    index = _session(
        _user("a", None, session="s1"),
        _user("b", "a", session=""),
        _user("c", "b", session="s1"),
        _user("d", "c", session="s2"),
        _user("e", "d", session="s1"),
    )
    chain = (1, 2, 3, 4, 5)
    for runs in (session_runs(index, chain), session_runs_reference(index, chain)):
        assert runs == ((("s1", 0), ("s2", 3), ("s1", 4)), 4)
    lineage = analyze_lineage(index, chain, "s1")
    assert (lineage.ok, lineage.run_count, lineage.current_session, lineage.current_start) == (
        False,
        3,
        "s1",
        4,
    )
    assert session_runs(index, (4, 5)) == ((("s2", 0), ("s1", 1)), 2)
