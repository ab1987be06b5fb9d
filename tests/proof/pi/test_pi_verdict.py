"""The pi verdict: the summary, then a verbatim suffix of the original, calls answered, no leak."""

from __future__ import annotations

from typing import Any

from pipeline.proof.pi.pi_verdict import judge_pi
from pipeline.proof.verdict import ExcludedText
from pipeline.vocabulary import PartitionSet, Verdict


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def _call(call_id: str) -> dict[str, Any]:
    function = {"name": "bash", "arguments": "{}"}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


def _tool(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "content": "out", "tool_call_id": call_id}


ORIGINAL = [_user("old"), _call("c1"), _tool("c1"), _user("kept"), _call("c2"), _tool("c2")]
SUMMARY = _user("compacted into the following summary: <summary>S</summary>")


def test_the_summary_then_the_originals_suffix_matches() -> None:
    verdict = judge_pi(ORIGINAL, [SUMMARY, *ORIGINAL[3:]], summaries=["S"])
    assert verdict.verdict is Verdict.MATCH
    assert (verdict.summary_items, verdict.kept_items) == (1, 3)


def test_a_changed_kept_message_or_a_missing_summary_is_a_mismatch() -> None:
    changed = [SUMMARY, _user("kept!"), *ORIGINAL[4:]]
    verdict = judge_pi(ORIGINAL, changed, summaries=["S"])
    assert verdict.kept_items == 2
    assert verdict.differences == ("2 messages precede the kept suffix where pi sends one summary message",)
    verdict = judge_pi(ORIGINAL, [SUMMARY, *ORIGINAL[3:]], summaries=["another text"])
    assert verdict.differences == ("none of the 1 messages before the kept suffix carries the summary",)


def test_a_result_whose_call_was_summarized_away_is_named_by_its_id() -> None:
    verdict = judge_pi(ORIGINAL, [SUMMARY, *ORIGINAL[2:]], summaries=["S"])
    assert "message 1 answers call c1, which is never sent before it" in verdict.differences


def test_excluded_text_sent_only_by_the_candidate_is_a_leak_named_by_line() -> None:
    secret = ExcludedText(line=7, partition_set=PartitionSet.EXCLUDED_BRANCH, text="abandoned branch text")
    leaking = [_user("summary with abandoned branch text"), *ORIGINAL[3:]]
    verdict = judge_pi(ORIGINAL, leaking, excluded=[secret])
    assert verdict.differences == ("text of excluded line 7 (excluded_branch) is sent",)


def test_a_file_pi_does_not_resume_is_reported_not_compared() -> None:
    assert judge_pi(None, ORIGINAL).verdict is Verdict.NOT_RESUMABLE
    assert judge_pi(ORIGINAL, None).verdict is Verdict.MISMATCH
