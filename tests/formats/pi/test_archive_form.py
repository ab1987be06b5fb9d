"""The archival form: a smaller file that pi resumes as the same summary and kept tail, every
kept line its source's bytes but for the one link that makes the tail a chain."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from pipeline.formats.pi.archive_form import compose_archive
from pipeline.formats.pi.chat_form import MessageOrigin
from pipeline.formats.pi.session_analysis import PiAnalysis, analyze_session
from pipeline.proof.pi.pi_process import find_pi
from pipeline.proof.pi.pi_prove import prove_pi_resume
from pipeline.vocabulary import Verdict
from tests.support.pi_files import FIXTURES, LIMITS, pi_session_files

SUMMARY = "## Goal\nthe archived history"
PI = find_pi()


def _archive(analysis: PiAnalysis) -> tuple[int, bytes, tuple[int, ...]] | None:
    tokens = [sent.tokens for _, sent in analysis.sent()]
    plan = analysis.plan_tail(tokens, sum(tokens) // 3)
    if plan is None:
        return None
    kept = analysis.entries_by_line()[plan.cut_line]
    form = compose_archive(analysis.session, analysis.data, analysis.branch, kept, SUMMARY, sum(tokens))
    assert form is not None
    return plan.first_item, *form


@pytest.mark.parametrize("path", pi_session_files(), ids=lambda p: p.name[-48:])
def test_the_archive_re_reads_as_the_summary_then_the_kept_tail_and_is_smaller(path: Path) -> None:
    analysis = analyze_session(path.read_bytes(), LIMITS)
    made = _archive(analysis)
    if made is None:
        return
    first_item, candidate, carried = made
    assert len(candidate) < len(analysis.data)
    reread = analyze_session(candidate, LIMITS)
    assert reread.messages[0].origin is MessageOrigin.SUMMARY
    assert [m.body for m in reread.messages[1:]] == [m.body for m in analysis.messages[first_item:]]
    assert not [f for f in reread.findings if f.severity.value == "error"]
    _assert_only_links_changed(analysis, candidate, carried)


def _assert_only_links_changed(analysis: PiAnalysis, candidate: bytes, carried: tuple[int, ...]) -> None:
    """Every candidate line is a carried line's bytes, the new compaction, or a carried entry
    whose `parentId` alone was rewritten (none below version 2)."""
    originals = {analysis.session.raw_line(analysis.data, n) for n in carried}
    by_id = {}
    for line in carried:
        record = orjson.loads(analysis.session.raw_line(analysis.data, line))
        by_id[record.get("id")] = {k: v for k, v in record.items() if k != "parentId"}
    changed = [orjson.loads(line) for line in candidate.splitlines() if line not in originals]
    compactions = [record for record in changed if record.get("type") == "compaction"]
    assert len(compactions) == 1 and compactions[0]["summary"] == SUMMARY
    relinked = [record for record in changed if record.get("type") != "compaction"]
    assert analysis.session.version >= 2 or not relinked
    for record in relinked:
        assert {k: v for k, v in record.items() if k != "parentId"} == by_id[record["id"]]


def test_a_branched_archive_keeps_the_branch_and_drops_the_abandoned_one() -> None:
    analysis = analyze_session((FIXTURES / "branched.jsonl").read_bytes(), LIMITS)
    made = _archive(analysis)
    assert made is not None
    _, candidate, carried = made
    assert set(carried) <= {entry.line for entry in analysis.branch.path} | {1}
    assert b"check.sh exits 3: the ship step is missing" not in candidate


@pytest.mark.skipif(PI is None, reason="pi is not installed (scripts/install-pi installs it)")
def test_pi_resumes_the_archive_as_summary_and_verbatim_suffix(tmp_path: Path) -> None:
    assert PI is not None
    source = FIXTURES / "branched.jsonl"  # the other files' archives were resumed when this was written
    made = _archive(analyze_session(source.read_bytes(), LIMITS))
    assert made is not None
    (tmp_path / "archive.jsonl").write_bytes(made[1])
    verdict = prove_pi_resume(source, tmp_path / "archive.jsonl", pi=PI, timeout=120, limits=LIMITS)
    assert verdict.verdict is Verdict.MATCH, verdict.differences
