"""compress: every candidate's report has a `fidelity` section, and `min_fidelity` refuses below it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from pipeline.jobs.compress import CompressOptions, compress_session
from pipeline.testing import as_json
from pipeline.testing.settings import compress_options
from tests.jobs._work_session import FAILURE, FIRST_PROMPT, TEST_COMMAND, ForgetfulWriter, build_work_session

CLASSES = ["human-instruction", "file-modified", "file-read", "command", "error", "identifier", "last-state"]


def options(out: Path, **extra: Any) -> CompressOptions:
    return compress_options(out, **{"min_tokens": 0, "min_recent_records": 8, **extra})


def forgetful(out: Path, **extra: Any) -> CompressOptions:
    base = options(out, **extra)
    return replace(base, writer=ForgetfulWriter(base.summary_writer()))


def test_a_compressed_report_scores_every_class_of_the_summarized_span(tmp_path: Path) -> None:
    source = tmp_path / "session.jsonl"
    build_work_session(source)
    report = as_json(compress_session(source, "session.jsonl", options(tmp_path / "out")))
    assert report["status"] == "compressed", report.get("reasons")
    fidelity = report["fidelity"]
    assert list(fidelity["classes"]) == CLASSES
    assert (
        fidelity["span"] == "plan" and fidelity["summarized_lines"] == report["partition"]["summary"]["count"]
    )
    for name in CLASSES:
        assert fidelity["classes"][name]["probes"] >= 1, name
    kept = sum(entry["kept"] for entry in fidelity["classes"].values())
    assert fidelity["kept"] == kept and fidelity["probes"] == sum(
        c["probes"] for c in fidelity["classes"].values()
    )
    assert fidelity["probes"] - fidelity["kept"] == len(fidelity["lost"]) + fidelity.get("lost_unlisted", 0)
    assert "floor" not in fidelity  # no floor was set


def test_the_report_names_lost_probes_by_anchor_never_by_their_text(tmp_path: Path) -> None:
    source = tmp_path / "session.jsonl"
    build_work_session(source)
    report = as_json(compress_session(source, "session.jsonl", forgetful(tmp_path / "out")))
    fidelity = report["fidelity"]
    assert fidelity["classes"]["command"]["kept"] < fidelity["classes"]["command"]["probes"]
    assert {entry["class"] for entry in fidelity["lost"]} >= {"command", "error", "file-read"}
    for entry in fidelity["lost"]:
        assert set(entry) <= {"line", "class", "kind", "id"} and len(entry["id"]) == 12
    text = json.dumps(report)
    for fact in (FAILURE, TEST_COMMAND, "/repo/src/app.py", "KeyError", FIRST_PROMPT):
        assert fact not in text


def test_lost_probes_listed_are_bounded_per_class_and_the_rest_counted(tmp_path: Path) -> None:
    source = tmp_path / "session.jsonl"
    build_work_session(source, turns=8)
    report = as_json(
        compress_session(source, "s.jsonl", forgetful(tmp_path / "out", lost_probes_per_class=1))
    )
    fidelity = report["fidelity"]
    classes = [entry["class"] for entry in fidelity["lost"]]
    assert len(classes) == len(set(classes))  # one of each class at most
    assert fidelity["lost_unlisted"] == fidelity["probes"] - fidelity["kept"] - len(classes) > 0


def test_min_fidelity_refuses_a_candidate_below_the_floor_and_writes_nothing(tmp_path: Path) -> None:
    source = tmp_path / "session.jsonl"
    build_work_session(source)
    out = tmp_path / "out"
    report = as_json(compress_session(source, "session.jsonl", forgetful(out, min_fidelity=0.9)))
    assert report["status"] == "refused"
    assert report["reasons"] == ["fidelity-below-minimum"]
    assert report["fidelity"]["floor"] == 0.9 and report["fidelity"]["fidelity"] < 0.9
    assert "output" not in report and not list(out.rglob("*.jsonl"))


def test_a_candidate_at_or_above_the_floor_is_written(tmp_path: Path) -> None:
    source = tmp_path / "session.jsonl"
    build_work_session(source)
    measured = as_json(compress_session(source, "session.jsonl", options(tmp_path / "first")))["fidelity"]
    floor = measured["fidelity"]
    report = as_json(compress_session(source, "session.jsonl", options(tmp_path / "out", min_fidelity=floor)))
    assert report["status"] == "compressed" and report["fidelity"]["floor"] == floor
    assert (tmp_path / "out" / "root" / "session.jsonl").is_file()
