"""Topology: every strict status of the seed, the auto policy's inference, physical mode."""

from __future__ import annotations

from typing import Any

import pytest

from pipeline.core.graph import build_graph
from pipeline.core.index import build_index
from pipeline.core.topology.select import AUTO, Topology, TopologyOptions, resolve_topology
from pipeline.testing import TranscriptBuilder
from pipeline.testing.settings import LIMITS
from pipeline.vocabulary import ChainEnd, LeafPolicy, LeafSource, SourceFormat, StrictStatus
from tests.support.records import SESSION_A, SESSION_B, jsonl, pointer, rec

S, B = SESSION_A, SESSION_B


def resolve(
    records: list[dict[str, Any]],
    *,
    policy: LeafPolicy = LeafPolicy.AUTO,
    resume_leaf: str | None = None,
    max_extension: int = 0,
) -> Topology:
    index = build_index(jsonl(records), SourceFormat.CLAUDE_CODE, LIMITS)
    return resolve_topology(index, build_graph(index), TopologyOptions(policy, resume_leaf, max_extension))


LINEAR = [
    rec("user", "u1"),
    rec("assistant", "a1", "u1"),
    rec("user", "u2", "a1"),
    rec("assistant", "a2", "u2"),
]


@pytest.mark.parametrize(
    ("records", "status"),
    [
        (LINEAR, StrictStatus.ABSENT),
        ([*LINEAR, pointer(None)], StrictStatus.MALFORMED),
        ([*LINEAR, pointer(42)], StrictStatus.MALFORMED),
        ([*LINEAR, pointer()], StrictStatus.MALFORMED),  # text-only pointer, as older versions write
        ([rec("user", "u1"), rec("assistant", "a1", 7), pointer("a1")], StrictStatus.MALFORMED_PARENT),
        ([*LINEAR, rec("user", "u1", "a2"), pointer("a2")], StrictStatus.DUPLICATE_UUID),
        (
            [rec("user", "u1", "elsewhere"), rec("assistant", "a1", "u1"), pointer("a1")],
            StrictStatus.DANGLING,
        ),
        ([*LINEAR, pointer("nowhere")], StrictStatus.DANGLING),
        ([rec("user", "u1", "a1"), rec("assistant", "a1", "u1"), pointer("a1")], StrictStatus.LOOP),
        ([rec("assistant", "a1", "u1"), rec("user", "u1"), pointer("a1")], StrictStatus.NON_MONOTONIC),
        (
            [*LINEAR, pointer("a2", session="22222222-2222-4222-8222-222222222222")],
            StrictStatus.SESSION_MISMATCH,
        ),
        ([*LINEAR, pointer("a2")], StrictStatus.VALID),
    ],
    ids=lambda v: v.value if isinstance(v, StrictStatus) else None,
)
def test_strict_statuses(records: list[dict[str, Any]], status: StrictStatus) -> None:
    topology = resolve(records, policy=LeafPolicy.STRICT)
    assert topology.strict.status is status
    assert topology.refused is (status is not StrictStatus.VALID)
    assert bool(topology.chain) is (status is StrictStatus.VALID)


def test_same_session_attachment_inversion_is_the_one_accepted_exception() -> None:
    records = [
        rec("user", "u1"),
        rec("attachment", "t2", "t1"),
        rec("attachment", "t1", "u1"),
        rec("assistant", "a1", "t2"),
        pointer("a1"),
    ]
    topology = resolve(records, policy=LeafPolicy.STRICT)
    assert topology.strict.status is StrictStatus.VALID
    assert topology.strict.attachment_inversions == 1
    assert topology.chain == (1, 3, 2, 4)  # logical parent order, not physical


def test_inversion_between_other_types_or_sessions_is_refused() -> None:
    other = "33333333-3333-4333-8333-333333333333"
    records = [
        rec("user", "u1"),
        rec("attachment", "t2", "t1", session=other),
        rec("attachment", "t1", "u1"),
        rec("assistant", "a1", "t2", session=other),
        pointer("a1", session=other),
    ]
    assert resolve(records, policy=LeafPolicy.STRICT).strict.status is StrictStatus.NON_MONOTONIC


def test_one_way_session_lineage_is_accepted_and_a_return_is_refused() -> None:
    one_way = [
        rec("user", "u1"),
        rec("assistant", "a1", "u1"),
        rec("user", "u2", "a1", session=B),
        rec("assistant", "a2", "u2", session=B),
        pointer("a2", session=B),
    ]
    accepted = resolve(one_way, policy=LeafPolicy.STRICT)
    assert accepted.strict.status is StrictStatus.VALID
    assert (
        accepted.lineage is not None
        and accepted.lineage.transitions == 1
        and accepted.lineage.current_start == 2
    )
    a_b_a = [*one_way[:4], rec("user", "u3", "a2"), rec("assistant", "a3", "u3"), pointer("a3")]
    assert resolve(a_b_a, policy=LeafPolicy.STRICT).strict.status is StrictStatus.SESSION_MISMATCH


TOOL_LEAF = [
    rec("user", "u1"),
    rec("assistant", "a1", "u1", content=[{"type": "tool_use", "id": "t-1", "name": "Read", "input": {}}]),
]


def result(uuid: str, parent: str, tool: str = "t-1", **extra: Any) -> dict[str, Any]:
    return rec(
        "user", uuid, parent, text=[{"type": "tool_result", "tool_use_id": tool, "content": "ok"}], **extra
    )


@pytest.mark.parametrize(
    ("after", "limit", "status"),
    [
        ([result("r1", "a1")], 0, StrictStatus.VALID),  # default: records after the pointer are excluded
        ([result("r1", "a1")], 1, StrictStatus.VALID),
        ([result("r1", "a1"), rec("assistant", "a9", "r1")], 1, StrictStatus.EXTENSION_LIMIT),
        ([result("r1", "u1")], 2, StrictStatus.EXTENSION_BRANCH),
        ([rec("user", "r1", "a1")], 2, StrictStatus.EXTENSION_UNSAFE),  # ordinary conversation
        ([{"type": "file-history-snapshot", "messageId": "x"}], 2, StrictStatus.EXTENSION_UNSAFE),
        ([result("r1", "a1", session=B)], 2, StrictStatus.SESSION_MISMATCH),
        ([result("r1", "a1", tool="t-other")], 2, StrictStatus.EXTENSION_UNSAFE),
    ],
)
def test_post_last_prompt_closure(after: list[dict[str, Any]], limit: int, status: StrictStatus) -> None:
    topology = resolve([*TOOL_LEAF, pointer("a1"), *after], policy=LeafPolicy.STRICT, max_extension=limit)
    assert topology.strict.status is status
    if status is StrictStatus.VALID and limit:
        assert topology.leaf_uuid == "r1" and topology.leaf_source is LeafSource.POST_LAST_PROMPT_CLOSURE
        assert topology.chain[-1] == 4
    elif status is StrictStatus.VALID:
        assert topology.leaf_uuid == "a1" and 4 not in topology.chain


def test_resume_leaf_is_a_manual_override_even_against_the_pointer() -> None:
    topology = resolve([*LINEAR, pointer("a2")], policy=LeafPolicy.STRICT, resume_leaf="a1")
    assert topology.strict.status is StrictStatus.VALID
    assert topology.leaf_source is LeafSource.MANUAL_OVERRIDE and topology.chain == (1, 2)


def test_auto_uses_the_pointer_leaf_when_there_is_one() -> None:
    branch = [*LINEAR, rec("user", "u3", "a1"), rec("assistant", "a3", "u3"), pointer("a2")]
    topology = resolve(branch)
    assert topology.leaf_source is LeafSource.LAST_PROMPT and topology.leaf_uuid == "a2"
    assert topology.chain == (1, 2, 3, 4)


def test_auto_infers_the_last_conversation_row_without_a_pointer() -> None:
    # A rewind: the newest branch is written last and wins, whatever the other branch's timestamps.
    branch = [
        *LINEAR,
        rec("user", "u3", "a1", timestamp="2020-01-01T00:00:00Z"),
        rec("assistant", "a3", "u3"),
    ]
    topology = resolve(branch)
    assert topology.leaf_source is LeafSource.NEWEST_LEAF and topology.leaf_uuid == "a3"
    assert topology.chain == (1, 2, 5, 6)
    assert topology.strict.status is StrictStatus.ABSENT  # the strict verdict is still computed


def test_auto_walks_up_from_trailing_system_rows_and_keeps_them() -> None:
    records = [*LINEAR, rec("system", "s1", "a2", subtype="turn_duration"), pointer()]
    topology = resolve(records)
    assert topology.leaf_uuid == "a2"
    assert topology.chain == (1, 2, 3, 4, 5)


def test_auto_reports_an_external_parent_without_refusing() -> None:
    topology = resolve([rec("user", "u1", "in-the-parent-session"), rec("assistant", "a1", "u1")])
    assert not topology.refused
    assert (
        topology.chain_end is ChainEnd.EXTERNAL_PARENT and topology.external_parent == "in-the-parent-session"
    )


def test_auto_stops_at_a_compact_boundary_and_reports_history_before_it() -> None:
    builder = TranscriptBuilder(seed=3)
    builder.user("first task")
    builder.assistant(builder.text("done"))
    builder.compact("summary of the first task")
    builder.user("second task")
    builder.assistant(builder.text("also done"))
    data = builder.to_bytes()
    index = build_index(data, SourceFormat.CLAUDE_CODE, LIMITS)
    topology = resolve_topology(index, build_graph(index), AUTO)
    root = index.record(topology.chain[0])
    assert root is not None and root.compact_boundary
    assert topology.chain_end is ChainEnd.COMPACT_BOUNDARY
    assert topology.pre_compaction and min(topology.pre_compaction) < topology.chain[0]


def test_auto_recovers_parallel_tool_calls_hanging_off_the_walk() -> None:
    builder = TranscriptBuilder(seed=5)
    builder.user("look at two files")
    builder.parallel_tool_calls([("Read", {"file_path": "/a"}, "A"), ("Read", {"file_path": "/b"}, "B")])
    builder.assistant(builder.text("both read"))
    data = builder.to_bytes()
    index = build_index(data, SourceFormat.CLAUDE_CODE, LIMITS)
    topology = resolve_topology(index, build_graph(index), AUTO)
    on_chain_results = [
        r.tool_results for line in topology.chain if (r := index.record(line)) and r.tool_results
    ]
    assert len(on_chain_results) == 2  # the walk passes one result; the other is recovered


def test_physical_policy_keeps_every_record_and_says_it_has_no_isolation() -> None:
    branch = [*LINEAR, rec("user", "u3", "a1"), rec("assistant", "a3", "u3"), pointer("a2")]
    topology = resolve(branch, policy=LeafPolicy.PHYSICAL)
    assert not topology.branch_isolation and topology.leaf_source is LeafSource.PHYSICAL_TAIL
    assert topology.chain == tuple(range(1, 8))


# Where Claude Code resumes when a pointer and the rest of the file disagree (Claude Code 2.1.332;
# the same shapes are resumed in the real client by tests/test_claude_code_resume.py).
def test_a_session_that_went_on_below_its_pointer_resumes_at_the_last_row() -> None:
    records = [*LINEAR[:2], pointer("a1", lastPrompt="prompt u1"), *LINEAR[2:]]
    auto, strict = resolve(records), resolve(records, policy=LeafPolicy.STRICT)
    assert auto.leaf_uuid == "a2" and auto.leaf_source is LeafSource.BELOW_LAST_PROMPT
    assert [f.code.value for f in auto.findings] == ["leaf-below-last-prompt"]
    assert auto.findings[0].line == 3  # the pointer the session went on below
    # the seed's verdict is still computed and reported beside it, and strict keeps it exactly
    assert auto.strict.status is StrictStatus.VALID and auto.strict.leaf_uuid == "a1"
    assert strict.leaf_uuid == "a1" and strict.leaf_source is LeafSource.LAST_PROMPT
    assert auto.prompt_check == strict.prompt_check == "matched"  # judged up to the pointer's leaf


def test_an_explicit_pointer_stops_being_explicit_once_a_row_follows_it() -> None:
    followed = resolve([*LINEAR[:2], pointer("a1", explicit=True), *LINEAR[2:]])
    assert followed.leaf_uuid == "a2" and followed.leaf_source is LeafSource.BELOW_LAST_PROMPT
    rewound = [*LINEAR, pointer("a1", explicit=True)]  # a rewind to a1 written after a2, nothing after
    assert resolve(rewound).leaf_uuid == "a1"


def test_a_pointer_on_an_abandoned_branch_still_names_the_leaf() -> None:
    records = [*LINEAR, pointer("a2"), rec("user", "u3", "a1"), rec("assistant", "a3", "u3")]
    topology = resolve(records)
    assert topology.leaf_uuid == "a2" and topology.leaf_source is LeafSource.LAST_PROMPT


def test_a_pointer_naming_nothing_in_the_file_falls_back_to_the_last_row() -> None:
    topology = resolve([*LINEAR, pointer("not-in-this-file")])
    assert topology.leaf_uuid == "a2" and topology.leaf_source is LeafSource.NEWEST_LEAF
    assert not topology.refused and topology.strict.status is StrictStatus.DANGLING


def test_a_compact_boundary_after_the_pointer_forgets_it() -> None:
    boundary = rec("system", "b1", None, subtype="compact_boundary", logicalParentUuid="a2")
    summary = rec("user", "s1", "b1", isCompactSummary=True, text="summary")
    records = [*LINEAR, pointer("a1"), boundary, summary, rec("assistant", "a3", "s1")]
    topology = resolve(records)
    assert topology.leaf_uuid == "a3" and topology.chain_end is ChainEnd.COMPACT_BOUNDARY


def test_null_explicit_pointer_clears_an_earlier_one() -> None:
    records = [*LINEAR, pointer("a1"), pointer(None, explicit=True)]
    assert resolve(records).leaf_uuid == "a2"


def test_a_pointer_on_one_result_of_a_parallel_batch_continues_through_the_other() -> None:
    call = {"type": "tool_use", "name": "Bash", "input": {}}
    records = [
        rec("user", "u1"),
        rec("assistant", "c1", "u1", mid="m", content=[{**call, "id": "t1"}]),
        rec("assistant", "c2", "c1", mid="m", content=[{**call, "id": "t2"}]),
        rec("user", "r1", "c1", content=[{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]),
        rec("user", "r2", "c2", content=[{"type": "tool_result", "tool_use_id": "t2", "content": "y"}]),
        pointer("r1"),
        rec("assistant", "a2", "r2"),
    ]
    for record in records[3:5]:
        record["message"] = {"role": "user", "content": record.pop("content")}
    topology = resolve(records)
    assert topology.leaf_uuid == "a2" and topology.leaf_source is LeafSource.BELOW_LAST_PROMPT
    lines = [topology.chain.index(n) for n in (1, 2, 3, 4, 5)]
    assert lines == sorted(lines)  # every call and result of the batch is on the chain


PROVABLE_CHAINS = {
    # A parent written after its child: Claude Code walks parentUuid whatever the file order.
    "chain-non-monotonic": [
        rec("user", "u1"),
        rec("user", "u2", "a1"),
        rec("assistant", "a1", "u1"),
        rec("assistant", "a2", "u2"),
    ],
    # A session that returns to an earlier one (A, B, A): `/clear` and resumes mix sessionIds.
    "lineage-unsafe": [
        rec("user", "u1"),
        rec("assistant", "a1", "u1", session=B),
        rec("user", "u2", "a1"),
        rec("assistant", "a2", "u2"),
    ],
}


@pytest.mark.parametrize("rule", sorted(PROVABLE_CHAINS))
def test_a_chain_only_the_seeds_safety_rules_refuse_is_selected_when_a_proof_will_judge(rule: str) -> None:
    records = PROVABLE_CHAINS[rule]
    refused = resolve(records)
    assert refused.refusal == rule and refused.chain == () and refused.unproven is None
    assert {
        f.severity.value for f in refused.findings if f.code.value.endswith(rule.rsplit("-", maxsplit=1)[-1])
    } == {"error"}
    index = build_index(jsonl(records), SourceFormat.CLAUDE_CODE, LIMITS)
    proven = resolve_topology(
        index, build_graph(index), TopologyOptions(LeafPolicy.AUTO, None, 0, provable=True)
    )
    assert not proven.refused and proven.unproven == rule
    assert [index.entry(line).uuid for line in proven.chain] == ["u1", "a1", "u2", "a2"]
    broken = [f for f in proven.findings if f.code.value in ("chain-non-monotonic", "session-lineage-unsafe")]
    assert [f.severity.value for f in broken] == ["warning"]
    strict = resolve_topology(
        index, build_graph(index), TopologyOptions(LeafPolicy.STRICT, None, 0, provable=True)
    )
    assert strict.refused  # the strict policy applies the seed's rules only, proof or not
