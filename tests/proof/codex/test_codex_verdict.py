"""The Codex verdict: summary messages, then a verbatim suffix of the original, calls answered."""

from __future__ import annotations

from typing import Any

import pytest

from pipeline.formats.codex.item_types import CALL_OUTPUTS, CALL_TYPES
from pipeline.proof.codex.codex_verdict import context_size, judge_codex
from pipeline.proof.verdict import ExcludedText
from pipeline.vocabulary import Verdict
from tests.support.codex_rollouts import SUMMARY, assistant, call, conversation, output, user

ORIGINAL = tuple(conversation(3))  # 12 items: 3 turns of user, call, output, assistant
SUMMARY_ITEM = user(SUMMARY)


def test_the_summary_then_a_verbatim_suffix_matches() -> None:
    verdict = judge_codex(ORIGINAL, (SUMMARY_ITEM, *ORIGINAL[4:]), summaries=[SUMMARY])
    assert verdict.ok and verdict.differences == ()
    assert (verdict.summary_items, verdict.kept_items) == (1, 8)
    assert verdict.original == context_size(ORIGINAL)
    assert verdict.compacted is not None and verdict.compacted.messages == 9


def _changed_output(items: tuple[Any, ...]) -> tuple[Any, ...]:
    at = next(i for i, item in enumerate(items) if item["type"] == "function_call_output")
    return (*items[:at], output(items[at]["call_id"], "Exit code: 1\n"), *items[at + 1 :])


CASES = {
    "no summary at all": (ORIGINAL[4:], "does not open with a summary"),
    "a changed item in the kept part": (
        (SUMMARY_ITEM, *_changed_output(ORIGINAL[4:])),
        "is neither a summary message nor part of the original's suffix",
    ),
    "nothing of the original kept": ((SUMMARY_ITEM,), "nothing of the original context follows"),
    "an output whose call was summarized away": (
        (SUMMARY_ITEM, *ORIGINAL[6:]),
        "answers call call_001, which is never sent before it",
    ),
    "a call left unanswered": (
        (SUMMARY_ITEM, *ORIGINAL[4:6], *ORIGINAL[7:]),
        "call call_001 is never answered",
    ),
    "the summary text missing": ((user("something else"), *ORIGINAL[4:]), "carries the summary"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_broken_candidate_is_a_mismatch_that_says_why_without_text(case: str) -> None:
    candidate, why = CASES[case]
    verdict = judge_codex(ORIGINAL, candidate, summaries=[SUMMARY])
    assert verdict.verdict is Verdict.MISMATCH
    assert any(why in difference for difference in verdict.differences), verdict.differences
    sent_texts = [part["text"] for item in candidate for part in item.get("content", ()) if "text" in part]
    assert not any(text in difference for text in sent_texts for difference in verdict.differences)


SEARCH = {"type": "tool_search_call", "call_id": "search_1", "execution": "client", "arguments": {}}
FOUND = {"type": "tool_search_output", "call_id": "search_1", "status": "completed", "tools": []}


@pytest.mark.parametrize("call_type", sorted(CALL_TYPES))
def test_every_call_type_of_the_codex_vocabulary_must_be_answered(call_type: str) -> None:
    """One list of call types for reading, checking and judging: a `tool_search_call` included."""
    searched = (*ORIGINAL[:4], {**SEARCH, "type": call_type}, {**FOUND, "type": CALL_OUTPUTS[call_type]})
    original = (*searched, *ORIGINAL[4:])
    assert judge_codex(original, (SUMMARY_ITEM, *original[4:]), summaries=[SUMMARY]).ok
    unanswered = judge_codex(original, (SUMMARY_ITEM, original[4], *original[6:]), summaries=[SUMMARY])
    assert "call search_1 is never answered" in unanswered.differences


def test_a_call_the_original_also_leaves_open_is_not_held_against_the_candidate() -> None:
    original = (*ORIGINAL, call("call_open", "sleep 100"))
    verdict = judge_codex(original, (SUMMARY_ITEM, *original[8:]), summaries=[SUMMARY])
    assert verdict.ok, verdict.differences


def test_an_excluded_text_sent_by_the_candidate_alone_is_named_by_its_line() -> None:
    secret = "text of a record the partition excluded, long enough to attribute"
    candidate = (user(f"{SUMMARY} {secret}"), *ORIGINAL[4:])
    excluded = [ExcludedText(secret, 7, "excluded"), ExcludedText(ORIGINAL[-1]["content"][0]["text"], 9, "x")]
    verdict = judge_codex(ORIGINAL, candidate, summaries=[SUMMARY], excluded=excluded)
    assert verdict.differences == ("text of excluded line 7 (excluded) is sent",)


def test_without_known_summary_texts_any_leading_messages_are_the_summary() -> None:
    candidate = (user("summary part one"), assistant("summary part two"), *ORIGINAL[8:])
    unnamed = judge_codex(ORIGINAL, candidate)
    assert unnamed.ok and "taken as the summary" in unnamed.notes[0]
    assert not judge_codex(ORIGINAL, (call("c", "ls"), output("c", "x"), *ORIGINAL[8:])).ok


def test_a_side_codex_did_not_resume_is_not_resumable_or_a_mismatch() -> None:
    assert judge_codex(None, ORIGINAL).verdict is Verdict.NOT_RESUMABLE
    lost = judge_codex(ORIGINAL, None)
    assert lost.verdict is Verdict.MISMATCH and lost.differences == (
        "Codex does not resume the compacted file",
    )


def test_a_rewrite_with_no_summary_must_send_the_original_item_for_item() -> None:
    assert judge_codex(ORIGINAL, ORIGINAL, summaries=()).verdict is Verdict.MATCH
    compacted = judge_codex(ORIGINAL, (SUMMARY_ITEM, *ORIGINAL[4:]), summaries=())
    assert compacted.verdict is Verdict.MISMATCH and compacted.differences == (
        "item 0 differs from the original's",
    )
