"""Outcomes cross the process boundary as they are: typed, with their enums, equal after the trip."""

from __future__ import annotations

import pickle
from pathlib import Path

from pipeline.jobs.compress import compress_session
from pipeline.jobs.validate import validate_session
from pipeline.report.documents import Compressed, Validated, crashed
from pipeline.report.render import report_bytes
from pipeline.testing.sessions import build_session
from pipeline.testing.settings import compress_options, default_settings, validate_options
from pipeline.vocabulary import LeafPolicy, SessionStatus, StrictStatus


def test_outcomes_and_settings_pickle_with_their_enums(tmp_path: Path) -> None:
    source = tmp_path / "session.jsonl"
    build_session(source, turns=6)
    outcomes = [
        compress_session(source, "s", compress_options(tmp_path / "out", min_tokens=0, min_recent_records=8)),
        validate_session(source, "s", validate_options()),
        crashed("s", "Traceback ...", per_code=3),
    ]
    assert [type(o) for o in outcomes[:2]] == [Compressed, Validated]
    for outcome in outcomes:
        back = pickle.loads(pickle.dumps(outcome))
        assert back == outcome and type(back) is type(outcome)
        assert type(back.status) is SessionStatus
        assert report_bytes(back.report) == report_bytes(outcome.report)
    assert type(pickle.loads(pickle.dumps(outcomes[0])).report.strict_status) is StrictStatus
    settings = pickle.loads(pickle.dumps(default_settings()))
    assert settings == default_settings() and type(settings.sweep.leaf_policy) is LeafPolicy


def test_a_crash_report_names_the_session_and_nothing_else() -> None:
    outcome = crashed("project/s.jsonl", "Traceback: secret path /home/x", per_code=3)
    data = report_bytes(outcome.report)
    assert outcome.status is SessionStatus.INTERNAL_ERROR and outcome.failed
    assert b"project/s.jsonl" in data and b"Traceback" not in data and b"/home/x" not in data
