"""Resume markers: a finished session's outcome comes back only for the same source and options,
and a forged marker builds nothing but report values."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from pipeline.jobs.validate import validate_session
from pipeline.report.documents import crashed
from pipeline.report.render import report_bytes
from pipeline.report.resume import config_digest, marker_bytes, marker_label, resumed_outcome
from pipeline.testing.sessions import build_session
from pipeline.testing.settings import validate_options


@pytest.fixture
def outcome(tmp_path: Path) -> object:
    build_session(tmp_path / "a.jsonl", turns=3)
    return validate_session(tmp_path / "a.jsonl", "a.jsonl", validate_options())


def test_a_marker_gives_back_the_very_outcome(outcome: object) -> None:
    digest = config_digest("validate", validate_options())
    data = marker_bytes(outcome, digest)  # type: ignore[arg-type]
    assert data is not None
    sha = outcome.report.session.sha256  # type: ignore[attr-defined]
    back = resumed_outcome(data, sha, digest)
    assert back == outcome
    assert report_bytes(back.report) == report_bytes(outcome.report)  # type: ignore[union-attr, attr-defined]


def test_another_source_or_other_options_run_again(outcome: object) -> None:
    digest = config_digest("validate", validate_options())
    data = marker_bytes(outcome, digest)  # type: ignore[arg-type]
    assert data is not None
    assert resumed_outcome(data, "0" * 64, digest) is None
    other = config_digest("validate", validate_options(max_file_history_snapshots=3))
    assert other != digest and resumed_outcome(data, outcome.report.session.sha256, other) is None  # type: ignore[attr-defined]
    assert config_digest("tokens", validate_options()) != digest


def test_a_crash_leaves_no_marker_and_a_forged_one_runs_nothing() -> None:
    assert marker_bytes(crashed("a.jsonl", "boom", per_code=5), "d") is None
    forged = pickle.dumps(os.system)
    assert resumed_outcome(forged, "x", "d") is None
    assert resumed_outcome(b"not a pickle", "x", "d") is None


def test_markers_live_apart_from_reports() -> None:
    assert marker_label("root/p/s.jsonl") == ".resume/root/p/s.jsonl.done.pickle"
