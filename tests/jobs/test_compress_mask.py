"""`--strategy mask`: no summary, every record of the chain kept, the tool outputs before the
protected round cleared to Claude Code's own marker and declared (size, SHA-256) in the report and
on the candidate's pointer; `compaction probe` reads such a candidate; the resume gate with the
real Claude Code 2.1.332 passes it, and every human text of the source chain is in what Claude
Code sends."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pipeline.formats.claude_code.bounded_output import CLEARED_MARKER
from pipeline.jobs.compress import compress_session
from pipeline.jobs.compress.masking import mask_plan, masked_candidate
from pipeline.jobs.compress.stages import Candidate, candidate_partition
from pipeline.jobs.front import Analysis, open_session
from pipeline.reasons import CandidateFailure
from pipeline.report.render import json_bytes
from pipeline.testing.builder import TranscriptBuilder
from pipeline.testing.invoke import candidate_of, compaction
from pipeline.testing.settings import LIMITS, compress_options
from tests.jobs._work_session import FAILURE, build_work_session
from tests.jobs.test_compress_strategy import assert_resumed_with_every_human_text, gated, rows


def compressed(source: Path, out: Path, strategy: str, **knobs: Any) -> dict[str, Any]:
    options = compress_options(out, min_tokens=0, min_recent_records=8, strategy=strategy, **knobs)
    report: dict[str, Any] = json.loads(json_bytes(compress_session(source, source.name, options).report))
    return report


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "in" / "session.jsonl"
    path.parent.mkdir()
    build_work_session(path, turns=12)
    return path


def test_mask_keeps_every_record_and_clears_only_old_outputs_declaring_each(
    source: Path, tmp_path: Path
) -> None:
    report = compressed(source, tmp_path / "out", "mask")
    assert report["status"] == "compressed"
    assert "summary" not in report and report["plan"]["summarized_records"] == 0
    assert "boundary_uuid" not in report["output"]
    before = rows(source)
    written = rows(candidate_of(tmp_path / "out", source))
    assert not any(r.get("subtype") == "compact_boundary" or r.get("isCompactSummary") for r in written)
    chain = [r["uuid"] for r in before if "uuid" in r]
    assert [r["uuid"] for r in written if "uuid" in r] == chain  # the same records, the same order
    cleared = {o["tool_use_id"]: o for o in report["bounded"]["outputs"] if o["cleared"]}
    mask = report["mask"]
    assert mask["cleared_outputs"] == len(cleared) == report["bounded"]["cleared"] > 0
    assert mask["bytes_cleared"] == mask["original_bytes"] - mask["kept_bytes"] > 0
    declared = {
        s["toolUseId"] for s in written[-1]["sessionCompaction"]["boundedToolOutputs"] if s["cleared"]
    }
    assert written[-1]["type"] == "last-prompt" and declared == set(cleared)
    by_id = {r["uuid"]: r for r in before if "uuid" in r}
    for row in written[:-1]:
        original = by_id[row["uuid"]]
        if row["type"] != "user":  # every assistant record as it was: text, thinking, tool calls
            assert row == original
            continue
        for block, was in zip(row["message"]["content"], original["message"]["content"], strict=True):
            if isinstance(block, dict) and block.get("content") == CLEARED_MARKER:
                stamp = cleared.pop(block["tool_use_id"])
                assert stamp["sha256"] == hashlib.sha256(was["content"].encode()).hexdigest()
                assert chain.index(row["uuid"]) < report["plan"]["protected_start"]
                assert FAILURE not in was["content"]  # a failed run's output is never cleared
            else:
                assert block == was
    assert cleared == {}


def test_mask_short_of_its_target_says_so_and_still_writes_what_it_saves(
    source: Path, tmp_path: Path
) -> None:
    short = compressed(source, tmp_path / "short", "mask")
    assert short["status"] == "compressed" and not short["tokens"]["target_met"]
    assert short["reasons"] == ["target-missed", "masking-alone-short-of-target"]
    assert short["mask"]["short_of_target"] and short["tokens"]["output"] < short["tokens"]["active_chain"]
    wide = compressed(source, tmp_path / "wide", "mask", target_ratio=0.8)
    assert wide["status"] == "compressed" and wide["tokens"]["target_met"]
    assert "reasons" not in wide and not wide["mask"]["short_of_target"]
    fits = compressed(source, tmp_path / "fits", "mask", target_ratio=1.0)
    assert fits["status"] == "skipped-fits"


def test_probe_reads_a_masked_candidate_as_compress_measured_it(source: Path, tmp_path: Path) -> None:
    report = compressed(source, tmp_path / "out", "mask")
    done = compaction("probe", str(source), str(candidate_of(tmp_path / "out", source)), "--json")
    assert done.returncode == 0, done.stderr
    probed = json.loads(done.stdout)
    assert probed["span"] == "mask-stamp"
    assert probed["fidelity"] == report["fidelity"]["fidelity"]
    assert probed["summarized_lines"] == report["fidelity"]["summarized_lines"]
    other = tmp_path / "other.jsonl"
    build_work_session(other, turns=10)
    refused = compaction("probe", str(other), str(candidate_of(tmp_path / "out", source)))
    assert refused.returncode == 2 and "source digest differs" in refused.stderr + refused.stdout


@pytest.mark.claude_code
def test_a_masked_candidate_passes_the_resume_gate_with_every_human_text_sent(
    source: Path, tmp_path: Path, claude_code: Path
) -> None:
    report = gated(source, tmp_path, "mask", claude_code)
    assert report["status"] == "compressed" and report["mask"]["cleared_outputs"] > 0
    check = report["resume_check"]
    assert check["verdict"] == "match" and check["summary_blocks"] == 0, check
    candidate = candidate_of(tmp_path / "out", source)
    verified = compaction("verify-resume", str(source), str(candidate), "--claude", str(claude_code))
    assert verified.returncode == 0, verified.stdout[-2000:] + verified.stderr[-2000:]
    assert_resumed_with_every_human_text(candidate, source, claude_code)


def _one_cleared_undeclared(candidate: Path, part: str = "content") -> dict[str, Any]:
    """The candidate with its declarations of `part` cleared dropped (the clearing itself left)."""
    written = rows(candidate)
    written[-1]["sessionCompaction"]["boundedToolOutputs"] = [
        s
        for s in written[-1]["sessionCompaction"]["boundedToolOutputs"]
        if not (s["cleared"] and s["part"] == part)
    ]
    candidate.write_bytes(b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in written))
    return written[-1]


@pytest.mark.claude_code
def test_verify_resume_refuses_a_masked_candidate_whose_clearing_is_not_declared(
    source: Path, tmp_path: Path, claude_code: Path
) -> None:
    compressed(source, tmp_path / "out", "mask")
    candidate = candidate_of(tmp_path / "out", source)
    _one_cleared_undeclared(candidate)
    done = compaction("verify-resume", str(source), str(candidate), "--claude", str(claude_code))
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]


def test_the_masked_check_refuses_a_kept_line_changed_beyond_its_declared_rule(
    source: Path, tmp_path: Path
) -> None:
    options = compress_options(tmp_path, min_tokens=0, min_recent_records=8, strategy="mask")
    analysis = open_session(
        source, source.name, options.topology(), command="compress", per_code=1, limits=LIMITS
    )
    assert isinstance(analysis, Analysis)
    planned = mask_plan(analysis, options)
    partition, side = candidate_partition(analysis, options, planned.plan)
    sound = masked_candidate(analysis, options, planned, partition, side)
    assert isinstance(sound, Candidate) and sound.checked.ok
    data, index = analysis.source.data, analysis.index
    text = b'{"type":"text","text":"'
    line = next(
        n
        for n in planned.plan.raw_lines
        if b'"role":"assistant"' in (raw := index.raw_line(data, n)) and text in raw
    )
    edited = index.raw_line(data, line).replace(text, text + b"Also: ", 1)
    assert edited != index.raw_line(data, line)
    bounding = replace(planned.bounding, lines={**planned.bounding.lines, line: edited})
    tampered = masked_candidate(analysis, options, replace(planned, bounding=bounding), partition, side)
    assert isinstance(tampered, Candidate)
    assert [r.code for r in tampered.checked.failures] == [CandidateFailure.RAW_LINE_CHANGED]


WRITTEN = "def handler(event):\n    return {'ok': True, 'event': event}\n" * 40  # 2.4 KB a file


def build_writing_session(path: Path, *, turns: int = 8) -> None:
    """Turns that each write a module (thinking first, in the same message) and run its tests."""
    builder = TranscriptBuilder(seed=5)
    for turn in range(turns):
        builder.user(f"Write module_{turn}.py with the handler, then run its tests (turn {turn}).")
        builder.tool_call(
            "Write",
            {"file_path": f"/repo/src/module_{turn}.py", "content": f"# module {turn}\n{WRITTEN}"},
            f"File created successfully at: /repo/src/module_{turn}.py",
            lead=[builder.thinking(f"Module {turn} needs the handler; write it whole.")],
        )
        builder.tool_call(
            "Bash", {"command": f"pytest tests/test_module_{turn}.py -q"}, "." * 700 + "\n7 passed"
        )
        builder.assistant(builder.text(f"module_{turn}.py is written and its tests pass."))
    builder.write(path)


@pytest.fixture
def writing(tmp_path: Path) -> Path:
    path = tmp_path / "writes" / "session.jsonl"
    path.parent.mkdir()
    build_writing_session(path)
    return path


def test_mask_clears_a_write_s_contents_keeping_its_path_and_the_thinking_beside_it(
    writing: Path, tmp_path: Path
) -> None:
    report = compressed(writing, tmp_path / "out", "mask")
    assert report["status"] == "compressed" and report["mask"]["cleared_inputs"] > 0
    inputs = {o["tool_use_id"]: o for o in report["bounded"]["outputs"] if o["part"] == "input"}
    assert len(inputs) == report["mask"]["cleared_inputs"]
    before = {r["uuid"]: r for r in rows(writing) if "uuid" in r}
    for row in rows(candidate_of(tmp_path / "out", writing))[:-1]:
        original = before[row["uuid"]]
        if row["type"] != "assistant" or row == original:
            continue
        for block, was in zip(row["message"]["content"], original["message"]["content"], strict=True):
            if block.get("type") != "tool_use" or block == was:
                assert block == was  # thinking and text byte for byte, signatures included
                continue
            stamp = inputs.pop(block["id"])
            assert block["input"] == {"file_path": was["input"]["file_path"], "content": CLEARED_MARKER}
            dumped = json.dumps(was["input"], separators=(",", ":"), ensure_ascii=False).encode()
            assert stamp["sha256"] == hashlib.sha256(dumped).hexdigest() and stamp["cleared"]
    assert inputs == {}
    hybrid = compressed(writing, tmp_path / "hybrid", "hybrid")
    assert not [o for o in hybrid.get("bounded", {}).get("outputs", []) if o["part"] == "input"]


@pytest.mark.claude_code
def test_a_masked_candidate_with_cleared_writes_passes_the_resume_gate(
    writing: Path, tmp_path: Path, claude_code: Path
) -> None:
    report = gated(writing, tmp_path, "mask", claude_code)
    assert report["status"] == "compressed" and report["mask"]["cleared_inputs"] > 0
    assert report["resume_check"]["verdict"] == "match", report["resume_check"]
    candidate = candidate_of(tmp_path / "out", writing)
    _one_cleared_undeclared(candidate, part="input")
    refused = compaction("verify-resume", str(writing), str(candidate), "--claude", str(claude_code))
    assert refused.returncode == 1, refused.stdout[-2000:] + refused.stderr[-2000:]
