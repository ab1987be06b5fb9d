"""Reading pi sessions: every line decoded or reported, the branch pi resumes, the sets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from pipeline.formats.pi.branch import active_branch
from pipeline.formats.pi.session_analysis import analyze_session
from pipeline.formats.pi.session_decode import PiKind, decode_session
from pipeline.vocabulary import FindingCode, PartitionSet, Severity
from tests.support.pi_files import CORPUS, FIXTURES, LIMITS, pi_session_files

HEADER: dict[str, Any] = {"type": "session", "version": 3, "id": "s-1", "timestamp": "t", "cwd": "/w"}


def _message(entry_id: str, parent: str | None, role: str, content: Any, **extra: Any) -> dict[str, Any]:
    message = {"role": role, "content": content, **extra}
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": "t", "message": message}


def _user(entry_id: str, parent: str | None, text: str) -> dict[str, Any]:
    return _message(entry_id, parent, "user", [{"type": "text", "text": text}])


def _assistant(entry_id: str, parent: str | None, text: str, *calls: str, **extra: Any) -> dict[str, Any]:
    blocks: list[Any] = [{"type": "text", "text": text}]
    blocks += [{"type": "toolCall", "id": c, "name": "bash", "arguments": {"command": "ls"}} for c in calls]
    return _message(entry_id, parent, "assistant", blocks, provider="p", api="a", model="m", **extra)


def _result(entry_id: str, parent: str | None, call: str, text: str) -> dict[str, Any]:
    content = [{"type": "text", "text": text}]
    return _message(entry_id, parent, "toolResult", content, toolCallId=call, toolName="bash")


def _file(*records: dict[str, Any]) -> bytes:
    return b"".join(orjson.dumps(record) + b"\n" for record in records)


def _texts(data: bytes) -> list[str]:
    analysis = analyze_session(data, LIMITS)
    out = []
    for message in analysis.messages:
        content = message.body["content"]
        out.append(content if isinstance(content, str) else content[0]["text"] if content else "")
    return out


def _codes(data: bytes) -> list[FindingCode]:
    return [finding.code for finding in analyze_session(data, LIMITS).findings]


def test_pi_resumes_the_branch_of_the_last_entry_not_the_longest() -> None:
    data = _file(
        HEADER,
        _user("a", None, "start"),
        _assistant("b", "a", "first answer"),
        _user("c", "b", "abandoned question"),
        _assistant("d", "c", "abandoned answer"),
        _user("e", "b", "the branch taken"),
    )
    assert _texts(data) == ["start", "first answer", "the branch taken"]
    sets = analyze_session(data, LIMITS).sweep_sets()
    assert sets[PartitionSet.EXCLUDED_BRANCH] == {4, 5}
    assert sets[PartitionSet.RAW_KEEP] == {2, 3, 6}
    assert sets[PartitionSet.CONTROL_PROJECTION] == {1}


def test_the_latest_compaction_stands_for_what_it_summarized_and_keeps_from_its_first_kept_entry() -> None:
    compaction = {"type": "compaction", "id": "k", "parentId": "d", "timestamp": "t", "summary": "SUM"}
    data = _file(
        HEADER,
        _user("a", None, "old"),
        _assistant("b", "a", "old answer"),
        _user("c", "b", "kept"),
        _assistant("d", "c", "kept answer"),
        {**compaction, "firstKeptEntryId": "c", "tokensBefore": 10},
        _user("e", "k", "after"),
    )
    texts = _texts(data)
    assert texts[0].endswith("<summary>\nSUM\n</summary>")
    assert texts[1:] == ["kept", "kept answer", "after"]
    sets = analyze_session(data, LIMITS).sweep_sets()
    assert sets[PartitionSet.EXCLUDED_BRANCH] == {2, 3}
    assert sets[PartitionSet.RAW_KEEP] == {4, 5, 6, 7}


def test_a_first_kept_entry_off_the_branch_is_a_finding_and_keeps_nothing_before_the_compaction() -> None:
    compaction = {"type": "compaction", "id": "k", "parentId": "a", "summary": "S", "firstKeptEntryId": "zz"}
    data = _file(HEADER, _user("a", None, "old"), compaction, _user("e", "k", "after"))
    assert _texts(data)[1:] == ["after"]
    assert FindingCode.COMPACTION_KEPT_MISSING in _codes(data)


def test_an_unanswered_call_gets_pis_synthetic_error_result_and_a_finding() -> None:
    data = _file(
        HEADER, _user("a", None, "go"), _assistant("b", "a", "calling", "call_1"), _user("c", "b", "next")
    )
    analysis = analyze_session(data, LIMITS)
    tool = analysis.messages[2]
    assert tool.body == {"role": "tool", "content": "No result provided", "tool_call_id": "call_1"}
    assert tool.line == 3
    unanswered = [f for f in analysis.findings if f.code is FindingCode.TOOL_USE_UNANSWERED]
    assert [(f.line, f.ids) for f in unanswered] == [(3, ("call_1",))]


def test_an_errored_assistant_turn_is_read_but_not_sent() -> None:
    errored = _assistant("b", "a", "partial", "call_x", stopReason="error")
    data = _file(HEADER, _user("a", None, "go"), errored, _user("c", "b", "again"))
    assert _texts(data) == ["go", "again"]
    assert analyze_session(data, LIMITS).sweep_sets()[PartitionSet.CONTROL_PROJECTION] == {1, 3}


def test_two_records_run_together_are_one_finding_and_the_session_goes_on() -> None:
    joined = orjson.dumps(_user("b", "a", "lost")) + orjson.dumps(_user("c", "b", "lost too"))
    data = _file(HEADER, _user("a", None, "kept")) + joined + b"\n" + _file(_user("d", "a", "after"))
    findings = analyze_session(data, LIMITS).findings
    assert [(f.code, f.line, f.severity) for f in findings if f.line == 3] == [
        (FindingCode.LINE_RECORDS_JOINED, 3, Severity.ERROR)
    ]
    assert _texts(data) == ["kept", "after"]


def test_a_parent_cycle_stops_the_walk_with_a_finding() -> None:
    data = _file(HEADER, _user("a", "b", "one"), _user("b", "a", "two"))
    assert FindingCode.CHAIN_LOOP in _codes(data)


def test_a_version_one_file_is_linked_in_file_order_as_pi_migrates_it() -> None:
    header = {"type": "session", "id": "s", "timestamp": "t", "cwd": "/w"}
    records = [
        {"type": "message", "timestamp": "t", "message": m} for m in ({"role": "user", "content": "one"},)
    ]
    data = _file(header, *records, {"type": "message", "message": {"role": "user", "content": "two"}})
    session = decode_session(data, LIMITS)
    assert [(e.entry_id, e.parent_id) for e in session.entries[1:]] == [("L2", None), ("L3", "L2")]
    assert _texts(data) == ["one", "two"]


@pytest.mark.parametrize("path", pi_session_files(), ids=lambda p: p.name[-48:])
def test_every_real_session_is_read_with_disjoint_complete_sets(path: Path) -> None:
    analysis = analyze_session(path.read_bytes(), LIMITS)
    sets = analysis.sweep_sets()
    every = [line for lines in sets.values() for line in lines]
    assert sorted(every) == list(range(1, len(analysis.session) + 1))
    assert analysis.messages, "pi sends at least one message for every real session"


def test_the_damaged_corpus_lines_are_the_joined_ones_the_manifest_counts() -> None:
    damaged = {}
    for path in pi_session_files():
        analysis = analyze_session(path.read_bytes(), LIMITS)
        errors = [f for f in analysis.findings if f.severity is Severity.ERROR]
        if errors:
            damaged[path.name] = [(f.code, f.line) for f in errors]
    assert damaged == {
        "badlogic__pi-mono__compact.jsonl": [(FindingCode.LINE_RECORDS_JOINED, 1013)],
        "badlogic__pi-mono__session.jsonl": [(FindingCode.LINE_RECORDS_JOINED, 440)],
    }


def test_the_pi_written_compaction_fixture_rebuilds_from_its_second_compaction() -> None:
    session = decode_session((FIXTURES / "compacted.jsonl").read_bytes(), LIMITS)
    compactions = [e for e in session.entries if e.kind is PiKind.COMPACTION]
    branch = active_branch(session)
    assert len(compactions) == 2
    assert branch.compaction is compactions[-1]
    assert (
        branch.kept_from is not None
        and branch.kept_from.entry_id == compactions[-1].record["firstKeptEntryId"]
    )
    assert CORPUS.is_dir()


def test_a_lone_surrogate_is_dropped_from_what_pi_sends_as_its_sanitizer_does() -> None:
    line = b'{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"x\\ud800y"}}'
    data = orjson.dumps(HEADER) + b"\n" + line + b"\n"
    assert _texts(data) == ["xy"]


def test_the_pi_branched_fixture_resumes_the_branch_with_its_summary_custom_message_and_edit() -> None:
    analysis = analyze_session((FIXTURES / "branched.jsonl").read_bytes(), LIMITS)
    kinds = {entry.kind for entry in analysis.branch.path}
    assert {PiKind.BRANCH_SUMMARY, PiKind.CUSTOM_MESSAGE, PiKind.CONTEXT_EDIT, PiKind.SESSION_INFO} <= kinds
    texts = _texts((FIXTURES / "branched.jsonl").read_bytes())
    assert "notes.txt: tidy, test, ship (edited)" in texts  # the context edit replaced the first answer
    assert any(text.startswith("The following is a summary of a branch") for text in texts)
    assert texts[-2:] == ["Continue on the branch", "Back on the notes branch."]
    sets = analysis.sweep_sets()
    abandoned = {e.line for e in analysis.session.entries} - {e.line for e in analysis.branch.path} - {1}
    assert abandoned and abandoned <= sets[PartitionSet.EXCLUDED_BRANCH]
    assert not any("check.sh exits 3" in text for text in texts)  # the abandoned branch is not sent
