"""Qwen Code's `repair`: the repair Qwen Code makes to its calls' answers on every load (a failed
response for a call never answered, a late answer moved up to its call, a second answer dropped),
written into the file. The re-read file sends the very history the damaged one sent (Qwen Code's
own repair included), holds none of the repaired findings, and keeps every other line byte for
byte: only the records whose parts change and the one `parentUuid` that re-links a new record's
successor. The real Qwen Code's proof is `tests/proof/qwen_code/test_answer_repair_proof.py`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

import pytest

from pipeline.agents.qwen_code import QWEN_CODE
from pipeline.formats.line_guard import LineLimits
from pipeline.formats.qwen_code.answer_repair import (
    DROPPED_DUPLICATE,
    MOVED_RESPONSE,
    SYNTHESIZED_RESPONSE,
    repair_answers,
)
from pipeline.formats.qwen_code.call_repair import UNRECORDED_RESULT
from pipeline.formats.qwen_code.session_analysis import analyze_session
from pipeline.formats.rewrites import Rewrite, RewriteKind
from pipeline.vocabulary import FindingCode
from tests.support.qwen_damage import DAMAGED
from tests.support.qwen_records import chain, jsonl, model, result, turn, user

LIMITS: Final = LineLimits(max_line_bytes=1_000_000, max_json_depth=200)
FIXTURES: Final = Path(__file__).resolve().parents[2] / "fixtures" / "qwen_code"


def _repaired(data: bytes) -> Rewrite:
    rewrite = repair_answers(analyze_session(data, LIMITS))
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
    assert repair_answers(analyze_session(rewrite.data, LIMITS)) is None  # nothing left: idempotent


def test_a_session_with_every_call_answered_has_nothing_to_repair() -> None:
    data = jsonl(chain(*turn(1, "a", "b"), *turn(5, "c", "d")))
    assert QWEN_CODE.read(data, None, LIMITS).rewrite(RewriteKind.REPAIR, LIMITS) is None
    assert QWEN_CODE.read(data, None, LIMITS).rewrite(RewriteKind.VACUUM, LIMITS) is None  # no vacuum


def test_a_turn_is_written_whole_as_qwen_code_repairs_it_the_moved_answer_after_the_synthesized() -> None:
    # Qwen Code answers c3 inside the content adjacent to the call, then moves c2 up behind it:
    # the history sends c1, c3, c2. Written whole, the file holds them so, and c2's record stays
    # (its other fields with it), its parts emptied.
    calls = model(2, "", ("c1", "a"), ("c2", "b"), ("c3", "c"))
    data = jsonl(chain(user(1, "go"), calls, result(3, "c1", "x"), result(4, "c2", "y"), model(5, "done")))
    rewrite = _repaired(data)
    assert _sent(rewrite.data) == _sent(data)
    before, after = data.splitlines(), rewrite.data.splitlines()
    ids = [p["functionResponse"]["id"] for p in json.loads(after[2])["message"]["parts"]]
    assert ids == ["c1", "c3", "c2"] and json.loads(after[3])["message"]["parts"] == []
    assert {**json.loads(after[3]), "message": None} == {**json.loads(before[3]), "message": None}
    assert [(e.line, e.code, e.change) for e in rewrite.edits] == [
        (2, FindingCode.TOOL_USE_UNANSWERED, SYNTHESIZED_RESPONSE),
        (4, None, MOVED_RESPONSE),  # no defect of its own: moved to keep the order Qwen Code sends
    ]


def test_an_answer_goes_before_the_first_part_of_the_adjacent_content_that_is_no_answer() -> None:
    mixed = result(3, "c1", "x")
    mixed["message"]["parts"].append({"text": "and a note"})
    data = jsonl(chain(user(1, "go"), model(2, "", ("c1", "a"), ("c2", "b")), mixed, model(4, "done")))
    assert FindingCode.TOOL_USE_UNANSWERED in _codes(data)
    rewrite = _repaired(data)
    assert _sent(rewrite.data) == _sent(data) and FindingCode.TOOL_USE_UNANSWERED not in _codes(rewrite.data)
    parts = json.loads(rewrite.data.splitlines()[2])["message"]["parts"]
    assert [next(iter(p)) for p in parts] == ["functionResponse", "functionResponse", "text"]
    assert parts[1]["functionResponse"]["id"] == "c2"


def _edits(rewrite: Rewrite) -> list[tuple[int, FindingCode | None, str]]:
    return [(e.line, e.code, e.change) for e in rewrite.edits]


def test_an_answer_written_after_the_next_prompt_moves_up_to_its_call() -> None:
    records = chain(
        user(1, "go"), model(2, "", ("c1", "ls"), ("c2", "pwd")), result(3, "c1", "x"),
        user(4, "note"), result(5, "c2", "y"), model(6, "done"),
    )  # fmt: skip
    data = jsonl(records)
    late = [
        f for f in QWEN_CODE.read(data, None, LIMITS).findings if f.code is FindingCode.TOOL_RESULT_NOT_FIRST
    ]
    assert [(f.line, f.ids) for f in late] == [(5, ("c2",))]
    rewrite = _repaired(data)
    assert _edits(rewrite) == [(5, FindingCode.TOOL_RESULT_NOT_FIRST, MOVED_RESPONSE)]
    assert _sent(rewrite.data) == _sent(data) and FindingCode.TOOL_RESULT_NOT_FIRST not in _codes(
        rewrite.data
    )
    before, after = data.splitlines(), rewrite.data.splitlines()
    assert [i for i, (b, a) in enumerate(zip(before, after, strict=True)) if b != a] == [2, 4]
    assert json.loads(after[2])["message"]["parts"][1] == json.loads(before[4])["message"]["parts"][0]


def test_a_second_answer_to_a_call_is_dropped_as_qwen_code_drops_it() -> None:
    data = jsonl(chain(user(1, "go"), model(2, "", ("c1", "ls")), result(3, "c1", "x"), result(4, "c1", "x again"), model(5, "ok")))  # fmt: skip
    assert FindingCode.TOOL_RESULT_ID_DUPLICATE in _codes(data)
    rewrite = _repaired(data)
    assert _edits(rewrite) == [(4, FindingCode.TOOL_RESULT_ID_DUPLICATE, DROPPED_DUPLICATE)]
    assert _sent(rewrite.data) == _sent(data) and FindingCode.TOOL_RESULT_ID_DUPLICATE not in _codes(
        rewrite.data
    )
    before, after = data.splitlines(), rewrite.data.splitlines()
    assert after[:3] == before[:3] and after[4:] == before[4:]
    assert repair_answers(analyze_session(rewrite.data, LIMITS)) is None  # nothing left: idempotent


def test_parallel_answers_in_records_of_their_own_are_how_qwen_code_writes_them_no_defect() -> None:
    real = (FIXTURES / "tools.jsonl").read_bytes()  # call_2_0 and call_2_1 answered one record each
    analysis = analyze_session(real, LIMITS)
    assert any(turn.hoisted for turn in analysis.repairs)  # Qwen Code gathers them before sending
    assert analysis.findings == () and repair_answers(analysis) is None


@pytest.mark.parametrize("name", sorted(DAMAGED))
def test_a_damaged_copy_of_a_real_session_is_repaired_to_send_the_same_every_other_line_kept(
    name: str,
) -> None:
    damaged = DAMAGED[name]()
    rewrite = _repaired(damaged)
    assert rewrite.repaired and _sent(rewrite.data) == _sent(damaged)
    assert _codes(rewrite.data) == set()  # the real session's own findings: none
    before, after = damaged.splitlines(), rewrite.data.splitlines()
    changed = [line for line in before if line not in set(after)]
    assert 1 <= len(changed) <= 2 and len(after) - len(before) in (0, 1)
    shapes = [_but_parts_and_parent(line) for line in after]
    assert all(_but_parts_and_parent(line) in shapes for line in changed)  # nothing else of them


def _but_parts_and_parent(line: bytes) -> dict[str, object]:
    record = json.loads(line)
    record.pop("parentUuid")
    if isinstance(record.get("message"), dict):
        record["message"] = {k: v for k, v in record["message"].items() if k != "parts"}
    return record
