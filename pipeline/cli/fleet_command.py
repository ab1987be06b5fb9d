"""The one run-level loop every fleet command shares: run the job over every session, then
write the fleet summary, show it, and exit with a code.

A command (`validate`, `compress`, `tokens`) is described by a `FleetCommand`: its job, the
options each session gets, where reports go, how the outcomes are summed and shown. The loop
itself knows nothing of any one command.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pipeline.cli.console import progress_bar
from pipeline.execute.process_pool import Prepare, RunResult, SessionJob, run_sessions_blocking
from pipeline.publish.files import put_object, write_bytes_atomic
from pipeline.read.discover import SessionFile
from pipeline.report.documents import Outcome
from pipeline.report.render import json_bytes
from pipeline.vocabulary import ExitCode

if TYPE_CHECKING:
    from pipeline.execute.dask_cluster import ClusterPrepare, ClusterRun

__all__ = ["SUMMARY_NAME", "FleetCommand", "default_report_dir", "run_fleet"]

SUMMARY_NAME = "summary.json"
S = TypeVar("S")


def _nothing(summary: object) -> None:
    return None


@dataclass(frozen=True, slots=True)
class FleetCommand(Generic[S]):
    """What one fleet command gives the run loop (`S`: the type of its fleet summary)."""

    name: str
    job: SessionJob[Any]
    options_for: Callable[[SessionFile], object]
    report_dir: Path
    per_code: int  # findings of one code listed per report (a crash report too)
    summarize: Callable[[RunResult, Sequence[SessionFile]], S]  # written as summary.json
    present: Callable[[S, RunResult], None]  # the tables a person sees (not with --quiet)
    finish: Callable[[S], None] = _nothing  # extra outputs (tokens --out)
    prepare: Prepare | None = None  # shared in-process services: sessions then run in threads
    report_url: str | None = None  # reports go to this fsspec URL (with --cluster) instead
    cluster_prepare: ClusterPrepare | None = None  # `prepare` on a cluster: shared services there


def default_report_dir(command: str, base: Path | None = None) -> Path:
    """A fresh `compaction-reports/<command>-<time>` directory under `base` (default: the current one)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    parent = (base or Path.cwd()) / "compaction-reports"
    candidate = parent / f"{command}-{stamp}"
    suffix = 2
    while candidate.exists():
        candidate = parent / f"{command}-{stamp}-{suffix}"
        suffix += 1
    return candidate


def _run(
    command: FleetCommand[Any],
    sessions: Sequence[SessionFile],
    jobs: int,
    cluster: ClusterRun | None,
    advance: Callable[[Outcome], None],
) -> RunResult:
    if cluster is not None:
        from pipeline.execute.dask_cluster import run_on_cluster  # noqa: PLC0415 - Dask only with --cluster

        return run_on_cluster(
            sessions,
            command.job,
            command.options_for,
            command=command.name,
            cluster=cluster,
            destination=command.report_url or str(command.report_dir),
            per_code=command.per_code,
            on_outcome=advance,
            prepare=command.cluster_prepare,
        )
    return run_sessions_blocking(
        sessions,
        command.job,
        command.options_for,
        jobs=jobs,
        report_dir=command.report_dir,
        per_code=command.per_code,
        on_outcome=advance,
        prepare=command.prepare,
    )


def run_fleet(
    command: FleetCommand[Any],
    sessions: Sequence[SessionFile],
    *,
    jobs: int,
    quiet: bool,
    cluster: ClusterRun | None = None,
) -> ExitCode:
    """Run a command over every session (locally, or as Dask tasks with `cluster`); the exit code
    says whether any session failed."""
    with progress_bar(len(sessions), enabled=not quiet, description=command.name) as advance:
        result = _run(command, sessions, jobs, cluster, advance)
    summary = command.summarize(result, sessions)
    if command.report_url is not None:  # the run's summary: replaced whole by every run
        put_object(f"{command.report_url.rstrip('/')}/{SUMMARY_NAME}", json_bytes(summary), once=False)
    else:
        write_bytes_atomic(command.report_dir / SUMMARY_NAME, json_bytes(summary))
    command.finish(summary)
    if not quiet:
        command.present(summary, result)
    return ExitCode.FAILED if result.failed else ExitCode.OK
