"""pi's repair of unanswered calls written into the file: the result pi synthesizes on every
request becomes a `toolResult` entry where pi places it, every other line kept byte for byte (the
closing entry's link aside), and pi's context is the same message for message."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from pipeline.formats.pi.call_repair import AnsweredCall, repair_calls
from pipeline.formats.pi.session_analysis import analyze_session
from pipeline.vocabulary import FindingCode
from tests.support.pi_files import CORPUS, FIXTURES, LIMITS, ended_mid_tool, lost_result, pi_session_files

TOOLS = FIXTURES / "tools.jsonl"
PI_MONO_V1 = (
    CORPUS / "files" / "badlogic__pi-mono__packages_coding-agent_test_fixtures_before-compaction.jsonl"
)


def _unanswered(data: bytes) -> list[tuple[int | None, tuple[str, ...]]]:
    findings = analyze_session(data, LIMITS).findings
    return [(f.line, f.ids) for f in findings if f.code is FindingCode.TOOL_USE_UNANSWERED]


def test_a_result_lost_mid_session_is_written_before_the_message_that_closes_the_turn() -> None:
    damaged = lost_result(TOOLS.read_bytes(), 16)  # call_two's result, beside call_one's
    assert _unanswered(damaged) == [(14, ("call_two",))]
    repair = repair_calls(analyze_session(damaged, LIMITS), LIMITS)
    assert repair is not None and repair.answered == (AnsweredCall(14, "call_two", 16),)
    before, after = damaged.splitlines(), repair.data.splitlines()
    written = orjson.loads(after[15])
    assert written["parentId"] == orjson.loads(before[14])["id"]  # call_one's result
    assert written["message"] | {"timestamp": 0} == {
        "role": "toolResult",
        "toolCallId": "call_two",
        "toolName": "bash",
        "content": [{"type": "text", "text": "No result provided"}],
        "isError": True,
        "timestamp": 0,
    }
    closer = orjson.loads(after[16])
    assert closer["parentId"] == written["id"]
    assert after[16].replace(written["id"].encode(), orjson.loads(before[14])["id"].encode()) == before[15]
    assert after[:15] == before[:15] and after[17:] == before[16:]
    repaired = analyze_session(repair.data, LIMITS)
    assert repaired.context_digests() == analyze_session(damaged, LIMITS).context_digests()
    assert repaired.findings == ()


def test_a_session_that_ended_mid_tool_gets_the_result_after_its_leaf() -> None:
    damaged = ended_mid_tool(TOOLS.read_bytes(), 12)  # "Run the check script": the call, no result
    repair = repair_calls(analyze_session(damaged, LIMITS), LIMITS)
    assert repair is not None and repair.answered == (AnsweredCall(12, "call_check", 13),)
    assert repair.data.startswith(damaged) and repair.data.count(b"\n") == damaged.count(b"\n") + 1
    written = orjson.loads(repair.data.splitlines()[-1])
    assert written["parentId"] == orjson.loads(damaged.splitlines()[-1])["id"]  # pi's leaf
    repaired = analyze_session(repair.data, LIMITS)
    assert repaired.branch.leaf is not None and repaired.branch.leaf.entry_id == written["id"]
    assert repaired.context_digests() == analyze_session(damaged, LIMITS).context_digests()
    assert _unanswered(repair.data) == []


def test_a_version_1_file_gets_the_result_in_file_order_and_its_compaction_still_keeps_the_same() -> None:
    original = PI_MONO_V1.read_bytes()
    assert _unanswered(original) == [(628, ("toolu_01571BXn2nSXvrR7sxVHAXXE",))]
    repair = repair_calls(analyze_session(original, LIMITS), LIMITS)
    assert repair is not None and [call.result_line for call in repair.answered] == [630]
    lines = repair.data.splitlines()
    assert b"\n".join([*lines[:629], *lines[630:]]) + b"\n" == original  # one line inserted, no other change
    assert "id" not in orjson.loads(lines[629])  # entries below version 2 carry no links
    repaired = analyze_session(repair.data, LIMITS)
    assert repaired.context_digests() == analyze_session(original, LIMITS).context_digests()
    assert repaired.findings == ()


@pytest.mark.parametrize(
    "path", [p for p in pi_session_files() if p != PI_MONO_V1], ids=lambda p: p.name[-48:]
)
def test_a_session_with_every_call_answered_has_nothing_to_repair(path: Path) -> None:
    assert repair_calls(analyze_session(path.read_bytes(), LIMITS), LIMITS) is None
