"""Evidence extraction reads exactly the lines it is given and types every content block."""

from __future__ import annotations

import pytest

from pipeline.agents.claude_code.chain_evidence import extract_evidence
from pipeline.core.index import build_index
from pipeline.summarize import EvidenceItem, EvidenceKind, EvidenceLineOutOfRange
from pipeline.testing import TranscriptBuilder
from pipeline.testing.settings import LIMITS
from pipeline.vocabulary import SourceFormat


def evidence(b: TranscriptBuilder, lines: list[int] | None = None) -> tuple[EvidenceItem, ...]:
    data = b.to_bytes()
    index = build_index(data, SourceFormat.CLAUDE_CODE, LIMITS)
    return extract_evidence(data, index, range(1, len(index) + 1) if lines is None else lines)


def kinds(items: tuple[EvidenceItem, ...]) -> list[EvidenceKind]:
    return [item.kind for item in items]


def test_each_block_becomes_one_typed_item_in_line_order() -> None:
    b = TranscriptBuilder(seed=1)
    b.file_history_snapshot()
    b.user("Please refactor 🚀")
    b.assistant(b.thinking("hmm"), b.text("Sure."))
    call = b.tool_call("Read", {"file_path": "/a.py", "limit": 10}, [b.text("line one"), b.image("aGk=")])
    b.meta_user("<system-reminder>be nice</system-reminder>")
    b.user("<command-name>/clear</command-name>", human=False)
    b.system("local_command", "<command-name>/model</command-name>")
    b.system("api_error")
    b.compact("Earlier work summarized.")
    items = evidence(b)
    assert kinds(items) == [
        EvidenceKind.HUMAN_PROMPT,
        EvidenceKind.THINKING,
        EvidenceKind.ASSISTANT_TEXT,
        EvidenceKind.TOOL_CALL,
        EvidenceKind.TOOL_RESULT,
        EvidenceKind.OTHER,
        EvidenceKind.COMMAND,
        EvidenceKind.COMMAND,
        EvidenceKind.SYSTEM_ERROR,
        EvidenceKind.PRIOR_SUMMARY,
    ]
    prompt, _, _, tool_call, result, *_, error, prior = items
    assert prompt.text == "Please refactor 🚀"
    assert prompt.line == 2
    assert tool_call.tool_name == "Read"
    assert tool_call.tool_id == call.tool_use_id
    assert dict(tool_call.tool_input) == {"file_path": "/a.py", "limit": 10}
    assert (result.tool_name, result.tool_id, result.text, result.is_error) == (
        "Read",
        call.tool_use_id,
        "line one",
        False,
    )
    assert error.is_error
    assert error.text.startswith("API error 529")
    assert "Earlier work summarized." in prior.text


def test_tool_input_is_deeply_immutable() -> None:
    b = TranscriptBuilder(seed=2)
    b.tool_call("TodoWrite", {"todos": [{"content": "a", "status": "pending"}]}, "ok")
    call = next(item for item in evidence(b) if item.kind is EvidenceKind.TOOL_CALL)
    with pytest.raises(TypeError):
        call.tool_input["todos"] = ()  # type: ignore[index]
    todos = call.tool_input["todos"]
    assert isinstance(todos, tuple)
    with pytest.raises(TypeError):
        todos[0]["status"] = "done"  # type: ignore[index]


def test_items_built_by_hand_freeze_their_tool_input() -> None:
    raw = {"command": "ls", "env": {"A": "1"}}
    item = EvidenceItem(1, EvidenceKind.TOOL_CALL, tool_name="Bash", tool_input=raw)
    raw["command"] = "rm -rf /"
    assert item.tool_input["command"] == "ls"
    with pytest.raises(TypeError):
        item.tool_input["env"]["A"] = "2"  # type: ignore[index]


def test_a_result_whose_call_was_not_passed_in_has_no_tool_name() -> None:
    b = TranscriptBuilder(seed=3)
    b.user("go")
    b.tool_call("Bash", {"command": "SECRET-CALL"}, "fine")
    items = evidence(b, [1, 3])
    assert kinds(items) == [EvidenceKind.HUMAN_PROMPT, EvidenceKind.TOOL_RESULT]
    assert items[1].tool_name is None
    assert all("SECRET-CALL" not in repr(item) for item in items)


def test_error_results_and_interruptions() -> None:
    b = TranscriptBuilder(seed=4)
    refusal = "<tool_use_error>String not found</tool_use_error>"
    b.tool_call("Edit", {"file_path": "/x"}, refusal, is_error=True)
    b.user("[Request interrupted by user]", human=False)
    b.user("   ")
    items = evidence(b)
    assert kinds(items) == [EvidenceKind.TOOL_CALL, EvidenceKind.TOOL_RESULT, EvidenceKind.OTHER]
    assert items[1].is_error


def test_lines_are_deduplicated_and_out_of_range_lines_are_refused() -> None:
    b = TranscriptBuilder(seed=5)
    b.user("one")
    b.user("two")
    assert [item.text for item in evidence(b, [2, 1, 2])] == ["one", "two"]
    with pytest.raises(EvidenceLineOutOfRange) as caught:
        evidence(b, [0, 1])
    assert (caught.value.line, caught.value.total) == (0, 2)
    with pytest.raises(EvidenceLineOutOfRange):
        evidence(b, [3])


def test_broken_lines_contribute_nothing() -> None:
    b = TranscriptBuilder(seed=6)
    b.user("ok")
    b.raw(b'{"type":"user","message":')
    b.raw(b"[1,2]")
    assert [item.text for item in evidence(b)] == ["ok"]
