"""compress: what it writes, what it refuses, what survives, and what never leaks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from pipeline.core.index import LineIndex
from pipeline.core.topology.select import Topology
from pipeline.jobs.compress import CompressOptions, compress_session, stages
from pipeline.jobs.validate import validate_session
from pipeline.testing import TranscriptBuilder, as_json
from pipeline.testing.sessions import CANARY_BRANCH, CANARY_MALFORMED, PROMPTS, build_session
from pipeline.testing.settings import compress_options, validate_options
from tests.support.resolved import resolve


def options(out: Path, **extra: Any) -> CompressOptions:
    return compress_options(out, **{"min_tokens": 0, "min_recent_records": 8, **extra})


def chain_of(data: bytes) -> tuple[LineIndex, Topology]:
    resolved = resolve(data)
    return resolved.index, resolved.topology


def test_compress_writes_a_valid_candidate_that_keeps_the_tail_byte_for_byte(tmp_path: Path) -> None:
    source = tmp_path / "src" / "session.jsonl"
    source.parent.mkdir()
    build_session(source, turns=6)
    before = source.read_bytes()
    outcome = compress_session(source, "session.jsonl", options(tmp_path / "out"))
    assert outcome.status.value == "compressed", as_json(outcome).get("reasons")
    assert source.read_bytes() == before  # the source is never touched
    candidate = tmp_path / "out" / "root" / "session.jsonl"
    data = candidate.read_bytes()
    assert as_json(outcome)["output"]["sha256"] and len(data) < len(before)
    index, topology = chain_of(data)
    records = [index.record(line) for line in topology.chain]
    assert records[0].compact_boundary and records[1].compact_summary
    assert sum(1 for r in index.records if r is not None and (r.compact_boundary or r.compact_summary)) == 2
    # Every raw record is the source line, byte for byte, except the first one's parentUuid.
    source_lines = set(before.split(b"\n"))
    raw = [index.raw_line(data, line) for line in topology.chain[2:]]
    assert raw[0] not in source_lines and all(line in source_lines for line in raw[1:])
    assert orjson.loads(raw[0])["parentUuid"] == records[1].uuid
    pointer = orjson.loads(data.rstrip(b"\n").rsplit(b"\n", 1)[-1])
    assert pointer["type"] == "last-prompt" and pointer["leafUuid"] == records[-1].uuid
    revalidated = validate_session(candidate, "candidate", validate_options())
    assert revalidated.status.value in ("valid", "warnings"), as_json(revalidated)["findings"]
    summary = orjson.loads(index.raw_line(data, topology.chain[1]))["message"]["content"]
    for prompt in PROMPTS:
        assert prompt in summary or any(prompt.encode() in line for line in raw)


def test_excluded_and_malformed_content_never_reaches_output_or_report(tmp_path: Path) -> None:
    source = tmp_path / "session.jsonl"
    build_session(source, turns=6)
    assert CANARY_BRANCH.encode() in source.read_bytes() and CANARY_MALFORMED.encode() in source.read_bytes()
    out = tmp_path / "out"
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline",
            "compress",
            str(source),
            "--out",
            str(out),
            "--min-tokens",
            "0",
            "--min-recent-records",
            "8",
            "--jobs",
            "1",
            "--log-format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    produced = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.name == "session.jsonl" for p in produced)
    for path in produced:
        blob = path.read_bytes()
        assert CANARY_BRANCH.encode() not in blob and CANARY_MALFORMED.encode() not in blob, path.name
    assert CANARY_BRANCH not in completed.stdout + completed.stderr
    assert CANARY_MALFORMED not in completed.stdout + completed.stderr


def test_compressing_three_times_keeps_one_pair_one_appendix_and_every_constraint(tmp_path: Path) -> None:
    current = tmp_path / "pass0" / "session.jsonl"
    current.parent.mkdir()
    builder = build_session(current, turns=6, pointer=False)
    for round_ in range(1, 4):
        # New work arrives after each compaction, as in a session that keeps going.
        builder_data = current.read_bytes()
        extension = TranscriptBuilder(seed=100 + round_, session_id=builder.session_id)
        index, topology = chain_of(builder_data)
        extension.rewind(index.record(topology.chain[-1]).uuid, external=True)
        for turn in range(3):
            extension.user(f"Round {round_} follow-up {turn}: keep going")
            for step in range(3):
                extension.tool_call("Read", {"file_path": f"/repo/f{round_}{turn}{step}.py"}, "x = 1\n" * 300)
            extension.assistant(extension.text(f"round {round_} turn {turn} done"))
        grown = tmp_path / f"grown{round_}" / "session.jsonl"
        grown.parent.mkdir()
        grown.write_bytes(builder_data + extension.to_bytes())
        outcome = compress_session(grown, "session.jsonl", options(tmp_path / f"pass{round_}"))
        assert outcome.status.value == "compressed", (round_, as_json(outcome).get("reasons"))
        current = tmp_path / f"pass{round_}" / "root" / "session.jsonl"
        data = current.read_bytes()
        index, topology = chain_of(data)
        pairs = [r for r in index.records if r is not None and (r.compact_boundary or r.compact_summary)]
        assert len(pairs) == 2
        summary = orjson.loads(index.raw_line(data, topology.chain[1]))["message"]["content"]
        assert summary.count("## Goal") == 1
        assert summary.count("<!-- session-compaction appendix") <= 1
        for prompt in PROMPTS:  # every constraint of the first pass is still carried
            assert " ".join(prompt.split()) in " ".join(summary.split()), (round_, prompt)


def test_a_session_below_min_tokens_is_skipped_small(tmp_path: Path) -> None:
    source = tmp_path / "session.jsonl"
    build_session(source, turns=2)
    outcome = compress_session(source, "session.jsonl", compress_options(tmp_path / "out", min_tokens=10**9))
    assert outcome.status.value == "skipped-small" and not (tmp_path / "out").exists()


def test_a_session_that_fits_its_target_or_would_barely_shrink_is_skipped(tmp_path: Path) -> None:
    source = tmp_path / "session.jsonl"
    builder = TranscriptBuilder(seed=4)
    for question in ("what does this flag do?", "and the other one?"):
        builder.user(question)
        builder.assistant(builder.text("It toggles verbose output."))
    builder.write(source)
    fits = compress_session(
        source, "s", compress_options(tmp_path / "out", min_tokens=0, target_estimated_tokens=10_000)
    )
    assert fits.status.value == "skipped-fits" and as_json(fits)["reasons"] == ["whole-chain-fits"]
    small = compress_session(source, "s", compress_options(tmp_path / "out", min_tokens=0))
    assert small.status.value == "skipped-low-gain" and as_json(small)["reasons"] == ["gain-below-minimum"]
    assert not (tmp_path / "out").exists()


def test_a_token_target_that_cannot_be_met_refuses_and_writes_nothing(tmp_path: Path) -> None:
    source = tmp_path / "session.jsonl"
    build_session(source, turns=6)
    outcome = compress_session(source, "session.jsonl", options(tmp_path / "out", target_estimated_tokens=50))
    assert outcome.status.value == "refused"
    report = as_json(outcome)
    assert "candidate-over-token-target" in report["reasons"]
    figures = report["reason_figures"]["candidate-over-token-target"]
    assert figures["allowed_tokens"] == 50 and figures["needed_tokens"] > 50
    assert not list((tmp_path / "out").rglob("*.jsonl"))


def test_a_session_whose_summary_would_overflow_its_budget_is_compressed_with_a_fitted_one(
    tmp_path: Path,
) -> None:
    source = tmp_path / "session.jsonl"
    b = TranscriptBuilder(seed=31)
    prompts = []
    for number in range(80):  # pasted logs: about 270,000 characters of requests
        prompts.append(f"request {number}: please look at this log\n" + f"{number} ERROR retry\n" * 200)
        b.user(prompts[-1])
        b.assistant(b.text(f"Looked at log {number}."))
        b.tool_call("Bash", {"command": f"grep -c ERROR log{number}"}, "200")
    source.write_bytes(b.to_bytes())
    outcome = compress_session(source, "session.jsonl", options(tmp_path / "out", summary_char_budget=20_000))
    report = as_json(outcome)
    assert outcome.status.value == "compressed", report.get("reasons")
    summary = report["summary"]
    assert summary["chars"] <= summary["budget"] == 20_000
    fit = summary["fit"]
    assert fit["needed_chars"] > fit["allowed_chars"] and fit["prompt_head_chars"] >= 200
    data = (tmp_path / "out" / "root" / "session.jsonl").read_bytes()
    index, topology = chain_of(data)
    text = orjson.loads(index.raw_line(data, topology.chain[1]))["message"]["content"]
    kept_raw = data.replace(b"\\n", b"\n")  # a kept record holds its request JSON-escaped
    summarized = [p for p in prompts if p.encode() not in kept_raw]
    # Each summarized request opens its bullet with its first 200 characters (continuation lines indented).
    assert summarized and all(p[:200].replace("\n", "\n  ") in text for p in summarized)


def test_a_source_changed_during_compression_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipeline.jobs.compress import job as compress_module

    source = tmp_path / "session.jsonl"
    build_session(source, turns=6)
    real = compress_module.compose_and_check

    def racing(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        with source.open("ab") as handle:  # another writer appends while we work
            handle.write(b'{"type":"progress"}\n')
        return result

    monkeypatch.setattr(compress_module, "compose_and_check", racing)
    outcome = compress_session(source, "session.jsonl", options(tmp_path / "out"))
    assert outcome.status.value == "refused" and as_json(outcome)["reasons"] == [
        "source-changed-during-compression"
    ]
    assert not list((tmp_path / "out").rglob("*.jsonl"))


def test_cli_refuses_an_output_inside_a_claude_directory(tmp_path: Path) -> None:
    source = tmp_path / "session.jsonl"
    build_session(source, turns=2)
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline",
            "compress",
            str(source),
            "--out",
            str(tmp_path / ".claude" / "out"),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 2 and ".claude" in completed.stderr


def test_compress_reports_are_written_next_to_candidates(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    (root / "p1").mkdir(parents=True)
    build_session(root / "p1" / "a.jsonl", turns=6)
    small = TranscriptBuilder(seed=9)
    small.user("a quick question")
    small.assistant(small.text("a quick answer"))
    small.write(root / "p1" / "b.jsonl")
    out = tmp_path / "out"
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline",
            "compress",
            str(root),
            "--out",
            str(out),
            "--min-tokens",
            "0",
            "--min-recent-records",
            "8",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["by_status"] == {"compressed": 1, "skipped-no-cut": 1}
    assert (out / "projects" / "p1" / "a.jsonl").exists() and not (
        out / "projects" / "p1" / "b.jsonl"
    ).exists()
    assert (out / "projects" / "p1" / "a.jsonl.report.json").exists()
    assert not [p for p in out.rglob(".*.tmp")]  # atomic writes leave no temporary files


def test_pinned_anchors_are_restated_and_checked(tmp_path: Path) -> None:
    source = tmp_path / "session.jsonl"
    build_session(source, turns=6)
    anchor = "Never push to the main branch directly"
    outcome = compress_session(source, "session.jsonl", options(tmp_path / "out", anchors=(anchor,)))
    assert outcome.status.value == "compressed"
    data = (tmp_path / "out" / "root" / "session.jsonl").read_bytes()
    index, topology = chain_of(data)
    summary = orjson.loads(index.raw_line(data, topology.chain[1]))["message"]["content"]
    assert f"- {anchor}" in summary
    again = compress_session(
        tmp_path / "out" / "root" / "session.jsonl",
        "session.jsonl",
        options(tmp_path / "out2", anchors=(anchor,), min_gain=0.0),
    )
    if again.status.value == "compressed":  # the block is rebuilt, never stacked
        data2 = (tmp_path / "out2" / "root" / "session.jsonl").read_bytes()
        assert data2.count(anchor.encode()) == 1


def test_a_candidate_that_parts_from_its_plan_is_an_internal_error_with_the_figures_to_reproduce_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A defect of ours (the composed chain is not the planned one) never reads as the session's refusal."""
    real = stages.check_candidate

    def disagreeing(candidate: bytes, **kwargs: Any) -> Any:  # the real check, told of another leaf
        expected = [*kwargs.pop("expected_chain_uuids")[:-1], "a-leaf-the-composer-did-not-write"]
        return real(candidate, expected_chain_uuids=expected, **kwargs)

    monkeypatch.setattr(stages, "check_candidate", disagreeing)
    source = tmp_path / "src" / "session.jsonl"
    source.parent.mkdir()
    build_session(source, turns=6)
    outcome = compress_session(source, "session.jsonl", options(tmp_path / "out"))
    report = as_json(outcome)
    assert report["status"] == "internal-error" and outcome.failed
    assert report["reasons"] == ["candidate-chain-differs-from-plan"]
    figures = report["reason_figures"]["candidate-chain-differs-from-plan"]
    assert figures["first_difference"] == figures["expected_records"] - 1
    assert report["session"]["sha256"] and report["plan"]["cut_position"] > 0  # what reproduces it
    assert outcome.error is not None and "first_difference" in outcome.error
    assert not (tmp_path / "out" / "root" / "session.jsonl").exists()  # nothing written
