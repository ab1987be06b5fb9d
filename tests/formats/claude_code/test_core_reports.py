"""The compiled core and the pure-Python reference give identical `validate` reports, end to end.

One fleet holds the real corpus (read in place through links), fuzzed damaged sessions of every
mutation kind, and a generated fleet; `compaction validate` runs over it twice as a user runs
it, once from this tree (the Rust core where built) and once from a copy without any compiled
module, and every report must be the same (timings aside). The line-for-line index
comparison is in test_scan.py; this is the whole path through topology, partition and checks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.formats.claude_code import scan
from pipeline.testing.fuzz import Mutation
from pipeline.testing.fuzzing import builder_sources, corpus_sources, fuzz_cases
from pipeline.testing.synth import generate_fleet

REPO = Path(__file__).resolve().parents[3]
TIMING = "timing_ms"  # the one part of a report that differs between runs

pytestmark = pytest.mark.skipif(not scan.COMPILED, reason="no compiled index is built here")


def _validate(package_root: Path, fleet: Path, reports: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline",
            "validate",
            str(fleet),
            "--report-dir",
            str(reports),
            "--jobs",
            "2",
        ],
        cwd=package_root,
        env={**os.environ, "PYTHONPATH": str(package_root), "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        check=False,
    )


def _reports(folder: Path) -> dict[str, object]:
    """Every report under a folder, parsed, without its timings."""
    reports = {}
    for path in folder.rglob("*.report.json"):
        report = json.loads(path.read_bytes())
        report.pop(TIMING, None)  # a session not analysed (unsupported format) has none
        reports[path.relative_to(folder).as_posix()] = report
    return reports


def _fleet(root: Path, corpus_files: Path) -> int:
    """The corpus, fuzzed sessions and a generated fleet under `root`; how many sessions."""
    corpus = root / "corpus"
    corpus.mkdir(parents=True)
    for path in sorted(corpus_files.iterdir()):
        (corpus / path.name).symlink_to(path)
    sources = builder_sources() | corpus_sources(corpus_files, limit=8)
    damaged = root / "fuzzed"
    damaged.mkdir()
    cases = fuzz_cases(sources, seed=4207, count=3 * len(Mutation), depth=2_000, huge_bytes=200_000)
    for case in cases:
        (damaged / case.name).write_bytes(case.data)
    manifest = generate_fleet(root / "generated", target_bytes=3 << 20, seed=42)
    return len(list(corpus.iterdir())) + len(cases) + manifest.session_count


def test_validate_reports_are_identical_with_and_without_the_core(tmp_path: Path, corpus_files: Path) -> None:
    fleet = tmp_path / "fleet"
    sessions = _fleet(fleet, corpus_files)
    plain = tmp_path / "plain"
    ignore = shutil.ignore_patterns("*.so", "__pycache__", "rust")
    shutil.copytree(REPO / "pipeline", plain / "pipeline", ignore=ignore)
    shutil.copytree(REPO / "config", plain / "config")
    compiled = _validate(REPO, fleet, tmp_path / "compiled")
    reference = _validate(plain, fleet, tmp_path / "reference")
    assert compiled.returncode == reference.returncode and compiled.returncode in (0, 1), reference.stderr
    mine, theirs = _reports(tmp_path / "compiled"), _reports(tmp_path / "reference")
    assert mine.keys() == theirs.keys()
    assert len(mine) >= sessions  # every session reported (subagent files add their own)
    different = [name for name, report in mine.items() if report != theirs[name]]
    assert not different, different[:5]
