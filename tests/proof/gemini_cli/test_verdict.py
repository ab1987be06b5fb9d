"""The real Gemini CLI resumes a candidate as the summary, then a verbatim suffix of the original."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.formats.claude_code.line_guard import LineLimits
from pipeline.formats.gemini_cli.chat_analysis import analyze_chat
from pipeline.formats.gemini_cli.compression_records import compose_compression, plan_tail
from pipeline.proof.gemini_cli.gemini_verdict import judge_gemini, prove_gemini_resume
from pipeline.proof.verdict import ExcludedText
from pipeline.vocabulary import Verdict
from tests.support.gemini_files import fixture, gemini_cli

LIMITS = LineLimits(64 << 20, 256)
SUMMARY = "<state_snapshot>\nthe work so far\n</state_snapshot>"


@pytest.mark.parametrize("name", ["compressed.jsonl"])  # a session Gemini CLI itself compressed before
def test_gemini_cli_resumes_the_candidate_as_summary_then_verbatim_suffix(name: str, tmp_path: Path) -> None:
    script = gemini_cli()
    original = analyze_chat(fixture(name).read_bytes(), LIMITS)
    plan = plan_tail(original, room=60)
    assert plan is not None
    candidate = tmp_path / name
    candidate.write_bytes(compose_compression(original, plan, SUMMARY))
    verdict = prove_gemini_resume(fixture(name), candidate, script=script, timeout=120, summaries=[SUMMARY])
    assert verdict.verdict is Verdict.MATCH, verdict.differences
    assert verdict.kept_items >= 1
    assert verdict.compacted is not None and verdict.original is not None
    assert verdict.compacted.characters < verdict.original.characters


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
