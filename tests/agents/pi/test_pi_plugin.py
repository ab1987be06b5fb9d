"""pi through the seam: the generic validate, tokens and compress jobs drive the pi plug-in, and
the resume gate proves its candidates in the real pi."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pipeline.agents.pi import PI
from pipeline.agents.protocol import ContextFormat
from pipeline.formats.pi.session_analysis import analyze_session
from pipeline.installed import reported_version
from pipeline.jobs.compress.context_compress import compress_context
from pipeline.jobs.context_tokens import tokens_context
from pipeline.jobs.context_validate import validate_context
from pipeline.proof.pi.pi_process import PI_VERSION, PiNotInstalled, find_pi
from pipeline.read.load import read_source
from pipeline.report.documents import Compressed
from pipeline.testing import as_json
from pipeline.testing.settings import compress_options, default_settings, tokens_options
from pipeline.vocabulary import SourceFormat
from tests.support.pi_files import FIXTURES, LIMITS, pi_session_files

AGENT: ContextFormat = PI  # the plug-in is the seam's protocol (the type checker holds it to it)
INSTALLED = find_pi()


def _compress(tmp_path: Path, source: Path, **knobs: Any) -> tuple[Any, dict[str, Any]]:
    options = compress_options(tmp_path / "out", min_tokens=0, **knobs)
    if INSTALLED is not None:
        options = replace(options, judges={SourceFormat.PI: str(INSTALLED.launcher)})
    outcome = compress_context(AGENT, source.name, read_source(source), options)
    return outcome, as_json(outcome)


@pytest.mark.parametrize("path", pi_session_files(), ids=lambda p: p.name[-48:])
def test_validate_reads_every_real_pi_session_without_an_internal_error(path: Path) -> None:
    report = as_json(validate_context(AGENT, path.name, read_source(path), default_settings().sweep))
    assert report["status"] in ("valid", "warnings", "invalid"), report
    codes = {finding["code"] for finding in report.get("findings", [])}
    assert "internal-error" not in codes
    assert report["context"]["items"] == len(analyze_session(path.read_bytes(), LIMITS).messages)


def test_tokens_count_by_class_and_the_billed_usage_pi_recorded() -> None:
    path = FIXTURES / "tools.jsonl"
    report = as_json(tokens_context(AGENT, path.name, read_source(path), tokens_options()))
    tokens = report["tokens"]
    assert {"human", "assistant", "tool_use", "tool_result"} <= set(tokens["classes"])
    billed = tokens["billed"]
    assert billed["events"] == 8  # every assistant message pi wrote, the failed call's included
    assert billed["input"] > 0 and billed["output"] > 0


def test_compress_writes_the_original_plus_pis_own_compaction(tmp_path: Path) -> None:
    source = FIXTURES / "compacted.jsonl"
    outcome, report = _compress(tmp_path, source, verify_resume="off", target_ratio=0.3)
    assert isinstance(outcome, Compressed), report.get("reasons")
    written = tmp_path / "out" / "root" / source.name
    data = written.read_bytes()
    assert data.startswith(source.read_bytes())
    reread = analyze_session(data, LIMITS)
    compaction = reread.branch.compaction
    assert compaction is not None and compaction.line == len(reread.session)
    assert report["output"]["compacted_line"] == compaction.line
    assert report["cut"]["kept_items"] == len(reread.messages) - 1


@pytest.mark.skipif(INSTALLED is None, reason="pi is not installed (scripts/install-pi installs it)")
def test_the_resume_gate_proves_a_pi_candidate_in_the_real_pi(tmp_path: Path) -> None:
    source = FIXTURES / "tools.jsonl"
    outcome, report = _compress(tmp_path, source, verify_resume="on", target_ratio=0.3)
    assert isinstance(outcome, Compressed), (report.get("reasons"), report.get("resume_check"))
    check = report["resume_check"]
    assert check["verdict"] == "match" and check["summary_blocks"] == 1 and check["kept_blocks"] > 0


def test_the_judge_is_found_where_the_install_script_puts_it_and_named_when_not(tmp_path: Path) -> None:
    client = AGENT.judge.client
    assert (client.source_format, client.name, client.not_installed) == (
        SourceFormat.PI,
        "pi",
        "PiNotInstalled",
    )
    with pytest.raises(PiNotInstalled, match=str(tmp_path)):
        client.locate(tmp_path)
    if INSTALLED is not None:
        assert client.locate(None) == INSTALLED.launcher
        assert client.locate(INSTALLED.cli.parents[5]) == INSTALLED.launcher  # the npm prefix names it too
        assert reported_version(client.locate(None)) == PI_VERSION  # the launcher answers --version


def test_the_abandoned_branch_stays_in_the_candidate_and_is_never_sent(tmp_path: Path) -> None:
    path = FIXTURES / "branched.jsonl"
    session = AGENT.read(path.read_bytes(), path, LIMITS)
    plan = session.plan_tail(room=0)
    assert plan is not None
    sets = session.compress_sets(plan)
    candidate = session.compose(plan, "## Goal\nthe notes")
    excluded = AGENT.judge.excluded(session, sets, candidate, 8)
    assert any("check.sh exits 3" in item.text for item in excluded)  # the abandoned answer
    if INSTALLED is None:
        pytest.skip("pi is not installed (scripts/install-pi installs it)")
    (tmp_path / "candidate.jsonl").write_bytes(candidate)
    judged = AGENT.judge.prove(
        path,
        tmp_path / "candidate.jsonl",
        executable=INSTALLED.launcher,
        timeout=120,
        limits=LIMITS,
        excluded=excluded,
        summaries=["## Goal\nthe notes"],
    )
    assert judged.ok, judged.section(0).differences


def test_a_damaged_line_is_left_with_the_summarized_span_in_the_archival_form(tmp_path: Path) -> None:
    source = next(p for p in pi_session_files() if p.name == "badlogic__pi-mono__session.jsonl")
    damaged = next(f.line for f in analyze_session(source.read_bytes(), LIMITS).findings if f.line)
    gate = "on" if INSTALLED is not None else "off"
    outcome, report = _compress(tmp_path, source, verify_resume=gate)
    assert isinstance(outcome, Compressed), (report.get("reasons"), report.get("resume_check"))
    assert report["cut"]["cut_line"] > damaged  # the two records run together are summarized away
    written = (tmp_path / "out" / "root" / source.name).read_bytes()
    reread = analyze_session(written, LIMITS)
    assert reread.findings == ()  # the candidate is clean
    assert report["output"]["compacted_line"] == 2 and len(written) < source.stat().st_size
    if INSTALLED is not None:
        assert report["resume_check"]["verdict"] == "match"
