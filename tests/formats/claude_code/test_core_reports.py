"""The compiled core and the pure-Python reference give identical `validate` reports, end to end.

One fleet holds the real corpus (read in place through links), fuzzed damaged sessions of every
mutation kind, and a generated fleet; `compaction validate` runs over it twice as a user runs
it, once from this tree (the Rust core where built) and once from a copy without any compiled
module, and every report must be the same (timings aside). The line-for-line index
comparison is in test_scan.py; this is the whole path through topology, partition and checks.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipeline.formats.claude_code import scan
from pipeline.testing.fuzz import Mutation
from pipeline.testing.fuzzing import builder_sources, corpus_sources, fuzz_cases
from pipeline.testing.synth import generate_fleet
from tests.support.validate_runs import reports_without_timings, validate_from

REPO = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.skipif(not scan.COMPILED, reason="no compiled index is built here")


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
    compiled = validate_from(REPO, fleet, tmp_path / "compiled")
    reference = validate_from(plain, fleet, tmp_path / "reference")
    assert compiled.returncode == reference.returncode and compiled.returncode in (0, 1), reference.stderr
    mine, theirs = (
        reports_without_timings(tmp_path / "compiled"),
        reports_without_timings(tmp_path / "reference"),
    )
    assert mine.keys() == theirs.keys()
    assert len(mine) >= sessions  # every session reported (subagent files add their own)
    different = [name for name, report in mine.items() if report != theirs[name]]
    assert not different, different[:5]
