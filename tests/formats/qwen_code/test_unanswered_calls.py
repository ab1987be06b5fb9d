"""Qwen Code's `repair`: the failed response Qwen Code synthesizes for an unanswered call on every
load, written into the file. The re-read file sends the very history the damaged one sent (Qwen
Code's own repair included), holds no `tool-use-unanswered`, and keeps every other line byte for
byte but the one `parentUuid` that re-links the call's successor to the new record."""

from __future__ import annotations

import json
from typing import Final

from pipeline.agents.qwen_code import QWEN_CODE
from pipeline.formats.line_guard import LineLimits
from pipeline.formats.qwen_code.call_repair import UNRECORDED_RESULT
from pipeline.formats.qwen_code.session_analysis import analyze_session
from pipeline.formats.qwen_code.unanswered_calls import SYNTHESIZED_RESPONSE, answer_unanswered_calls
from pipeline.formats.rewrites import Rewrite, RewriteKind
from pipeline.vocabulary import FindingCode
from tests.support.qwen_records import chain, jsonl, model, result, turn, user

LIMITS: Final = LineLimits(max_line_bytes=1_000_000, max_json_depth=200)


def _repaired(data: bytes) -> Rewrite:
    rewrite = answer_unanswered_calls(analyze_session(data, LIMITS))
    assert rewrite is not None
    return rewrite


def _sent(data: bytes) -> list[str]:
    return [item.digest for item in QWEN_CODE.read(data, None, LIMITS).sent()]


def _codes(data: bytes) -> set[FindingCode]:
    return {finding.code for finding in QWEN_CODE.read(data, None, LIMITS).findings}


def test_a_call_left_open_mid_session_is_answered_where_qwen_code_answers_it() -> None:
    data = jsonl(chain(user(1, "go"), model(2, "", ("c1", "ls"), ("c2", "pwd")), result(3, "c1", "a"), user(4, "stop"), model(5, "ok")))  # fmt: skip
    assert FindingCode.TOOL_USE_UNANSWERED in _codes(data)
    rewrite = _repaired(data)
    assert rewrite.kind is RewriteKind.REPAIR and rewrite.repaired == {FindingCode.TOOL_USE_UNANSWERED}
    assert [(e.line, e.change, e.count) for e in rewrite.edits] == [(2, SYNTHESIZED_RESPONSE, 1)]
    assert _sent(rewrite.data) == _sent(data) and FindingCode.TOOL_USE_UNANSWERED not in _codes(rewrite.data)
    before, after = data.splitlines(), rewrite.data.splitlines()
    assert len(after) == len(before) and after[:2] == before[:2] and after[3:] == before[3:]
    record = json.loads(after[2])  # the adjacent response record: the answer appended to its parts
    assert {**record, "message": None} == {**json.loads(before[2]), "message": None}
    response = record["message"]["parts"][-1]["functionResponse"]
    assert response == {"id": "c2", "name": "run_shell_command", "response": {"error": UNRECORDED_RESULT}}


def test_after_a_prompt_the_answer_is_a_record_of_its_own_the_prompt_relinked_to_it() -> None:
    data = jsonl(chain(user(1, "go"), model(2, "", ("c1", "ls")), user(3, "stop"), model(4, "ok")))
    rewrite = _repaired(data)
    assert _sent(rewrite.data) == _sent(data) and FindingCode.TOOL_USE_UNANSWERED not in _codes(rewrite.data)
    before, after = data.splitlines(), rewrite.data.splitlines()
    inserted = json.loads(after[2])
    assert inserted["type"] == "tool_result" and inserted["parentUuid"] == "u2"
    assert inserted["message"]["parts"][0]["functionResponse"]["id"] == "c1"
    assert after[3] == before[2].replace(b'"parentUuid":"u2"', f'"parentUuid":"{inserted["uuid"]}"'.encode())
    assert after[:2] == before[:2] and after[4:] == before[3:]


def test_a_call_the_session_ends_on_is_answered_by_a_last_record() -> None:
    data = jsonl(chain(*turn(1, "a", "b"), user(5, "again"), model(6, "", ("c9", "sleep 100"))))
    rewrite = _repaired(data)
    assert rewrite.data.startswith(data) and rewrite.data.count(b"\n") == data.count(b"\n") + 1
    assert _sent(rewrite.data) == _sent(data) and _codes(rewrite.data) == _codes(data) - {
        FindingCode.TOOL_USE_UNANSWERED
    }
    assert answer_unanswered_calls(analyze_session(rewrite.data, LIMITS)) is None  # nothing left: idempotent


def test_a_session_with_every_call_answered_has_nothing_to_repair() -> None:
    data = jsonl(chain(*turn(1, "a", "b"), *turn(5, "c", "d")))
    assert QWEN_CODE.read(data, None, LIMITS).rewrite(RewriteKind.REPAIR, LIMITS) is None
    assert QWEN_CODE.read(data, None, LIMITS).rewrite(RewriteKind.VACUUM, LIMITS) is None  # no vacuum


def test_the_answer_goes_into_the_adjacent_content_before_answers_qwen_code_moves_up_after_it() -> None:
    # Qwen Code answers c3 inside the content adjacent to the call, then moves c2 up behind it:
    # the history sends c1, c3, c2; the answer's record goes between the two response records.
    calls = model(2, "", ("c1", "a"), ("c2", "b"), ("c3", "c"))
    data = jsonl(chain(user(1, "go"), calls, result(3, "c1", "x"), result(4, "c2", "y"), model(5, "done")))
    rewrite = _repaired(data)
    assert _sent(rewrite.data) == _sent(data)
    lines = rewrite.data.splitlines()  # c3 answered in the adjacent record, c2's left where it is
    assert b'"id":"c3"' in lines[2] and b'"id":"c2"' in lines[3] and len(lines) == len(data.splitlines())


def test_an_adjacent_content_of_responses_and_text_is_left_as_it_is() -> None:
    mixed = result(3, "c1", "x")
    mixed["message"]["parts"].append({"text": "and a note"})
    data = jsonl(chain(user(1, "go"), model(2, "", ("c1", "a"), ("c2", "b")), mixed, model(4, "done")))
    assert FindingCode.TOOL_USE_UNANSWERED in _codes(data)
    assert answer_unanswered_calls(analyze_session(data, LIMITS)) is None
