"""The executor seam: the process pool and Dask take the same batches and leave the same files,
and a local rerun resumes from the completion markers exactly where they still vouch."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest

from pipeline.execute.dask_cluster import ClusterRun, DaskExecutor, loopback_cluster
from pipeline.execute.process_pool import ProcessPoolExecutor
from pipeline.execute.seam import Executor, RunRequest, RunResult
from pipeline.execute.session_tasks import BoundJob
from pipeline.jobs.validate import ValidateOptions, validate_session
from pipeline.read.discover import discover
from pipeline.report.documents import Outcome
from pipeline.report.sections import Timing
from pipeline.settings import load_settings
from pipeline.testing.invoke import compaction
from pipeline.testing.sessions import build_session
from pipeline.testing.settings import validate_options


def timeless_validate(path: Path, label: str, options: ValidateOptions) -> Outcome:
    """`validate_session` with its timing zeroed, so two runs' reports can match byte for byte."""
    outcome = validate_session(path, label, options)
    report = getattr(outcome, "report")  # noqa: B009 - every report this job returns has a timing
    if hasattr(report, "timing_ms"):
        report = msgspec.structs.replace(report, timing_ms=Timing(total=0.0, worker_peak_rss_mb=0.0))
    return type(outcome)(outcome.label, report, outcome.error)


def _fleet(root: Path, count: int) -> None:
    for index in range(count):
        build_session(root / f"project-{index % 3}" / f"s{index}.jsonl", turns=2 + index % 5, seed=index)
    (root / "project-0" / "notes.jsonl").write_bytes(b"not a transcript\n")
    (root / "project-1" / "empty.jsonl").write_bytes(b"")


def _files(directory: Path) -> dict[str, bytes]:
    return {
        path.relative_to(directory).as_posix(): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def _run(executor: Executor, root: Path, destination: Path) -> RunResult:
    work = BoundJob(timeless_validate, validate_options())
    request = RunRequest(
        command="validate",
        sessions=discover([root]),
        work_for=lambda session: work,
        destination=str(destination),
        per_code=5,
        resume=True,
    )
    return executor.run(request)


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    with loopback_cluster(2, quiet_below=logging.ERROR) as local:
        yield local.scheduler_address


def test_dask_and_the_process_pool_write_the_same_reports_and_markers(tmp_path: Path, cluster: str) -> None:
    root = tmp_path / "fleet"
    _fleet(root, 10)
    settings = load_settings(environ={}).cluster
    local = _run(ProcessPoolExecutor(2), root, tmp_path / "local")
    remote = _run(DaskExecutor(ClusterRun(cluster, settings)), root, tmp_path / "dask")
    assert local.outcomes == remote.outcomes and local.report_paths == remote.report_paths
    written = _files(tmp_path / "local")
    markers = [name for name in written if name.startswith(".resume/")]
    assert len(markers) == len(local.outcomes) == 12  # every session, the odd files too
    assert written == _files(tmp_path / "dask")  # every report and every marker, byte for byte
    marker = orjson.loads(written[markers[0]])
    assert marker["schema"] == "compaction.completion/1"
    assert set(marker["source"]) == {"size", "mtime_ns", "sha256"}


def _inodes(directory: Path) -> dict[str, int]:
    return {p.relative_to(directory).as_posix(): p.stat().st_ino for p in directory.rglob("*.report.json")}


def _summary(directory: Path) -> dict[str, Any]:
    summary: dict[str, Any] = orjson.loads((directory / "summary.json").read_bytes())
    summary.pop("elapsed_ms", None)
    return summary


def test_a_local_rerun_skips_matching_markers_and_redoes_changed_bytes_or_options(tmp_path: Path) -> None:
    root, out = tmp_path / "fleet", tmp_path / "reports"
    _fleet(root, 6)
    args = ["validate", str(root), "--report-dir", str(out), "--jobs", "2", "--quiet"]
    first = compaction(*args)
    assert first.returncode in (0, 1), first.stderr
    written, summary = _inodes(out), _summary(out)
    again = compaction(*args, "--resume")
    assert again.returncode == first.returncode, again.stderr
    assert _inodes(out) == written  # nothing ran again: no report was rewritten
    assert _summary(out) == summary  # and the markers' outcomes count as the run's did
    build_session(root / "project-1" / "s1.jsonl", turns=4, seed=77)  # other bytes
    compaction(*args, "--resume")
    now = _inodes(out)
    assert {name for name in now if now[name] != written[name]} == {"fleet/project-1/s1.jsonl.report.json"}
    (out / ".resume" / "fleet" / "project-2" / "s2.jsonl.done.json").write_bytes(b"{not json")
    broken = compaction(*args, "--resume")
    assert "completion_marker_ignored" in broken.stderr  # ignored with a note, never trusted
    assert _inodes(out)["fleet/project-2/s2.jsonl.report.json"] != now["fleet/project-2/s2.jsonl.report.json"]
    before_options = _inodes(out)
    compaction(*args, "--resume", "--max-file-history-snapshots", "3")  # other options: all again
    assert all(before_options[name] != ino for name, ino in _inodes(out).items())
    before_off = _inodes(out)
    compaction(*args, "--no-resume", "--max-file-history-snapshots", "3")
    assert all(before_off[name] != ino for name, ino in _inodes(out).items())


def test_a_compress_rerun_redoes_a_session_whose_candidate_is_gone(tmp_path: Path) -> None:
    root, out = tmp_path / "fleet", tmp_path / "out"
    for index in range(3):
        build_session(root / f"s{index}.jsonl", turns=12, seed=index)
    args = ["compress", str(root), "--out", str(out), "--min-tokens", "0", "--min-recent-records", "4"]
    args += ["--no-verify-resume", "--quiet"]
    assert compaction(*args).returncode in (0, 1)
    candidates = sorted(p for p in out.rglob("*.jsonl"))
    assert candidates, "the small sessions compress"
    reports = _inodes(out)
    candidates[0].unlink()
    compaction(*args, "--resume")
    assert candidates[0].exists()  # its marker no longer vouched: the session ran again
    redone = {name for name, ino in _inodes(out).items() if reports[name] != ino}
    assert len(redone) == 1
    assert os.listdir(out / ".resume")
