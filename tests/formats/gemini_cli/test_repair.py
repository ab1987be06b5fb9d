"""Repair closes the calls a Gemini CLI session left open as Gemini CLI closes a cancelled one:
the original's lines stay, the history sent gains only the closing responses, declared item by
item, and the real client sends the repaired history, each call answered. A run the real client
was killed in leaves no call open: Gemini CLI 0.61 records a reply's calls only once all are done."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from pipeline.formats.gemini_cli.chat_analysis import analyze_chat
from pipeline.formats.gemini_cli.history import INTERRUPTED_PLACEHOLDER, coalesce
from pipeline.formats.gemini_cli.repair import CANCELLED_ERROR, RepairOutcome, RepairRefusal, repair
from pipeline.formats.line_guard import LineLimits
from pipeline.formats.rewrites import SentEdit, expected_sent
from pipeline.proof.gemini_cli.resume import resume_gemini
from pipeline.vocabulary import FindingCode
from tests.support.gemini_files import (
    LEGACY_CORPUS,
    fixture,
    gemini_cli,
    with_lines,
    with_open_calls,
    with_pairing_defects,
)

LIMITS = LineLimits(64 << 20, 256)
CLOSING = {"functionResponse": {"id": "c1", "name": "read_file", "response": {"error": CANCELLED_ERROR}}}


def _codes(data: bytes) -> set[tuple[FindingCode, tuple[str, ...]]]:
    return {(f.code, f.ids) for f in analyze_chat(data, LIMITS).findings}


def test_an_open_call_is_closed_by_one_appended_update_and_only_its_response_is_added() -> None:
    data = with_pairing_defects(fixture("tools.jsonl"))
    result = repair(data, LIMITS)
    assert result.outcome is RepairOutcome.REPAIRED and result.data.startswith(data)
    assert result.data.count(b"\n") == data.count(b"\n") + 1  # the message again, under its id
    (closed,) = result.closed
    assert (closed.line, closed.call_id, closed.name) == (3, "c1", "read_file")
    assert set(closed.codes) == {FindingCode.TOOL_USE_UNANSWERED, FindingCode.TURN_UNFINISHED}
    assert _codes(result.data) == {(FindingCode.TOOL_RESULT_WITHOUT_USE, ("c9",))}  # a stray stays
    before = coalesce(analyze_chat(data, LIMITS).turns)
    after = coalesce(analyze_chat(result.data, LIMITS).turns)
    assert after[2]["parts"] == [CLOSING, *before[2]["parts"]]  # answered before the next prompt
    assert after[:2] == before[:2] and after[3:] == before[3:]
    assert result.sent == (SentEdit(2, orjson.dumps({"parts": [CLOSING], "role": "user"})),)  # inserted
    assert repair(result.data, LIMITS).outcome is RepairOutcome.UNCHANGED


def test_a_recorded_result_is_kept_and_only_its_status_made_final() -> None:
    lines = [orjson.loads(line) for line in fixture("tools.jsonl").read_bytes().splitlines()]
    message = next(r for r in reversed(lines) if r.get("toolCalls"))
    unfinished = {**message, "toolCalls": [{**c, "status": "executing"} for c in message["toolCalls"]]}
    data = with_lines(fixture("tools.jsonl"), unfinished)
    assert {code for code, _ in _codes(data)} == {FindingCode.TURN_UNFINISHED}
    result = repair(data, LIMITS)
    assert result.outcome is RepairOutcome.REPAIRED and _codes(result.data) == set()
    assert analyze_chat(result.data, LIMITS).sent() == analyze_chat(data, LIMITS).sent()


@pytest.mark.parametrize(
    "name", ["tools.jsonl", "compressed.jsonl", "rewound.jsonl", "long.jsonl", "killed.jsonl"]
)
def test_a_session_with_every_call_answered_is_left_as_it_is(name: str) -> None:
    data = fixture(name).read_bytes()
    assert repair(data, LIMITS) == repair(data, LIMITS) and repair(data, LIMITS).data is data
    assert repair(data, LIMITS).outcome is RepairOutcome.UNCHANGED


def test_a_call_of_a_reply_half_done_is_closed_and_its_results_turn_declared_in_place() -> None:
    """The calls as Gemini CLI names them (`name__name_<ms>_<n>`, sent without the prefix): the read
    answered, the command still running; its cancelled response joins the read's in one turn."""
    data = with_open_calls(fixture("killed.jsonl"))
    result = repair(data, LIMITS)
    assert result.outcome is RepairOutcome.REPAIRED and _codes(result.data) == set()
    (closed,) = result.closed
    assert closed.name == "run_shell_command" and closed.call_id.startswith("run_shell_command__")
    (declared,) = result.sent
    assert (declared.position, declared.replaces) == (2, True)
    before, after = analyze_chat(data, LIMITS), analyze_chat(result.data, LIMITS)
    assert [i.digest for i in after.sent()] == expected_sent([i.digest for i in before.sent()], result.sent)
    assert [i.digest for i in after.sent()] != [i.digest for i in before.sent()]
    parts = orjson.loads(declared.item)["parts"]
    assert parts[0] == before.turns[2].content["parts"][0]  # the read's answer, as it was
    assert parts[1]["functionResponse"]["response"] == {"error": CANCELLED_ERROR}


@pytest.mark.parametrize(
    ("extra", "refusal"),
    [
        (b'{"id": "x", "type": "us\n', RepairRefusal.DAMAGED_LINES),
        ({"note": 1}, RepairRefusal.UNKNOWN_RECORDS),
    ],
)
def test_repair_never_writes_over_a_line_it_cannot_read(extra: object, refusal: RepairRefusal) -> None:
    call = {"id": "c1", "name": "read_file", "args": {}, "status": "executing"}
    open_call = {"id": "m9", "timestamp": "t", "type": "gemini", "content": "", "toolCalls": [call]}
    data = with_lines(fixture("tools.jsonl"), extra, open_call)
    result = repair(data, LIMITS)
    assert (result.outcome, result.refusal, result.data) == (RepairOutcome.REFUSED, refusal, data)


def test_repair_leaves_a_legacy_document_and_a_checkpoint_and_refuses_what_is_no_session() -> None:
    checkpoint = fixture("checkpoint-fixture-tag.json").read_bytes()
    assert repair(checkpoint, LIMITS).outcome is RepairOutcome.UNCHANGED
    if LEGACY_CORPUS.is_file():
        assert repair(LEGACY_CORPUS.read_bytes(), LIMITS).outcome is RepairOutcome.UNCHANGED
    lone = orjson.dumps({"$set": {"lastUpdated": "x"}}) + b"\n"
    assert repair(lone, LIMITS).refusal is RepairRefusal.NOT_A_SESSION


def _in_a_snapshot(data: bytes) -> bytes:
    """The same session as Gemini CLI leaves it after a resume: its messages in one `$set` snapshot."""
    header, *messages = [orjson.loads(line) for line in data.splitlines()]
    return orjson.dumps(header) + b"\n" + orjson.dumps({"$set": {"messages": messages}}) + b"\n"


@pytest.mark.parametrize("layout", ["records", "snapshot", "ending"])
def test_the_real_client_sends_the_repaired_history_each_call_answered(layout: str, tmp_path: Path) -> None:
    """`ending`: the open call is the session's last message, so the repaired history ends with
    its response and Gemini CLI puts its placeholder reply after it (the reader too)."""
    script = gemini_cli()
    damaged = with_pairing_defects(fixture("tools.jsonl"))
    damaged = _in_a_snapshot(damaged) if layout == "snapshot" else damaged
    damaged = b"".join(damaged.splitlines(keepends=True)[:3]) if layout == "ending" else damaged
    result = repair(damaged, LIMITS)
    assert result.outcome is RepairOutcome.REPAIRED
    path = tmp_path / "session-2026-12-07T10-00-repaired.jsonl"
    path.write_bytes(result.data)
    resumed = resume_gemini(path, script=script, timeout=120)
    assert resumed.resumed, resumed.stderr[-2000:]
    sent = [dict(content) for content in resumed.context]
    assert sent == coalesce(analyze_chat(path.read_bytes(), LIMITS).turns)
    assert sent[1]["parts"][0]["functionCall"]["id"] == "c1" and sent[2]["parts"][0] == CLOSING
    if layout == "ending":
        assert sent[3] == {"role": "model", "parts": [{"text": INTERRUPTED_PLACEHOLDER}]}
        assert [e.replaces for e in result.sent] == [False, False]  # the response, the placeholder
