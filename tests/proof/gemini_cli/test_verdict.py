"""The verdict on what Gemini CLI sent for an original and its candidate (the real client's run of
it is tests/agents/gemini_cli's), and how a run that resumes nothing or fails is told apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.formats.gemini_cli.chat_analysis import analyze_chat
from pipeline.formats.gemini_cli.history import INTERRUPTED_PLACEHOLDER, coalesce
from pipeline.formats.gemini_cli.repair import repair
from pipeline.formats.line_guard import LineLimits
from pipeline.proof.gemini_cli.gemini_verdict import (
    edited_history,
    judge_gemini,
    judge_gemini_edits,
    prove_gemini_resume,
)
from pipeline.proof.gemini_cli.resume import GeminiResumeFailed
from pipeline.proof.verdict import ExcludedText
from pipeline.vocabulary import ResumeExit, Verdict
from tests.support.gemini_files import fixture, gemini_cli, with_open_calls, with_pairing_defects

LIMITS = LineLimits(64 << 20, 256)

ORIGINAL = (
    {"role": "user", "parts": [{"text": "one"}]},
    {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "f", "args": {}}}]},
    {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "f", "response": {}}}]},
    {"role": "user", "parts": [{"text": "two"}]},
)
HEAD = (
    {"role": "user", "parts": [{"text": "S"}]},
    {"role": "model", "parts": [{"text": "Got it. Thanks for the additional context!"}]},
)


@pytest.mark.parametrize(
    ("candidate", "summaries", "excluded", "verdict"),
    [
        ((*HEAD, ORIGINAL[-1]), ["S"], (), Verdict.MATCH),
        ((*HEAD, ORIGINAL[1], ORIGINAL[-1]), ["S"], (), Verdict.MISMATCH),  # a call split from its response
        ((*HEAD, {"role": "user", "parts": [{"text": "tw0"}]}), ["S"], (), Verdict.MISMATCH),  # not verbatim
        ((*HEAD, ORIGINAL[-1]), ["other"], (), Verdict.MISMATCH),  # not the summary written
        ((HEAD[0], ORIGINAL[-1]), None, (), Verdict.MISMATCH),  # no acknowledgement
        ((*HEAD, ORIGINAL[-1]), ["S"], (ExcludedText("tw", 3, "excluded_branch"),), Verdict.MISMATCH),
    ],
)
def test_the_verdict_on_captured_contexts(
    candidate: tuple[object, ...],
    summaries: list[str] | None,
    excluded: tuple[ExcludedText, ...],
    verdict: Verdict,
) -> None:
    judged = judge_gemini(ORIGINAL, candidate, excluded=excluded, summaries=summaries)
    assert judged.verdict is verdict
    assert all("two" not in difference for difference in judged.differences)  # no text in reports


def _response(ident: str, output: str) -> dict[str, object]:
    body = {"id": ident, "name": "read_file", "response": {"output": output}}
    return {"role": "user", "parts": [{"functionResponse": body}]}


MASKED = "<tool_output_masked>\n{...}\nOutput too large. Full output available at: /t/x_1.txt\n</tool_output_masked>"


@pytest.mark.parametrize(
    ("kept", "verdict"),
    [
        (_response("c1", "the file"), Verdict.MATCH),  # masked in the original's request only
        (_response("c1", MASKED.replace("x_1", "x_2")), Verdict.MATCH),  # masked in both, named apart
        (_response("c2", "the file"), Verdict.MISMATCH),  # another call's output
        (_response("c1", "another file"), Verdict.MATCH),  # the masked text is the client's: id and name
    ],
)
def test_a_tool_output_gemini_cli_masked_compares_by_its_call(
    kept: dict[str, object], verdict: Verdict
) -> None:
    """Gemini CLI masks old tool outputs of a long history per request, under random file names."""
    call = {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "read_file", "args": {}}}]}
    original = ({"role": "user", "parts": [{"text": "one"}]}, call, _response("c1", MASKED))
    judged = judge_gemini(original, (*HEAD, call, kept), summaries=["S"])
    assert judged.verdict is verdict, judged.differences
    assert judged.notes == (
        "Gemini CLI masked 1 of the original's and "
        f"{int('masked' in str(kept))} of the candidate's tool outputs (compared by call id and name)",
    )


def test_a_candidate_gemini_cli_does_not_resume_is_a_mismatch() -> None:
    """Gemini CLI goes on as a new session when `--resume latest` finds none (exit 0, a request
    with no history): a candidate it does not list is refused, never taken for an empty match."""
    session, checkpoint = fixture("rewound.jsonl"), fixture("checkpoint-fixture-tag.json")
    judged = prove_gemini_resume(session, checkpoint, script=gemini_cli(), timeout=120)
    assert judged.verdict is Verdict.MISMATCH and judged.differences == (
        "Gemini CLI found no session to resume in the candidate",
    )


def test_gemini_cli_failing_on_the_original_is_the_clients_failure(tmp_path: Path) -> None:
    gemini_cli()  # node is what runs the script: the same skip when it is not there
    broken = tmp_path / "gemini.js"
    broken.write_text("this is not JavaScript(\n")
    with pytest.raises(GeminiResumeFailed, match="exited 1") as raised:
        prove_gemini_resume(fixture("rewound.jsonl"), fixture("rewound.jsonl"), script=broken, timeout=60)
    assert raised.value.resume_exit is ResumeExit.GEMINI_CLI_FAILED


def test_a_rewrite_with_no_summary_must_send_the_original_content_for_content() -> None:
    assert judge_gemini(ORIGINAL, ORIGINAL, summaries=()).verdict is Verdict.MATCH
    changed = judge_gemini(
        ORIGINAL, (*ORIGINAL[:3], {"role": "user", "parts": [{"text": "tw0"}]}), summaries=()
    )
    assert changed.verdict is Verdict.MISMATCH and changed.differences == (
        "content 3 differs from the original's",
    )
    assert judge_gemini(ORIGINAL, (*HEAD, ORIGINAL[-1]), summaries=()).verdict is Verdict.MISMATCH


def test_a_repair_must_send_the_readers_history_with_exactly_its_declared_items() -> None:
    """The original as Gemini CLI sent it must be the history read from it, and the candidate that
    history with the declared items put in, every call answered; anything else is a mismatch."""
    data = with_open_calls(fixture("killed.jsonl"))
    result = repair(data, LIMITS)
    original, expected = edited_history(data, LIMITS, result.sent)
    # both end with tool responses: Gemini CLI puts its placeholder reply before the next prompt
    closing = {"role": "model", "parts": [{"text": INTERRUPTED_PLACEHOLDER}]}
    assert original == coalesce(analyze_chat(data, LIMITS).turns) and original[-1] == closing
    assert expected == coalesce(analyze_chat(result.data, LIMITS).turns) and expected[-1] == closing
    assert judge_gemini_edits(original, expected, (original, expected), 1).verdict is Verdict.MATCH
    unrepaired = judge_gemini_edits(original, original, (original, expected), 1)
    assert unrepaired.verdict is Verdict.MISMATCH and len(unrepaired.differences) == 2  # differs, unanswered
    other = judge_gemini_edits(expected, expected, (original, expected), 1)  # not what the file holds
    assert other.differences == (
        "Gemini CLI sent for the original another history than the one read from it",
    )
    assert edited_history(data, LIMITS, ())[1] == original  # nothing declared: the same history


def test_a_response_the_repair_inserts_lands_before_the_next_prompt_in_the_expected_history() -> None:
    data = with_pairing_defects(fixture("tools.jsonl"))
    result = repair(data, LIMITS)
    assert [edit.replaces for edit in result.sent] == [False]
    original, expected = edited_history(data, LIMITS, result.sent)
    assert (original, expected) == (
        coalesce(analyze_chat(data, LIMITS).turns),
        coalesce(analyze_chat(result.data, LIMITS).turns),
    )  # the history ends with a reply: no placeholder
    assert len(expected) == len(original) and expected[2]["parts"][1:] == original[2]["parts"]
