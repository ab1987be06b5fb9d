"""The Qwen Code plug-in does what the seam asks, as the generic job drives it: read, measure,
plan a tail within room, evidence the span before it, compose, and re-read the candidate as the
summary followed by the original's messages from the cut, digest for digest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

import pytest

from pipeline.agents.protocol import ContextFormat
from pipeline.agents.qwen_code import QWEN_CODE
from pipeline.formats.line_guard import LineLimits
from pipeline.summarize.evidence.items import EvidenceKind
from pipeline.vocabulary import PartitionSet, SessionKind, SourceFormat
from tests.support.qwen_records import chain, jsonl, turn, user

FIXTURES: Final = Path(__file__).resolve().parents[2] / "fixtures" / "qwen_code"
LIMITS: Final = LineLimits(max_line_bytes=1_000_000, max_json_depth=200)


def _agent() -> ContextFormat:
    return QWEN_CODE


def test_the_generic_flow_cuts_composes_and_checks_a_real_session() -> None:
    agent = _agent()
    session = agent.read((FIXTURES / "tools.jsonl").read_bytes(), None, LIMITS)
    assert agent.format is SourceFormat.QWEN_CODE and session.resumable and session.findings == ()
    sent = session.sent()
    plan = session.plan_tail(room=sum(item.tokens for item in sent) // 3)
    assert plan is not None and plan.target_met and 0 < plan.first_item < len(sent)
    candidate = agent.read(session.compose(plan, "SUMMARY"), None, LIMITS)
    expected = [session.summary_sent("SUMMARY").digest, *(item.digest for item in sent[plan.first_item :])]
    assert [item.digest for item in candidate.sent()] == expected and candidate.findings == ()
    assert session.summary_line() == 1
    sets = session.compress_sets(plan)
    assert min(sets[PartitionSet.RAW_KEEP]) == plan.cut_line


def test_the_evidence_is_the_summarized_span_in_the_summarizers_vocabulary() -> None:
    session = _agent().read((FIXTURES / "tools.jsonl").read_bytes(), None, LIMITS)
    plan = session.plan_tail(room=0)
    assert plan is not None
    evidence = session.evidence(plan)
    assert all(item.line < plan.cut_line for item in evidence)
    prompts = [item.text for item in evidence if item.kind is EvidenceKind.HUMAN_PROMPT]
    assert prompts == ["make notes", "now count the lines"]
    tools = {item.tool_name for item in evidence if item.kind is EvidenceKind.TOOL_CALL}
    assert tools == {"Bash", "Read", "Write"}
    failed = [item for item in evidence if item.kind is EvidenceKind.TOOL_RESULT and item.is_error]
    assert len(failed) == 2  # the read of a missing file and `false`
    assert any(item.kind is EvidenceKind.THINKING for item in evidence)


def test_billed_tokens_and_the_context_section_come_from_what_the_file_records() -> None:
    session = _agent().read((FIXTURES / "tools.jsonl").read_bytes(), None, LIMITS)
    billed = session.billed()
    assert billed.events == 7 and billed.input > billed.last_input > 0  # seven model calls recorded
    compressed = _agent().read((FIXTURES / "compressed.jsonl").read_bytes(), None, LIMITS)
    assert compressed.billed().events == 11  # its compression call is billed too (telemetry only)
    no_telemetry = jsonl(
        json.loads(line)
        for line in (FIXTURES / "tools.jsonl").read_text().splitlines()
        if "ui_telemetry" not in line
    )
    assert _agent().read(no_telemetry, None, LIMITS).billed().input == billed.input  # usageMetadata agrees
    section = session.context_section(tokens=123)
    assert (
        section.items == len(session.sent()) and section.base_line is None and section.estimated_tokens == 123
    )
    assert compressed.context_section(tokens=1).base_line is not None


def test_the_tallies_count_every_class_in_the_file_and_in_what_is_sent() -> None:
    session = _agent().read((FIXTURES / "compressed.jsonl").read_bytes(), None, LIMITS)
    tallies = session.class_tallies("qwen-chars", {"chars": len})
    assert ("summary", None) in tallies.sent and ("human", None) in tallies.file
    assert (
        tallies.file[("tool_use", "run_shell_command")].items
        > tallies.sent[("tool_use", "run_shell_command")].items
    )
    assert all(t.tokens["chars"] > 0 for t in tallies.sent.values())


def test_the_judge_finds_a_rewound_branchs_text_in_a_candidate_that_would_carry_it() -> None:
    secret = "the rewound branch said this and nothing else did"
    records = chain(*turn(1, "first", "one"), *turn(5, "second", "two"))
    rewound = {**user(9, secret), "parentUuid": "u4"}
    data = jsonl([*records[:4], rewound, *records[4:]])
    agent = _agent()
    session = agent.read(data, None, LIMITS)
    plan = session.plan_tail(room=0)
    assert plan is not None
    sets = session.compress_sets(plan)
    assert 5 in sets[PartitionSet.EXCLUDED_BRANCH]
    leaky = session.compose(plan, f"SUMMARY {secret}")
    found = agent.judge.excluded(session, sets, leaky, min_chars=20)
    assert [(item.line, item.partition_set) for item in found] == [(5, "excluded_branch")]
    assert agent.judge.excluded(session, sets, session.compose(plan, "SUMMARY"), min_chars=20) == ()


def test_a_long_session_compresses_to_a_thirty_percent_target_beside_its_summary() -> None:
    session = _agent().read((FIXTURES / "long.jsonl").read_bytes(), None, LIMITS)
    total = sum(item.tokens for item in session.sent())
    summary = "S" * 1500
    room = int(total * 0.3) - session.summary_sent(summary).tokens
    plan = session.plan_tail(room)
    assert plan is not None and plan.target_met
    candidate = _agent().read(session.compose(plan, summary), None, LIMITS)
    assert sum(item.tokens for item in candidate.sent()) <= total * 0.3
    assert len(session.compose(plan, summary)) < len((FIXTURES / "long.jsonl").read_bytes()) / 4


def test_a_subagents_transcript_is_a_subagent_session_and_its_parent_the_main_one() -> None:
    transcript = next(FIXTURES.glob("subagents/agent-*.jsonl"))
    subagent = _agent().read(transcript.read_bytes(), transcript, LIMITS)
    assert (subagent.kind, subagent.resumable) == (SessionKind.SUBAGENT, False)
    assert not subagent.context_section(0).resumable
    parent = _agent().read((FIXTURES / "delegated.jsonl").read_bytes(), FIXTURES / "delegated.jsonl", LIMITS)
    assert (parent.kind, parent.resumable) == (SessionKind.MAIN, True)


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.jsonl")))
def test_the_sent_items_and_the_sent_classes_count_the_same_parts_by_qwen_codes_estimate(name: str) -> None:
    session = QWEN_CODE.read((FIXTURES / name).read_bytes(), None, LIMITS)
    sent = session.class_tallies("qwen-chars", {"chars": len}).sent
    classes = {kind: tally.tokens for (kind, tool), tally in sent.items() if tool is None}
    assert sum(item.tokens for item in session.sent()) == sum(t["qwen-chars"] for t in classes.values()) > 0
