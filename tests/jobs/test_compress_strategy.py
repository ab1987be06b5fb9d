"""`--strategy hybrid`: the oldest span summarized, the kept middle's tool outputs cleared to Claude
Code's own marker (declared with size and digest), every kept text as it was; the resume gate with
the real Claude Code 2.1.332 passes such a candidate, and every human text of the source chain is in
what Claude Code sends."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from pipeline.formats.claude_code.bounded_output import CLEARED_MARKER
from pipeline.jobs.compress import compress_session
from pipeline.proof.claude_code.client import resume
from pipeline.report.render import json_bytes
from pipeline.testing.invoke import candidate_of, compaction, reports
from pipeline.testing.settings import compress_options, default_settings
from tests.jobs._work_session import FAILURE, build_work_session

TIMEOUT = default_settings().verify.resume_timeout_seconds


def compressed(source: Path, out: Path, strategy: str) -> dict[str, Any]:
    options = compress_options(out, min_tokens=0, min_recent_records=8, strategy=strategy)
    report: dict[str, Any] = json.loads(json_bytes(compress_session(source, source.name, options).report))
    return report


def rows(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def gated(source: Path, tmp_path: Path, strategy: str, claude_code: Path) -> dict[str, Any]:
    """The report of `compress` with `strategy` and the resume gate over `source`'s folder (into
    `tmp_path/out`, min_gain 0)."""
    config = tmp_path / "config.toml"
    config.write_text("[compress]\nmin_gain = 0.0\n")
    done = compaction(
        "compress", str(source.parent), "--out", str(tmp_path / "out"), "--strategy", strategy,
        "--verify-resume", "--claude", str(claude_code), "--min-tokens", "0", "--min-recent-records", "8",
        "--config", str(config), "--quiet",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    [report] = reports(tmp_path / "out")
    return report


def assert_resumed_with_every_human_text(candidate: Path, source: Path, claude_code: Path) -> None:
    """Claude Code resumes `candidate` and sends every human text of `source`, and the marker."""
    result = resume(candidate, executable=claude_code, timeout=TIMEOUT)
    assert result.resumed, result.stderr[-2000:]
    sent = " ".join(" ".join(s.split()) for s in result.context.strings)
    assert CLEARED_MARKER in sent
    for text in human_texts(rows(source)):
        assert " ".join(text.split()) in sent


def human_texts(records: list[dict[str, Any]]) -> list[str]:
    """What a human typed, record by record (tool results and meta records aside)."""
    texts = []
    for record in records:
        message = record.get("message") or {}
        if record.get("type") != "user" or record.get("isMeta") or record.get("isCompactSummary"):
            continue
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return texts


def test_hybrid_keeps_more_raw_and_clears_only_the_middle_declaring_every_output(tmp_path: Path) -> None:
    source = tmp_path / "in" / "session.jsonl"
    source.parent.mkdir()
    build_work_session(source, turns=12)
    summary = compressed(source, tmp_path / "summary", "summary")
    hybrid = compressed(source, tmp_path / "hybrid", "hybrid")
    assert summary["status"] == hybrid["status"] == "compressed"
    assert hybrid["tokens"]["target_met"]
    assert hybrid["plan"]["summarized_records"] < summary["plan"]["summarized_records"]
    # the masked middle is probed with the summarized span: what clearing lost is measured too
    assert hybrid["fidelity"]["summarized_lines"] > hybrid["partition"]["summary"]["count"]
    assert summary["fidelity"]["summarized_lines"] == summary["partition"]["summary"]["count"]
    bounded = hybrid["bounded"]
    assert bounded["cleared"] > 0
    by_id = {row["uuid"]: row for row in rows(source) if "uuid" in row}
    assert hybrid["summary"]["chars"] > 0
    written = rows(candidate_of(tmp_path / "hybrid", source))
    chain = [row["uuid"] for row in rows(source) if "uuid" in row]  # the builder writes one linear chain
    cleared = {o["tool_use_id"]: o for o in bounded["outputs"] if o["cleared"]}
    for row in written[2:]:  # the compact pair first, then the kept records (and the last-prompt marker)
        if row.get("type") not in ("user", "assistant"):
            continue
        original = by_id[row["uuid"]]
        if row["type"] == "assistant":  # every assistant record as it was: text, thinking, tool calls
            assert row["message"] == original["message"]
            continue
        for block, before in zip(row["message"]["content"], original["message"]["content"], strict=True):
            if isinstance(block, dict) and block.get("content") == CLEARED_MARKER:
                text = before["content"]
                stamp = cleared.pop(block["tool_use_id"])
                assert stamp["sha256"] == hashlib.sha256(text.encode()).hexdigest()
                assert stamp["original_bytes"] == len(text.encode())
                assert chain.index(row["uuid"]) < hybrid["plan"]["protected_start"]
                assert FAILURE not in text  # a failed run's output is never cleared
            else:
                assert block == before
    assert cleared == {}  # every output declared cleared is cleared in the candidate


@pytest.mark.claude_code
def test_a_hybrid_candidate_passes_the_resume_gate_with_every_human_text_sent(
    tmp_path: Path, claude_code: Path
) -> None:
    source = tmp_path / "in" / "session.jsonl"
    source.parent.mkdir()
    build_work_session(source, turns=12)
    report = gated(source, tmp_path, "hybrid", claude_code)
    assert report["status"] == "compressed" and report["bounded"]["cleared"] > 0
    assert report["resume_check"]["verdict"] == "match", report["resume_check"]
    candidate = candidate_of(tmp_path / "out", source)
    assert_resumed_with_every_human_text(candidate, source, claude_code)
