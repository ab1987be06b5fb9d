"""The Qwen Code reader: what it decodes, the branch and history it rebuilds, the messages it
sends, its findings, sets and cuts, over hand-made records and the real sessions in
tests/fixtures/qwen_code/ (written by Qwen Code 0.24.4)."""

from __future__ import annotations

import json
from pathlib import Path, PurePath
from typing import Final

import pytest

from pipeline.formats.line_guard import LineLimits
from pipeline.formats.qwen_code.call_repair import UNRECORDED_RESULT
from pipeline.formats.qwen_code.chat_compression import RESUME_INSTRUCTION, summary_message
from pipeline.formats.qwen_code.part_estimate import estimate_tokens
from pipeline.formats.qwen_code.session_analysis import QwenAnalysis, analyze_session, summary_sent
from pipeline.vocabulary import FindingCode, PartitionSet, Severity
from tests.support.agent_files import gemini_checkpoint, gemini_legacy
from tests.support.qwen_records import chain, compression, jsonl, model, record, result, system, turn, user

FIXTURES: Final = Path(__file__).resolve().parents[2] / "fixtures" / "qwen_code"
LIMITS: Final = LineLimits(max_line_bytes=1_000_000, max_json_depth=200)
PROJECT: Final = PurePath("/h/.qwen/projects/-w")


def _read(data: bytes) -> QwenAnalysis:
    return analyze_session(data, LIMITS)


def _roles(analysis: QwenAnalysis) -> list[str]:
    return [m.message["role"] for m in analysis.messages]


def _codes(analysis: QwenAnalysis) -> set[FindingCode]:
    return {f.code for f in analysis.findings}


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.jsonl")))
def test_real_sessions_read_without_findings_and_partition_every_line(name: str) -> None:
    analysis = _read((FIXTURES / name).read_bytes())
    assert analysis.findings == () and analysis.resumable
    version = name.removesuffix(".jsonl").removeprefix("v") if name.startswith("v") else "0.24.4"
    assert set(analysis.versions) == {version}
    assert analysis.plan_tail(room=0) is not None  # every one of them can be cut
    sets = analysis.sweep_sets()
    every = [line for lines in sets.values() for line in lines]
    assert sorted(every) == list(range(1, len(analysis.session) + 1))  # disjoint and complete


def test_the_history_sends_calls_responses_and_reasoning_as_qwen_code_converts_them() -> None:
    records = chain(user(1, "go"), model(2, "Looking.", ("c1", "ls"), thought="plan"), result(3, "c1", "a b"))
    analysis = _read(jsonl([*records, {**model(4, "done"), "parentUuid": "u3"}]))
    assistant = analysis.messages[1].message
    assert assistant == {
        "role": "assistant",
        "content": "Looking.",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "run_shell_command", "arguments": '{"command":"ls"}'},
            }
        ],
        "reasoning_content": "plan",
    }
    assert analysis.messages[2].message == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": [{"type": "text", "text": "a b"}],
    }
    assert _roles(analysis) == ["user", "assistant", "tool", "assistant"]


def test_the_leaf_is_the_last_record_and_a_rewound_branch_is_excluded() -> None:
    first = chain(*turn(1, "first", "one"))
    rewound = {**user(5, "abandoned"), "parentUuid": "u4"}
    retried = {**user(6, "second"), "parentUuid": "u4"}
    analysis = _read(jsonl([*first, rewound, retried]))
    texts = [m.message["content"][0]["text"] for m in analysis.messages if m.message["role"] == "user"]
    assert texts == ["first", "second"]
    assert analysis.sweep_sets()[PartitionSet.EXCLUDED_BRANCH] == frozenset({5})


def test_its_own_compression_replaces_the_history_before_it() -> None:
    records = chain(*turn(1, "old", "old done"), compression(5, "SUMMARY"), *turn(6, "new", "new done"))
    analysis = _read(jsonl(records))
    assert analysis.messages[0].message == {"role": "user", "content": [{"type": "text", "text": "SUMMARY"}]}
    assert _roles(analysis)[:3] == ["user", "assistant", "user"]
    assert analysis.rebuilt.base_line == 5
    assert analysis.sweep_sets()[PartitionSet.EXCLUDED_BRANCH] == frozenset({1, 2, 3, 4})


def test_a_local_slash_command_takes_its_command_line_back_out() -> None:
    payload = {"phase": "result", "rawCommand": "/stats", "outputHistoryItems": [{"type": "assistant"}]}
    records = chain(
        *turn(1, "work", "ok"), user(5, "/stats"), system(6, "slash_command", payload), user(7, "next")
    )
    analysis = _read(jsonl(records))
    texts = [
        p["text"] for m in analysis.messages if m.message["role"] == "user" for p in m.message["content"]
    ]
    assert texts == ["work", "next"]


def test_consecutive_user_contents_merge_and_an_invalid_model_run_is_dropped() -> None:
    empty = record("assistant", 3, message={"role": "model", "parts": [{"text": ""}]})
    analysis = _read(jsonl(chain(user(1, "a"), user(2, "b"), empty, user(4, "c"))))
    assert [m.message for m in analysis.messages] == [
        {"role": "user", "content": [{"type": "text", "text": t} for t in ("a", "b", "c")]}
    ]


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (
            '{"uuid": "u9", "parentUuid": "u1", "sessionId": "s", "type": "assistant"',
            FindingCode.LINE_TRUNCATED,
        ),
        ("not json at all", FindingCode.LINE_NOT_JSON),
        ("[1, 2]", FindingCode.LINE_NOT_OBJECT),
        ('{"uuid": 7, "parentUuid": null, "sessionId": "s", "type": "user"}', FindingCode.MALFORMED_UUID),
        ('{"uuid": "u9", "parentUuid": 3, "sessionId": "s", "type": "user"}', FindingCode.MALFORMED_PARENT),
        (
            '{"uuid": "u9", "parentUuid": null, "sessionId": "s", "type": "progress"}',
            FindingCode.UNKNOWN_RECORD,
        ),
    ],
)
def test_a_damaged_line_is_a_finding_at_its_line_never_an_error(line: str, code: FindingCode) -> None:
    records = chain(*turn(1, "go", "done"))
    analysis = _read(jsonl([*records[:2], line, *records[2:]]))
    assert [(f.code, f.line) for f in analysis.findings if f.code is code] == [(code, 3)]
    assert _roles(analysis) == ["user", "assistant", "tool", "assistant"]  # the rest still reads


@pytest.mark.parametrize(
    ("document", "layout"),
    [
        (gemini_legacy(), "tmp-chats-session-json"),
        (gemini_checkpoint(bare=False), "chat-save-checkpoint"),
        (gemini_checkpoint(bare=True), "chat-save-checkpoint"),
        ((FIXTURES / "v0.1.4.json").read_bytes(), "tmp-chats-session-json"),  # written by Qwen Code 0.1.4
    ],
)
def test_an_older_chat_or_a_checkpoint_document_is_one_finding_naming_its_layout_and_not_resumed(
    document: bytes, layout: str
) -> None:
    analysis = _read(document)
    assert [(f.code, f.severity, f.line, f.ids) for f in analysis.findings] == [
        (FindingCode.SESSION_DOCUMENT_NOT_RESUMED, Severity.WARNING, 1, (layout,))
    ]
    assert not analysis.resumable and analysis.messages == ()
    damaged = _read(document[: len(document) // 2])  # no longer a document: its lines say why
    assert FindingCode.SESSION_DOCUMENT_NOT_RESUMED not in _codes(damaged)
    assert FindingCode.NO_ACTIVE_CHAIN in _codes(damaged)


def test_a_missing_parent_a_cycle_and_mixed_sessions_are_findings() -> None:
    dangling = _read(jsonl([*chain(*turn(1, "go", "done"))[1:]]))
    assert FindingCode.DANGLING_PARENT in _codes(dangling) and dangling.resumable
    looped = chain(user(1, "a"), model(2, "b"))
    looped[0] = {**looped[0], "parentUuid": "u2"}
    cycled = _read(jsonl(looped))
    assert FindingCode.CHAIN_LOOP in _codes(cycled) and cycled.resumable  # the walk stops; Qwen Code resumes
    mixed = chain(user(1, "a"), {**model(2, "b"), "sessionId": "other"})
    analysis = _read(jsonl(mixed))
    assert FindingCode.CROSS_SESSION_PARENT in _codes(analysis) and not analysis.resumable


def test_an_unanswered_call_and_an_orphan_response_are_findings_and_qwen_code_mends_both() -> None:
    records = chain(user(1, "go"), model(2, "", ("c1", "ls")), user(3, "stop"), result(4, "c9", "late"))
    analysis = _read(jsonl(records))
    codes = {(f.code, f.ids) for f in analysis.findings}
    assert {
        (FindingCode.TOOL_USE_UNANSWERED, ("c1",)),
        (FindingCode.TOOL_RESULT_WITHOUT_USE, ("c9",)),
    } <= codes
    tools = [m.message for m in analysis.messages if m.message["role"] == "tool"]
    assert [(t["tool_call_id"], t["content"][0]["text"]) for t in tools] == [("c1", UNRECORDED_RESULT)]
    assert all(f.severity is not Severity.ERROR for f in analysis.findings)


def test_a_cut_keeps_a_verbatim_tail_after_the_summary_in_qwen_codes_own_form() -> None:
    original = _read((FIXTURES / "tools.jsonl").read_bytes())
    plan = original.plan_tail(room=200)
    assert plan is not None and plan.target_met and plan.first_item > 0
    candidate_bytes = original.compose(plan.cut_line, "SUMMARY-TEXT")
    candidate = _read(candidate_bytes)
    assert candidate.findings == ()
    expected = [summary_sent("SUMMARY-TEXT"), *original.items[plan.first_item :]]
    assert list(candidate.items) == expected
    head, kept = candidate_bytes.split(b"\n", 1)
    assert json.loads(head)["subtype"] == "chat_compression" and RESUME_INSTRUCTION in head.decode()
    source_tail = original.data.split(b"\n")[plan.cut_line :]  # the lines after the reparented one
    assert kept.split(b"\n")[1:] == source_tail
    reparented = json.loads(kept.split(b"\n", 1)[0])
    assert reparented["parentUuid"] == json.loads(head)["uuid"]


def test_the_sets_of_a_cut_summarize_the_sent_span_and_keep_the_rest_whole() -> None:
    original = _read((FIXTURES / "tools.jsonl").read_bytes())
    plan = original.plan_tail(room=200)
    assert plan is not None
    sets = original.compress_sets(plan.cut_line)
    assert sets[PartitionSet.RAW_KEEP] == frozenset(range(plan.cut_line, len(original.session) + 1))
    assert sets[PartitionSet.SUMMARY] == frozenset(
        line for line in original.context_lines() if line < plan.cut_line
    )
    every = sorted(line for lines in sets.values() for line in lines)
    assert every == list(range(1, len(original.session) + 1))


def test_no_room_gives_the_smallest_safe_tail_and_a_single_turn_has_no_cut() -> None:
    original = _read((FIXTURES / "tools.jsonl").read_bytes())
    smallest = original.plan_tail(room=0)
    assert smallest is not None and not smallest.target_met
    assert smallest.cut_line == original.cut_points()[-1][1]
    assert _read(jsonl(chain(user(1, "hi"), model(2, "hello")))).plan_tail(room=10_000) is not None
    assert _read(jsonl(chain(user(1, "hi")))).plan_tail(room=10_000) is None


def test_the_summary_message_is_what_qwen_code_sends_for_its_compression() -> None:
    assert summary_message("S")["content"][0]["text"] == f"S\n\n{RESUME_INSTRUCTION}"


def test_a_call_the_file_never_answers_is_sent_with_qwen_codes_failed_answer() -> None:
    analysis = _read(jsonl(chain(user(1, "go"), model(2, "", ("c1", "ls")))))
    assert analysis.messages[-1].message == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": [{"type": "text", "text": UNRECORDED_RESULT}],
    }
    assert FindingCode.TOOL_USE_UNANSWERED in _codes(analysis)


def test_a_response_written_after_a_later_prompt_is_moved_up_to_its_call() -> None:
    records = chain(
        user(1, "go"),
        model(2, "", ("c1", "ls"), ("c2", "pwd")),
        result(3, "c1", "x"),
        user(4, "note"),
        result(5, "c2", "y"),
        model(6, "done"),
    )
    messages = [m.message for m in _read(jsonl(records)).messages]
    assert [m.get("tool_call_id") for m in messages if m["role"] == "tool"] == ["c1", "c2"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "user", "assistant"]


@pytest.mark.parametrize(
    ("text", "tokens"), [("", 0), ("abcd", 1), ("abcde", 2), ("é", 2), ("日本", 3), ("ab日", 2), ("abc日", 3)]
)
def test_qwen_codes_estimate_counts_ascii_by_four_and_other_characters_by_one_and_a_half(
    text: str, tokens: int
) -> None:
    assert estimate_tokens(text) == tokens


def test_a_subagents_transcript_reads_alike_but_is_never_resumed_as_a_session() -> None:
    transcript = next(FIXTURES.glob("subagents/agent-*.jsonl"))  # written beside delegated.jsonl
    analysis = _read(transcript.read_bytes())
    assert analysis.findings == () and analysis.subagent and not analysis.resumable
    assert _roles(analysis) == ["user", "assistant"]  # the task it was given, its answer
    parent = _read((FIXTURES / "delegated.jsonl").read_bytes())
    assert parent.resumable and not parent.subagent
    assert {r.session_id for r in analysis.session.records} == {r.session_id for r in parent.session.records}


def test_where_a_transcript_lies_tells_a_subagents_too() -> None:
    unmarked = jsonl(chain(user(1, "count"), model(2, "ok")))  # records without `isSidechain`
    assert not _read(unmarked).subagent
    nested = analyze_session(
        unmarked, LIMITS, PROJECT / "subagents" / "s1" / "agent-general-purpose-c1.jsonl"
    )
    assert nested.subagent and not nested.resumable
    assert not analyze_session(unmarked, LIMITS, PROJECT / "chats" / "agent-c1.jsonl").subagent


def test_qwen_code_estimates_a_call_and_a_response_by_their_json_and_a_text_by_its_characters() -> None:
    call = {"id": "c1", "name": "run_shell_command", "args": {"command": "ls é"}}
    response = {"id": "c1", "name": "run_shell_command", "response": {"output": "a.txt"}}
    records = chain(
        user(1, "list 日本"),
        record("assistant", 2, message={"role": "model", "parts": [{"functionCall": call}]}),
        record("tool_result", 3, message={"role": "user", "parts": [{"functionResponse": response}]}),
    )
    tokens = [item.tokens for item in _read(jsonl(records)).items]
    as_json = '{"id":"c1","name":"run_shell_command",'  # 39 ASCII characters
    assert tokens == [
        estimate_tokens("list 日本"),  # 5 ASCII / 4 + 2 x 1.5: 5
        estimate_tokens(as_json + '"args":{"command":"ls é"}}'),  # Qwen Code's JSON.stringify(functionCall)
        estimate_tokens(as_json + '"response":{"output":"a.txt"}}'),  # JSON.stringify({id, name, response})
    ]
    assert tokens[0] == 5
