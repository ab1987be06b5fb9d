"""`compaction probe ORIGINAL COMPACTED`: the span rebuilt from two files, its exit codes, and a
compaction that is not ours (Claude Code's own)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from pipeline.jobs.compress import compress_session
from pipeline.testing import TranscriptBuilder, as_json
from pipeline.testing.invoke import compaction
from pipeline.testing.settings import compress_options
from tests.jobs._work_session import FIRST_PROMPT, ForgetfulWriter, build_work_session


def compacted(tmp_path: Path, *, forget: bool = False) -> tuple[Path, Path, dict[str, Any]]:
    source = tmp_path / "src" / "session.jsonl"
    build_work_session(source)
    options = compress_options(tmp_path / "out", min_tokens=0, min_recent_records=8)
    if forget:
        options = replace(options, writer=ForgetfulWriter(options.summary_writer()))
    report = as_json(compress_session(source, "session.jsonl", options))
    assert report["status"] == "compressed", report.get("reasons")
    return source, tmp_path / "out" / "root" / "session.jsonl", report


def probe_json(*args: str) -> tuple[int, dict[str, Any]]:
    done = compaction("probe", *args, "--json")
    return done.returncode, json.loads(done.stdout) if done.stdout else {}


def test_probe_rebuilds_the_span_from_the_two_files_and_agrees_with_the_compress_report(
    tmp_path: Path,
) -> None:
    source, candidate, report = compacted(tmp_path)
    code, section = probe_json(str(source), str(candidate))
    assert code == 0
    assert section.pop("span") == "stamp" and report["fidelity"].pop("span") == "plan"
    assert section.pop("schema") == "session-compaction/probe-report/v1"  # the only key a report lacks
    assert section == report["fidelity"]


def test_probe_prints_a_table_of_the_classes_and_the_lost_probes_by_anchor(tmp_path: Path) -> None:
    source, candidate, report = compacted(tmp_path, forget=True)
    done = compaction("probe", str(source), str(candidate))
    assert done.returncode == 0, done.stderr
    for name in report["fidelity"]["classes"]:
        assert name in done.stdout
    for lost in report["fidelity"]["lost"]:
        assert f"lost L{lost['line']} {lost['class']}" in done.stdout and lost["id"] in done.stdout
    assert FIRST_PROMPT not in done.stdout and "/repo/src/app.py" not in done.stdout


def test_probe_exits_1_below_min_fidelity_and_0_at_it(tmp_path: Path) -> None:
    source, candidate, _ = compacted(tmp_path, forget=True)
    code, section = probe_json(str(source), str(candidate))
    fidelity = section["fidelity"]
    assert code == 0 and 0 < fidelity < 1
    assert probe_json(str(source), str(candidate), "--min-fidelity", str(fidelity))[0] == 0
    code, below = probe_json(str(source), str(candidate), "--min-fidelity", str(min(1.0, fidelity + 0.01)))
    assert code == 1 and below["floor"] == min(1.0, fidelity + 0.01)


def test_probe_refuses_files_that_are_not_a_source_and_its_compaction(tmp_path: Path) -> None:
    source, candidate, _ = compacted(tmp_path)
    other = tmp_path / "other.jsonl"
    build_work_session(other, seed=9)
    changed = tmp_path / "changed.jsonl"
    changed.write_bytes(source.read_bytes() + source.read_bytes().split(b"\n")[0] + b"\n")
    cases = [
        ((str(source), str(tmp_path / "missing.jsonl")), "not a file"),
        ((str(source), str(source)), "holds no compact boundary"),
        ((str(other), str(candidate)), "not made from this original"),
        ((str(changed), str(candidate)), "not made from this original"),
        ((str(source), str(candidate), "--min-fidelity", "1.5"), "--min-fidelity must be in [0, 1]"),
    ]
    for args, message in cases:
        done = compaction("probe", *args)
        assert done.returncode == 2 and message in done.stderr, (args, done.stderr)
        assert not done.stdout


def _claude_code_compaction(tmp_path: Path) -> tuple[Path, Path, str]:
    """A session, then the same file after Claude Code's own `/compact` and one more turn."""
    kept, lost = "Please add retries to the upload client.", "Please also log every failed attempt."
    builder = TranscriptBuilder(seed=5)
    builder.user(kept)
    builder.tool_call(
        "Bash", {"command": "pytest -q tests/test_upload.py"}, "Exit code 1\nE901 upload timed out"
    )
    builder.user(lost)
    builder.assistant(builder.text("Retries and logging are in."))
    original = builder.write(tmp_path / "original.jsonl")
    builder.compact(f"1. Primary request: {kept}\n2. Errors: pytest -q tests/test_upload.py failed")
    builder.user("Now write the changelog.")
    builder.assistant(builder.text("Done."))
    return original, builder.write(tmp_path / "compacted.jsonl"), lost


def test_probe_measures_a_compaction_that_is_not_ours_by_the_records_it_no_longer_holds(
    tmp_path: Path,
) -> None:
    original, compacted_file, _ = _claude_code_compaction(tmp_path)
    code, section = probe_json(str(original), str(compacted_file))
    assert code == 0
    assert section["span"] == "uuid-difference"
    assert section["classes"]["human-instruction"] == {"probes": 2, "kept": 1, "recall": 0.5}
    assert section["classes"]["command"] == {"probes": 1, "kept": 1, "recall": 1.0}
    assert section["classes"]["error"]["kept"] == 0  # the summary says it failed, not how
    lines = [orjson.loads(line) for line in original.read_bytes().splitlines()]
    second_prompt = next(
        n for n, r in enumerate(lines, 1) if r.get("type") == "user" and "log every" in str(r)
    )
    assert any(lost["line"] == second_prompt for lost in section["lost"])


def test_probe_refuses_a_compaction_that_does_not_continue_the_original(tmp_path: Path) -> None:
    _, compacted_file, _ = _claude_code_compaction(tmp_path)
    unrelated = tmp_path / "unrelated.jsonl"
    build_work_session(unrelated, seed=11)
    done = compaction("probe", str(unrelated), str(compacted_file))
    assert done.returncode == 2 and "does not continue the original" in done.stderr
