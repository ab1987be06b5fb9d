"""`validate` of Codex rollouts: the same sweep as for Claude Code, with Codex's rebuilt context."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.core.partition import line_digest
from pipeline.formats.codex.analysis import analyze_rollout
from pipeline.jobs.validate import validate_session
from pipeline.proof.codex.codex_client import resume_codex
from pipeline.report.documents import Validated
from pipeline.testing import as_json
from pipeline.testing.settings import LIMITS, validate_options
from pipeline.vocabulary import PartitionSet
from tests.support.rollout_builder import RolloutBuilder


def _validate(tmp_path: Path, b: RolloutBuilder) -> dict:  # type: ignore[type-arg]
    path = b.write(tmp_path / "rollout-2026-03-01T12-00-00-x.jsonl")
    outcome = validate_session(path, path.name, validate_options())
    assert isinstance(outcome, Validated)
    return as_json(outcome)


def test_a_rollout_is_validated_with_its_context_and_partition(tmp_path: Path) -> None:
    b = RolloutBuilder(seed=11)
    b.exchange("first", tools=2)
    b.turn("second")
    base = b.compacted("summary", [b.message("user", "first"), b.message("user", "summary")])
    kept = b.assistant("after")
    b.end_turn()
    report = _validate(tmp_path, b)
    assert report["status"] == "valid" and report["session"]["format"] == "codex-rollout"
    assert report["session"]["client_versions"] == ["0.171.0"]
    context = report["context"]
    assert context["base_line"] == base and context["compactions"] == 1 and context["items"] == 3
    assert context["lines"] == {"count": 2, "digest": line_digest({base, kept})}
    partition = report["partition"]
    assert partition["raw_keep"] == context["lines"]
    assert sum(entry["count"] for entry in partition.values()) == b.lines
    assert partition["excluded_branch"]["count"] == 9  # the first exchange's items and the second prompt
    assert report["tokens"]["estimator"] == "codex-approx" and report["tokens"]["active_chain"] > 0


def test_damaged_lines_are_findings_with_their_lines(tmp_path: Path) -> None:
    b = RolloutBuilder(seed=12)
    b.exchange("task", tools=1)
    cut = b.raw(b'{"timestamp":"2026-03-01T12:00:09.000Z","type":"response_item","payload":{"type":"mess')
    not_object = b.raw(b"[1, 2]")
    bad_utf8 = b.raw(
        b'{"timestamp":"x","type":"event_msg","payload":{"type":"agent_message","message":"\xff"}}'
    )
    report = _validate(tmp_path, b)
    found = {(f["code"], f.get("line")) for f in report["findings"]}
    assert {
        ("line-truncated", cut),
        ("line-not-object", not_object),
        ("line-invalid-utf8", bad_utf8),
    } <= found
    assert report["status"] == "invalid"


def test_unanswered_calls_orphans_and_a_missing_meta_are_warnings(tmp_path: Path) -> None:
    b = RolloutBuilder(seed=13)
    b._lines.clear()  # no session_meta
    b.turn("go")
    orphan = b.output("call_gone", "nobody asked")
    call = b.call("exec_command", {"cmd": "sleep 9"})
    report = _validate(tmp_path, b)
    codes = {(f["code"], f.get("line")) for f in report["findings"]}
    assert ("session-meta-missing", 1) in codes and ("tool-result-without-use", orphan) in codes
    assert ("tool-use-unanswered", b.lines) in codes
    assert report["status"] == "warnings"
    assert report["context"]["aborted_calls"] == 1 and report["context"]["dropped_outputs"] == 1
    assert call


def test_every_corpus_rollout_validates_with_no_error(codex_files: Path) -> None:
    statuses = {}
    for path in sorted(codex_files.glob("*.jsonl")):
        outcome = validate_session(path, path.name, validate_options())
        assert isinstance(outcome, Validated), path.name
        report = as_json(outcome)
        assert report["counts"].get("error", 0) == 0, (path.name, report["findings"])
        statuses[path.name] = report["context"]["resumable"]
    assert len(statuses) == 15 and sum(statuses.values()) == 14  # the 0.2x layout is not resumable


USAGE = {"input_tokens": 9, "cached_input_tokens": 0, "output_tokens": 2, "reasoning_output_tokens": 0}


def test_the_records_codex_0_171_writes_are_read_as_its_resume_state_not_unknown(tmp_path: Path) -> None:
    b = RolloutBuilder(seed=14)
    b.exchange("task", tools=1)
    world = b.raw(b'{"timestamp":"t","type":"world_state","payload":{"full":true,"state":{}}}')
    usage = b.raw(
        b'{"timestamp":"t","type":"token_usage_record","payload":{"thread_id":"x","turn_id":"y",'
        b'"response_id":"resp_1","usage":' + json.dumps(USAGE).encode() + b"}}"
    )
    trigger = b.raw(
        b'{"timestamp":"t","type":"inter_agent_communication_metadata","payload":{"trigger_turn":true}}'
    )
    strange = b.raw(b'{"timestamp":"t","type":"no_such_record","payload":{}}')
    report = _validate(tmp_path, b)
    unknown = [f.get("line") for f in report["findings"] if f["code"] == "unknown-record"]
    assert unknown == [strange]  # a kind Codex does not write is still said, and only that one
    assert report["status"] == "valid"
    analysis = analyze_rollout(b.to_bytes(), LIMITS)
    assert {world, usage, trigger} <= analysis.sweep_sets()[PartitionSet.CONTROL_PROJECTION]


@pytest.mark.codex
def test_a_rollout_the_real_codex_appended_to_reads_without_unknown_records(
    codex: Path, tmp_path: Path
) -> None:
    b = RolloutBuilder(seed=15)
    b.exchange("task", tools=1)
    (tmp_path / "in").mkdir()
    source = b.write(tmp_path / "in" / f"rollout-2026-03-01T12-00-00-{b.session_id}.jsonl")
    kept = tmp_path / source.name
    resumed = resume_codex(source, executable=codex, timeout=120, keep=kept)
    assert resumed.resumed, resumed.stderr[-2000:]
    written = kept.read_bytes().splitlines()[len(source.read_bytes().splitlines()) :]
    kinds = {json.loads(line)["type"] for line in written if line.strip()}
    assert "token_usage_record" in kinds  # what Codex 0.171 writes after each model response
    report = as_json(validate_session(kept, kept.name, validate_options()))
    assert [f for f in report["findings"] if f["code"] == "unknown-record"] == []
