"""The local executor on its own: every session gets an outcome and a report, whatever one job does."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import orjson
import pytest

from pipeline.execute.process_pool import ProcessPoolExecutor, resolve_jobs
from pipeline.execute.seam import RunRequest, report_path, session_size
from pipeline.execute.session_tasks import BoundJob
from pipeline.read.discover import discover
from pipeline.report.documents import Failed, Validated
from pipeline.testing.sessions import build_session
from pipeline.testing.settings import validate_options
from pipeline.vocabulary import SessionStatus
from tests.support.jobs import flaky_validate

pytestmark = pytest.mark.anyio


def _fleet(root: Path, names: list[str]) -> None:
    for seed, name in enumerate(names):
        build_session(root / "project" / name, turns=2, seed=seed)


async def _run(root: Path, report_dir: Path, jobs: int) -> tuple[dict[str, object], list[str]]:
    sessions = discover([root])
    seen: list[str] = []
    work = BoundJob(flaky_validate, validate_options())
    request = RunRequest(
        command="validate",
        sessions=sessions,
        work_for=lambda session: work,
        destination=str(report_dir),
        per_code=5,
        resume=False,
        on_outcome=lambda outcome: seen.append(outcome.label),
    )
    result = await ProcessPoolExecutor(jobs).run_async(request)
    assert sorted(seen) == sorted(s.label for s in sessions)  # one callback per session
    for session in sessions:  # every session has its report, where report_path says
        report = orjson.loads(report_path(report_dir, session).read_bytes())
        assert report["session"]["label"] == session.label
        assert result.report_paths[session.report_label] == f"{session.report_label}.report.json"
    assert list(result.outcomes) == sorted(result.outcomes)
    return dict(result.outcomes), seen


async def test_a_crashing_job_fails_its_session_only(tmp_path: Path) -> None:
    _fleet(tmp_path / "root", ["a.jsonl", "raise.jsonl", "b.jsonl"])
    outcomes, _ = await _run(tmp_path / "root", tmp_path / "reports", jobs=2)
    failed = outcomes["root/project/raise.jsonl"]
    assert isinstance(failed, Failed) and failed.status is SessionStatus.INTERNAL_ERROR
    assert "RuntimeError: a bug in a job" in failed.error  # the log gets the traceback
    report = (tmp_path / "reports" / "root" / "project" / "raise.jsonl.report.json").read_bytes()
    assert b"RuntimeError" not in report and b"Traceback" not in report  # the report does not
    assert all(isinstance(outcomes[f"root/project/{n}"], Validated) for n in ("a.jsonl", "b.jsonl"))


async def test_a_job_that_kills_its_worker_fails_its_session_only(tmp_path: Path) -> None:
    _fleet(tmp_path / "root", ["a.jsonl", "kill.jsonl", "b.jsonl", "c.jsonl"])
    outcomes, _ = await _run(tmp_path / "root", tmp_path / "reports", jobs=2)
    killed = outcomes["root/project/kill.jsonl"]
    assert isinstance(killed, Failed) and "BrokenWorkerProcess" in killed.error
    others = [outcomes[f"root/project/{n}"] for n in ("a.jsonl", "b.jsonl", "c.jsonl")]
    assert all(isinstance(o, Validated) for o in others), [o.status for o in others]


async def test_a_session_gone_from_its_store_is_unreadable_and_its_batch_runs_on(tmp_path: Path) -> None:
    """A URL session that vanished between the listing and the fetch fails alone (unreadable, with
    its reason), in the worker, without costing its batch's other sessions their reports."""
    root = tmp_path / "root"
    _fleet(root, ["a.jsonl", "b.jsonl"])
    listed = discover([root])
    gone = dataclasses.replace(
        listed[0], label="project/gone.jsonl", url=(root / "project" / "gone.jsonl").as_uri(), stamp="9:x"
    )
    work = BoundJob(flaky_validate, validate_options())
    request = RunRequest(
        command="validate",
        sessions=[*listed, gone],
        work_for=lambda session: work,
        destination=str(tmp_path / "reports"),
        per_code=5,
        resume=False,
        on_outcome=lambda outcome: None,
    )
    result = await ProcessPoolExecutor(1).run_async(request)
    assert result.outcomes[gone.report_label].status is SessionStatus.UNREADABLE
    report = orjson.loads(report_path(tmp_path / "reports", gone).read_bytes())
    assert report["findings"][0]["ids"] == ["cannot fetch: FileNotFoundError"]
    assert all(isinstance(result.outcomes[s.report_label], Validated) for s in listed)


async def test_no_more_than_jobs_sessions_run_at_once(tmp_path: Path) -> None:
    names = [f"timed-{n}.jsonl" for n in range(6)]
    _fleet(tmp_path / "root", names)
    await _run(tmp_path / "root", tmp_path / "reports", jobs=2)
    spans = [
        tuple(
            float(v) for v in (tmp_path / "root" / "project" / n).with_suffix(".ran").read_text().split()[:2]
        )
        for n in names
    ]
    most = max(sum(1 for s, e in spans if s <= start < e) for start, _ in spans)
    assert 1 <= most <= 2  # never a third session in flight (start-up may keep a worker idle)


def test_zero_jobs_means_one_per_core() -> None:
    assert resolve_jobs(0) == (os.cpu_count() or 1)
    assert resolve_jobs(3) == 3


def test_batches_put_large_sessions_first_and_alone_and_pack_small_ones(tmp_path: Path) -> None:
    from pipeline.execute.process_pool import BATCH_BYTES, BATCH_SESSIONS
    from pipeline.execute.seam import plan_batches

    root = tmp_path / "root"
    root.mkdir()
    sizes = {"big.jsonl": 3_000_000, "mid.jsonl": 400_000, **{f"s{n:02d}.jsonl": 1_000 for n in range(40)}}
    for name, size in sizes.items():
        (root / name).write_bytes(b"x" * size)
    sessions = discover([root])
    sized = [(session, session_size(session)[0]) for session in sessions]
    batches = plan_batches(sized, BATCH_BYTES, BATCH_SESSIONS, workers=2)
    assert sorted(s.label for batch in batches for s in batch) == sorted(s.label for s in sessions)
    assert [s.label for s in batches[0]] == ["big.jsonl"]  # the largest goes first, by itself
    assert all(len(batch) <= BATCH_SESSIONS for batch in batches)
    assert len(batches) < len(sessions)  # small sessions share calls
