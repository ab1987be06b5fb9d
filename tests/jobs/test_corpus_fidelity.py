"""Fidelity over the real corpus: every candidate's report scores it, `probe` rebuilds the same
score from the two files alone, and a candidate whose summary is taken away keeps only what its
kept records still carry."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from pipeline.jobs.fidelity_inputs import Measured, SpanSource, probe_files
from pipeline.report.fidelity import fidelity_section
from pipeline.report.render import json_bytes
from pipeline.testing.settings import default_settings

SETTINGS = default_settings()


@pytest.fixture(scope="module")
def compressed(
    corpus_files: Path, tmp_path_factory: pytest.TempPathFactory
) -> list[tuple[Path, Path, dict[str, Any]]]:
    """(source, candidate, report) of every corpus session compress writes a candidate for."""
    out = tmp_path_factory.mktemp("fidelity") / "out"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline",
            "compress",
            str(corpus_files),
            "--out",
            str(out),
            "--jobs",
            "2",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    found = []
    for path in sorted(out.rglob("*.report.json")):
        report = json.loads(path.read_text())
        # Probes are of Claude Code sessions; a Codex rollout's candidate is proven by its context.
        if report["status"] == "compressed" and report["session"]["format"] == "claude-code":
            candidate = out / report["output"]["path"]
            found.append((corpus_files / report["session"]["label"], candidate, report))
    assert len(found) >= 15  # the corpus has that many sessions worth compressing
    return found


def section_of(measured: Measured) -> dict[str, Any]:
    section = fidelity_section(
        measured.score,
        span=measured.span.value,
        summarized_lines=measured.summarized_lines,
        lost_per_class=SETTINGS.compress.lost_probes_per_class,
    )
    parsed: dict[str, Any] = json.loads(json_bytes(section))
    return parsed


def test_every_compressed_report_has_a_fidelity_section_probe_rebuilds_exactly(
    compressed: list[tuple[Path, Path, dict[str, Any]]],
) -> None:
    probed = 0
    for source, candidate, report in compressed:
        measured = probe_files(source, candidate, SETTINGS.sweep)
        assert isinstance(measured, Measured), (source.name, measured)
        assert measured.span is SpanSource.STAMP
        section = section_of(measured)
        expected = dict(report["fidelity"], span="stamp")
        assert section == expected, source.name
        probed += section["probes"]
    assert probed > 300  # the corpus's summarized spans hold hundreds of facts


def _without_summary(candidate: Path, target: Path) -> Path:
    lines = []
    for line in candidate.read_bytes().splitlines():
        record = orjson.loads(line)
        if record.get("isCompactSummary"):
            record["message"]["content"] = "This session is being continued from a previous conversation."
        lines.append(orjson.dumps(record) if record.get("isCompactSummary") else line)
    target.write_bytes(b"\n".join(lines) + b"\n")
    return target


def test_a_candidate_without_its_summary_keeps_only_what_its_kept_records_carry(
    compressed: list[tuple[Path, Path, dict[str, Any]]], tmp_path: Path
) -> None:
    dropped = 0
    for number, (source, candidate, report) in enumerate(compressed):
        emptied = _without_summary(candidate, tmp_path / f"{number}.jsonl")
        measured = probe_files(source, emptied, SETTINGS.sweep)
        assert isinstance(measured, Measured)
        before = report["fidelity"]["classes"]
        for score in measured.score.classes:
            assert score.kept <= before[score.klass.value]["kept"], (source.name, score.klass)
        dropped += report["fidelity"]["kept"] - measured.score.kept
    assert dropped > 200  # most of what candidates keep of their span, their summary keeps
