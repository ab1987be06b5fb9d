"""Completion markers: JSON naming the source's bytes and a digest of the options' canonical JSON;
a finished session's outcome comes back only while the marker still vouches for it."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

import orjson
import pytest
from structlog.testing import capture_logs

from pipeline.execute.completion_markers import canonical, options_digest, vouched_outcome
from pipeline.execute.seam import RunRequest, log_result, plan_run
from pipeline.execute.session_tasks import BoundJob, SessionTask, run_batch
from pipeline.jobs.validate import validate_session
from pipeline.read.discover import discover
from pipeline.report.completion import marker_label
from pipeline.report.documents import Outcome
from pipeline.report.render import report_bytes
from pipeline.testing.sessions import build_session
from pipeline.testing.settings import validate_options
from pipeline.vocabulary import SessionStatus


@pytest.fixture
def task(tmp_path: Path) -> SessionTask:
    build_session(tmp_path / "root" / "a.jsonl", turns=3)
    work = BoundJob(validate_session, validate_options())
    request = RunRequest(
        command="validate",
        sessions=discover([tmp_path / "root"]),
        work_for=lambda session: work,
        destination=str(tmp_path / "reports"),
        per_code=5,
        resume=True,
    )
    (only,) = plan_run(request, request.work_for).tasks.values()
    return only


def _vouched(task: SessionTask, digest: str | None = None) -> Outcome | str:
    return vouched_outcome(
        Path(task.marker).read_bytes(),
        command=task.command,
        session=task.report_label,
        label=task.label,
        digest=digest or task.digest or "",
        source=Path(task.path),
        read_report=lambda: Path(task.report).read_bytes(),
    )


def test_a_marker_gives_back_the_very_outcome(task: SessionTask) -> None:
    ((result),) = run_batch((task,), 5, 1)
    marker = orjson.loads(Path(task.marker).read_bytes())
    assert marker["source"]["sha256"] == result.outcome.report.session.sha256
    assert marker["options_digest"] == task.digest and marker["outcome"] == "Validated"
    back = _vouched(task)
    assert back == result.outcome
    assert isinstance(back, Outcome) and report_bytes(back.report) == Path(task.report).read_bytes()
    ((again),) = run_batch((task,), 5, 1)
    assert again.resumed and again.outcome == result.outcome


def test_other_bytes_options_or_report_run_again_saying_why(task: SessionTask) -> None:
    run_batch((task,), 5, 1)
    assert "options" in str(_vouched(task, digest="0" * 64))
    report = Path(task.report)
    report.write_bytes(report.read_bytes().replace(b'"valid"', b'"VALID"'))
    assert "report" in str(_vouched(task))  # not the report the marker names
    (rerun,) = run_batch((task,), 5, 1)  # the batch runs the session again, and says why
    assert not rerun.resumed and "report" in str(rerun.marker_ignored)
    build_session(Path(task.path), turns=4, seed=9)
    assert "bytes" in str(_vouched(task))
    Path(task.marker).write_bytes(b'{"schema": 1}')
    assert "unreadable" in str(_vouched(task))  # does not parse as a marker
    with capture_logs() as notes:
        (noted,) = run_batch((task,), 5, 1)
        log_result(noted)  # the executor's process logs the note
    assert [(note["event"], note["session"]) for note in notes] == [
        ("completion_marker_ignored", task.report_label)
    ]


def test_a_crash_leaves_no_marker(task: SessionTask) -> None:
    def boom(path: Path, label: str, options: object) -> Outcome:
        raise RuntimeError("a bug")

    ((result),) = run_batch((replace(task, work=BoundJob(boom, None)),), 5, 1)
    assert result.outcome.failed
    assert Path(task.report).exists() and not Path(task.marker).exists()


def test_markers_live_apart_from_reports() -> None:
    assert marker_label("root/p/s.jsonl") == ".resume/root/p/s.jsonl.done.json"


@dataclass(frozen=True)
class _Options:
    limit: int
    names: tuple[str, ...]
    where: Path
    handle: object = field(default=None, compare=False)  # a live object outside the options' identity


def test_the_digest_is_of_the_options_canonical_json() -> None:
    options = _Options(3, ("a", "b"), Path("/x"), handle=object())
    assert canonical(options) == {"__type__": "_Options", "limit": 3, "names": ["a", "b"], "where": "/x"}
    digest = options_digest("validate", options)
    assert digest is not None and digest == options_digest("validate", replace(options, handle=object()))
    assert digest != options_digest("validate", replace(options, limit=4))
    assert digest != options_digest("tokens", options)
    assert options_digest("validate", _Options(3, (), Path("/x"), handle=None)) is not None
    assert options_digest("validate", {"live": object()}) is None  # no canonical JSON: no marker


def test_how_a_run_goes_is_not_in_the_digest() -> None:
    options = validate_options()
    run_only = replace(options, sweep=replace(options.sweep, jobs=7, report_dir="/elsewhere", resume=False))
    assert options_digest("validate", run_only) == options_digest("validate", options)
    assert options_digest("validate", validate_options(max_file_history_snapshots=3)) != options_digest(
        "validate", options
    )


def test_a_label_json_cannot_hold_gets_its_report_and_no_marker(tmp_path: Path) -> None:
    root = tmp_path / "root"
    odd = root / os.fsdecode(b"s\xff.jsonl")  # a byte no encoding decodes: a lone surrogate in the label
    build_session(odd, turns=2)
    work = BoundJob(validate_session, validate_options())
    request = RunRequest(
        command="validate",
        sessions=discover([root]),
        work_for=lambda session: work,
        destination=str(tmp_path / "reports"),
        per_code=5,
        resume=True,
    )
    (task,) = plan_run(request, request.work_for).tasks.values()
    (result,) = run_batch((task,), 5, 1)
    assert result.outcome.status is not SessionStatus.INTERNAL_ERROR and Path(task.report).exists()
    assert not Path(task.marker).exists()  # it only runs again next time
