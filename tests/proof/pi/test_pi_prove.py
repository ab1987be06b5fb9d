"""The real pi judges our compactions: it resumes the candidate as the summary followed by a
verbatim suffix of what it sends for the original, and a tampered candidate fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.formats.pi.compaction_entry import compose_compaction
from pipeline.formats.pi.cut import plan_tail
from pipeline.formats.pi.session_analysis import analyze_session
from pipeline.proof.pi.pi_process import find_pi
from pipeline.proof.pi.pi_prove import compaction_summaries, prove_pi_resume
from pipeline.vocabulary import Verdict
from tests.support.pi_files import FIXTURES, LIMITS, pi_session_files

PI = find_pi()
pytestmark = pytest.mark.skipif(PI is None, reason="pi is not installed (scripts/install-pi installs it)")
SUMMARY = "## Goal\nThe earlier work, summarized."
V1 = next(p for p in pi_session_files() if p.name == "badlogic__pi-mono__session.jsonl")


def _candidate(source: Path, target: Path) -> Path:
    data = source.read_bytes()
    analysis = analyze_session(data, LIMITS)
    tokens = [sent.tokens for _, sent in analysis.sent()]
    plan = plan_tail(
        analysis.messages, {e.line: e for e in analysis.session.entries}, tokens, sum(tokens) // 3
    )
    assert plan is not None
    kept = next(e for e in analysis.session.entries if e.line == plan.cut_line)
    target.write_bytes(compose_compaction(analysis.session, data, kept, SUMMARY, sum(tokens)))
    return target


def test_pi_resumes_the_candidate_as_summary_and_verbatim_suffix(tmp_path: Path) -> None:
    """An older-layout corpus file (the fixtures are proven through the command line, in
    tests/agents/pi/test_cli_end_to_end.py)."""
    assert PI is not None
    source = V1
    candidate = _candidate(source, tmp_path / "candidate.jsonl")
    assert compaction_summaries(candidate, LIMITS) == (SUMMARY,)
    verdict = prove_pi_resume(source, candidate, pi=PI, timeout=120, limits=LIMITS)
    assert verdict.verdict is Verdict.MATCH, verdict.differences
    assert verdict.summary_items == 1 and verdict.kept_items > 0
    assert verdict.compacted is not None and verdict.original is not None
    assert verdict.compacted.characters < verdict.original.characters


def test_a_kept_line_changed_in_the_candidate_is_a_mismatch(tmp_path: Path) -> None:
    assert PI is not None
    source = FIXTURES / "tools.jsonl"
    candidate = _candidate(source, tmp_path / "candidate.jsonl")
    candidate.write_bytes(candidate.read_bytes().replace(b"Tidy done", b"Tidy DONE"))
    verdict = prove_pi_resume(source, candidate, pi=PI, timeout=120, limits=LIMITS)
    assert verdict.verdict is Verdict.MISMATCH
