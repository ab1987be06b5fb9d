"""The six-way partition and snapshot selection on their own.

Every test states the sets it expects from how the session was written, then checks the module
agrees; disjointness and completeness are proved here with set operations.
"""

from __future__ import annotations

import hashlib

import orjson
import pytest

from pipeline.core.line_runs import LineRuns
from pipeline.core.partition import (
    PartitionError,
    checked_partition,
    control_projection_lines,
    line_digest,
    partition_lines,
    select_snapshots,
)
from pipeline.testing import TranscriptBuilder
from pipeline.vocabulary import CheckpointPolicy, PartitionSet
from tests.support.resolved import Resolved, resolve


def _lines_of(data: bytes, needle: bytes) -> set[int]:
    return {number for number, line in enumerate(data.split(b"\n"), 1) if needle in line}


def session_with_everything() -> tuple[Resolved, dict[str, set[int]]]:
    """Leading metadata, a rewound branch, snapshots, a damaged line, a trailing title and pointer."""
    b = TranscriptBuilder(seed=9)
    b.permission_mode("default")
    b.custom_title("leading title")
    for turn in range(4):
        b.file_history_snapshot()
        prompt = b.user(f"prompt {turn}")
        if turn == 2:
            b.assistant(b.text("BRANCH-ONLY answer"))
            b.rewind(prompt)
        b.tool_call("Read", {"file_path": f"/r/{turn}.py"}, "contents")
        b.assistant(b.text(f"answer {turn}"))
        if turn == 1:
            b.last_prompt(f"prompt {turn}")  # an older pointer, to a leaf a compaction may drop
    b.raw(b'{"type":"user","message":{"content":"DAMAGED')
    b.file_history_snapshot(message_id="not-a-kept-record")
    b.custom_title("trailing title")
    b.last_prompt("prompt 3")
    data = b.to_bytes()
    expected = {
        "branch": _lines_of(data, b"BRANCH-ONLY"),
        "damaged": _lines_of(data, b"DAMAGED"),
        "leading": _lines_of(data, b'"permission-mode"') | _lines_of(data, b"leading title"),
        "pointer": {max(_lines_of(data, b'"last-prompt"'))},
        "old_pointer": {min(_lines_of(data, b'"last-prompt"'))},
        "trailing": _lines_of(data, b"trailing title") | _lines_of(data, b"not-a-kept-record"),
        "snapshots": _lines_of(data, b'"file-history-snapshot"') - _lines_of(data, b"not-a-kept-record"),
    }
    return resolve(data), expected


def _prove(sets: dict[PartitionSet, frozenset[int]], total: int) -> None:
    seen: set[int] = set()
    for lines in sets.values():
        assert not seen & lines
        seen |= lines
    assert seen == set(range(1, total + 1))


def test_every_line_lands_in_the_one_set_it_belongs_to() -> None:
    session, expected = session_with_everything()
    chain = session.chain
    summary, raw = chain[:6], chain[6:]
    side = select_snapshots(
        session.index, raw, policy=CheckpointPolicy.ACTIVE_CORRELATED, limit=10, stop_line=None
    )
    partition = partition_lines(
        session.index,
        summary=summary,
        raw_keep=raw,
        side_keep=side,
        pointer_line=session.topology.strict.pointer_line,
    )
    sets = {name: partition[name].lines for name in PartitionSet}
    _prove(sets, len(session.index))
    assert sets[PartitionSet.SUMMARY] == set(summary) and sets[PartitionSet.RAW_KEEP] == set(raw)
    assert sets[PartitionSet.EXCLUDED_BRANCH] == expected["branch"]
    assert sets[PartitionSet.CONTROL_PROJECTION] == expected["leading"] | expected["pointer"]
    unattributed = expected["damaged"] | expected["trailing"] | expected["old_pointer"]
    assert unattributed <= sets[PartitionSet.EXCLUDED_UNATTRIBUTED]
    # Snapshots travel only with the kept prompts they name (the ones before the cut do not).
    assert sets[PartitionSet.SIDE_KEEP] and sets[PartitionSet.SIDE_KEEP] <= expected["snapshots"]
    kept_ids = {session.record(line).uuid for line in raw}
    assert all(session.record(line).snapshot_message_id in kept_ids for line in sets[PartitionSet.SIDE_KEEP])
    for name in PartitionSet:
        assert partition[name].count == len(sets[name])
        assert partition[name].digest == line_digest(sets[name])


def test_overlapping_sets_are_an_internal_error_not_a_partition() -> None:
    session, _ = session_with_everything()
    chain = session.chain
    with pytest.raises(PartitionError):
        partition_lines(session.index, summary=chain[:6], raw_keep=chain[5:], side_keep=(), pointer_line=None)
    with pytest.raises(PartitionError):
        partition_lines(session.index, summary=(), raw_keep=chain, side_keep=(chain[0],), pointer_line=None)


def test_without_branch_isolation_no_uuid_record_is_excluded_as_a_branch() -> None:
    session, expected = session_with_everything()
    partition = partition_lines(
        session.index,
        summary=(),
        raw_keep=session.chain,
        side_keep=(),
        pointer_line=None,
        branch_isolation=False,
    )
    assert partition[PartitionSet.EXCLUDED_BRANCH].count == 0
    assert expected["branch"] <= partition[PartitionSet.EXCLUDED_UNATTRIBUTED].lines


def test_control_projection_is_the_leading_metadata_and_the_projected_pointer_only() -> None:
    session, expected = session_with_everything()
    assert session.topology.strict.pointer_line in expected["pointer"]
    projected = control_projection_lines(session.index, session.topology.strict.pointer_line)
    assert projected == expected["leading"] | expected["pointer"]
    assert control_projection_lines(session.index, None) == expected["leading"]


def test_snapshot_selection_honours_policy_limit_stop_line_and_session() -> None:
    session, expected = session_with_everything()
    index, chain = session.index, session.chain
    every = select_snapshots(
        index, chain, policy=CheckpointPolicy.ACTIVE_CORRELATED, limit=99, stop_line=None
    )
    assert every == expected["snapshots"]
    assert not select_snapshots(index, chain, policy=CheckpointPolicy.NONE, limit=99, stop_line=None)
    assert not select_snapshots(
        index, chain, policy=CheckpointPolicy.ACTIVE_CORRELATED, limit=0, stop_line=None
    )
    newest = select_snapshots(
        index, chain, policy=CheckpointPolicy.ACTIVE_CORRELATED, limit=2, stop_line=None
    )
    assert newest == set(sorted(every)[-2:])
    third = sorted(every)[2]
    early = select_snapshots(
        index, chain, policy=CheckpointPolicy.ACTIVE_CORRELATED, limit=99, stop_line=third
    )
    assert early == {line for line in every if line < third}


def test_a_snapshot_of_another_session_is_not_kept() -> None:
    b = TranscriptBuilder(seed=4)
    b.file_history_snapshot()
    b.user("prompt")
    b.assistant(b.text("answer"))
    data = b.to_bytes()
    session = resolve(data)
    mine = select_snapshots(
        session.index, session.chain, policy=CheckpointPolicy.ACTIVE_CORRELATED, limit=9, stop_line=None
    )
    assert len(mine) == 1
    first, rest = data.split(b"\n", 1)
    snapshot = orjson.loads(first)
    assert snapshot["type"] == "file-history-snapshot"
    own = resolve(orjson.dumps({**snapshot, "sessionId": b.session_id}) + b"\n" + rest)
    assert select_snapshots(
        own.index, own.chain, policy=CheckpointPolicy.ACTIVE_CORRELATED, limit=9, stop_line=None
    ) == {1}
    other = resolve(orjson.dumps({**snapshot, "sessionId": "another-session"}) + b"\n" + rest)
    assert other.chain and not select_snapshots(
        other.index, other.chain, policy=CheckpointPolicy.ACTIVE_CORRELATED, limit=9, stop_line=None
    )


def test_the_digest_is_content_free_and_order_free() -> None:
    assert line_digest([3, 1, 2]) == line_digest({1, 2, 3})
    assert line_digest([1, 2, 3]) == hashlib.sha256(b"1,2,3").hexdigest()[:16]
    assert line_digest([1, 2]) != line_digest([1, 2, 3])


def test_a_digest_of_runs_is_the_digest_of_their_numbers() -> None:
    numbers = frozenset(n for n in range(1, 5_000) if n % 7 and n % 11)
    assert (
        line_digest(LineRuns(numbers)) == line_digest(numbers) == line_digest(sorted(numbers, reverse=True))
    )
    assert line_digest(LineRuns()) == line_digest(())


@pytest.mark.parametrize(
    ("summary", "raw_keep", "covered"),
    [
        ({1, 2}, {3, 4, 5}, True),
        ({1, 2}, {2, 4, 5}, False),  # line 2 twice, line 3 nowhere
        ({1, 2}, {4, 5}, False),  # a gap
        ({0, 1, 2}, {4, 5}, False),  # a line outside the file stands in for line 3
        ({1, 2, 3}, {4, 5, 6}, False),  # one past the end
    ],
)
def test_the_check_refuses_overlaps_gaps_and_lines_outside_the_file(
    summary: set[int], raw_keep: set[int], covered: bool
) -> None:
    sets = {name: frozenset() for name in PartitionSet} | {
        PartitionSet.SUMMARY: frozenset(summary),
        PartitionSet.RAW_KEEP: frozenset(raw_keep),
    }
    if covered:
        assert checked_partition(sets, 5)[PartitionSet.RAW_KEEP].count == len(raw_keep)
    else:
        with pytest.raises(PartitionError):
            checked_partition(sets, 5)
