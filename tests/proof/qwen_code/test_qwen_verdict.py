"""The verdict on a Qwen Code compaction: the summary, then a verbatim suffix of the original's
history, every call answered, no excluded text; differences never hold transcript text."""

from __future__ import annotations

from typing import Any

from pipeline.proof.qwen_code.qwen_verdict import CLEARED_OUTPUT, judge_qwen
from pipeline.proof.verdict import ExcludedText
from pipeline.vocabulary import Verdict


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def _call(call_id: str) -> dict[str, Any]:
    function = {"name": "run_shell_command", "arguments": "{}"}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


def _tool(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": [{"type": "text", "text": "out"}]}


ORIGINAL = [
    _user("first"),
    _call("c1"),
    _tool("c1"),
    {"role": "assistant", "content": "ok"},
    _user("second"),
    _call("c2"),
    _tool("c2"),
]


def test_the_summary_then_a_suffix_matches() -> None:
    verdict = judge_qwen(ORIGINAL, [_user("SUMMARY of it"), *ORIGINAL[5:]], summaries=["SUMMARY"])
    assert verdict.ok and verdict.summary_items == 1 and verdict.kept_items == 2 and verdict.differences == ()


def test_a_summary_that_is_not_there_or_a_changed_tail_is_a_mismatch() -> None:
    missing = judge_qwen(ORIGINAL, [_user("other"), *ORIGINAL[5:]], summaries=["SUMMARY"])
    assert missing.verdict is Verdict.MISMATCH and "carries the summary" in missing.differences[0]
    changed = judge_qwen(ORIGINAL, [_user("SUMMARY"), *ORIGINAL[5:-1], _tool("c9")], summaries=["SUMMARY"])
    assert not changed.ok and any("nothing of the original" in d for d in changed.differences)


def test_an_answer_without_its_call_is_named_by_call_id_only() -> None:
    verdict = judge_qwen(ORIGINAL, [_user("SUMMARY"), *ORIGINAL[6:]], summaries=["SUMMARY"])
    assert not verdict.ok
    assert verdict.differences == ("message 1 answers call c2, which is never sent before it",)


def test_excluded_text_sent_by_the_candidate_alone_is_a_leak() -> None:
    secret = ExcludedText("a rewound instruction", 9, "excluded_branch")
    verdict = judge_qwen(ORIGINAL, [_user("SUMMARY a rewound instruction"), *ORIGINAL[5:]], excluded=[secret])
    assert verdict.differences == ("text of excluded line 9 (excluded_branch) is sent",)
    assert "rewound" not in " ".join(verdict.differences).replace("excluded line", "")


def test_an_original_qwen_code_does_not_resume_has_no_verdict_to_give() -> None:
    assert judge_qwen(None, ORIGINAL).verdict is Verdict.NOT_RESUMABLE
    assert judge_qwen(ORIGINAL, None).verdict is Verdict.MISMATCH


def test_an_output_qwen_code_cleared_for_the_original_alone_is_compared_by_its_call_id() -> None:
    cleared = {**_tool("c2"), "content": [{"type": "text", "text": CLEARED_OUTPUT}]}
    original = [*ORIGINAL[:6], cleared]
    verdict = judge_qwen(original, [_user("SUMMARY"), *ORIGINAL[5:]], summaries=["SUMMARY"])
    assert verdict.ok and verdict.kept_items == 2 and "compared by call id" in verdict.notes[0]
    other_call = judge_qwen(original, [_user("SUMMARY"), ORIGINAL[5], _tool("c9")], summaries=["SUMMARY"])
    assert not other_call.ok
    reversed_ = judge_qwen(ORIGINAL, [_user("SUMMARY"), *original[5:]], summaries=["SUMMARY"])
    assert not reversed_.ok  # the candidate never gets to send less than the original did
