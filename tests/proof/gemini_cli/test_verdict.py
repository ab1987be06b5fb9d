"""The verdict on what Gemini CLI sent for an original and its candidate (the real client's run of
it is tests/agents/gemini_cli's)."""

from __future__ import annotations

import pytest

from pipeline.proof.gemini_cli.gemini_verdict import judge_gemini
from pipeline.proof.verdict import ExcludedText
from pipeline.vocabulary import Verdict

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
