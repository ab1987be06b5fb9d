"""The Dask backend: the same jobs and typed outcomes as the local runner, as tasks on a cluster.

`--cluster local:N` starts a `LocalCluster` of N worker processes (loopback, no dashboard);
`--cluster tcp://host:port` joins a running scheduler. Sessions are grouped into batches (up to
`[cluster] batch_bytes` of sources or `batch_sessions` sessions) so each task carries enough work
to hide its few milliseconds of scheduling. A batch's key is derived from its sessions (report
label, size and version, options digest), so a resubmitted batch runs once. A task whose worker
died is retried (`retries`, Dask's `allowed-failures`); a batch that still fails is split into
one task per session, and a session that keeps killing its worker becomes its own `Failed`
outcome while the run goes on. Only paths, options and outcomes cross the network.

Workers write the reports, as the local runner's do, with the same bytes (an atomic rename
locally, a conditional whole-object put on an object store), so a cluster run and a local run
over the same files leave the same reports; the client gathers the small outcomes. Beside each
report a resume marker (`pipeline.report.resume`) lets a rerun skip a session already done with
the same source and options.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, Final

import structlog

from pipeline.errors import UsageError
from pipeline.execute.dask_tasks import Destination, SessionTask, TaskResult, publish, run_batch
from pipeline.execute.process_pool import RunResult
from pipeline.execute.session_tasks import SessionJob
from pipeline.read.discover import SessionFile
from pipeline.report.documents import Outcome, crashed
from pipeline.report.resume import config_digest, marker_label
from pipeline.settings import ClusterSettings
from pipeline.vocabulary import LogFormat

__all__ = [
    "EXTRA_HINT",
    "ClusterPrepare",
    "ClusterRun",
    "batches",
    "check_address",
    "loopback_cluster",
    "require_cluster_extra",
    "run_on_cluster",
]

log = structlog.get_logger(__name__)

EXTRA_HINT: Final = "--cluster needs the cluster extra: pip install 'session-compaction[cluster]'"
LOCAL_PREFIX: Final = "local:"


ClusterPrepare = Callable[[Any], tuple[SessionJob[Any], Callable[[SessionFile], object]]]
"""Given the connected client, makes what the run's sessions share on the cluster (a model's
limiter actor) and returns the job and the options each session gets instead."""


@dataclass(frozen=True, slots=True)
class ClusterRun:
    """Where the run's tasks go, and the `[cluster]` settings."""

    address: str  # `local:N` or a scheduler address
    settings: ClusterSettings


def check_address(address: str) -> None:
    """`local:N` (N worker processes; `local:` or `local:0`: one per core) or a scheduler URL."""
    count = address.removeprefix(LOCAL_PREFIX)
    if address.startswith(LOCAL_PREFIX) and (count == "" or count.isdigit()):
        return
    if "://" not in address:
        raise UsageError(f"--cluster {address}: expected local:N or a scheduler address (tcp://host:port)")


def require_cluster_extra() -> None:
    """A one-line usage error when Dask or fsspec is not installed."""
    try:
        import distributed  # noqa: F401, PLC0415 - only to see whether the extra is there
        import fsspec  # noqa: F401, PLC0415
    except ImportError as exc:
        raise UsageError(EXTRA_HINT) from exc


@contextmanager
def _client(address: str, settings: ClusterSettings) -> Iterator[Any]:
    import dask  # noqa: PLC0415 - the optional extra, on use only
    from distributed import Client  # noqa: PLC0415

    logging.getLogger("distributed").setLevel(logging.WARNING)  # Dask's info lines are not ours to show
    # A worker that died while running a task counts against it this many times before the task
    # fails as KilledWorker; a saturation of 1 keeps queued tasks on the scheduler, so a worker that
    # dies takes down only the task it was running (for a local cluster: a remote scheduler and its
    # workers keep their own settings, and the client's resubmissions cover a lost worker there).
    local = {
        "distributed.scheduler.allowed-failures": settings.task_retries,
        "distributed.scheduler.worker-saturation": 1.0,
        # Dask's sampling profiler wakes every 10 ms in each worker and takes the GIL from the job:
        # measured here, a third longer sweeps (benchmarks/cluster.py). Off for a local cluster.
        "distributed.worker.profile.enabled": False,
    }
    with dask.config.set(local):
        if not address.startswith(LOCAL_PREFIX):
            try:
                client = Client(address, timeout=settings.connect_timeout_seconds)
            except (OSError, TimeoutError, ValueError) as exc:
                raise UsageError(f"--cluster {address}: no scheduler answered ({exc})") from exc
            with client:
                yield client
            return
        workers = int(address.removeprefix(LOCAL_PREFIX) or "0") or (os.cpu_count() or 1)
        cluster = loopback_cluster(workers)
        with cluster, Client(cluster) as client:
            yield client


def loopback_cluster(workers: int, *, quiet_below: int = logging.WARNING) -> Any:
    """A `LocalCluster` of `workers` processes on loopback, one thread each, without a dashboard."""
    from distributed import LocalCluster  # noqa: PLC0415 - the cluster extra, on use only

    return LocalCluster(
        n_workers=workers,
        threads_per_worker=1,  # a session is CPU-bound Python: one per process, as the local runner
        processes=True,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",  # Dask's metrics server on any free loopback port...
        scheduler_kwargs={"dashboard": False},  # ...and no dashboard
        silence_logs=quiet_below,
    )


def _size(session: SessionFile) -> tuple[int, str]:
    if session.url is not None:
        stamp = session.stamp or ""
        size = stamp.split(":", 1)[0]
        return (int(size) if size.isdigit() else 0), stamp
    try:
        stat = session.path.stat()
    except OSError:  # its job reports it unreadable
        return 0, "unreadable"
    return stat.st_size, f"{stat.st_size}:{stat.st_mtime_ns}"


BATCHES_PER_WORKER: Final = 8  # at least this many batches a worker where the fleet allows: no idle tail


def batches(
    sized: Sequence[tuple[SessionFile, int]], max_bytes: int, max_sessions: int, workers: int = 1
) -> list[list[SessionFile]]:
    """Sessions grouped largest first, so the last tasks are the small ones.

    A batch holds one large session, or small ones up to `max_bytes` and `max_sessions` (fewer
    bytes where that still leaves each worker `BATCHES_PER_WORKER` batches).
    """
    total = sum(size for _, size in sized)
    budget = max(1, min(max_bytes, total // max(1, workers * BATCHES_PER_WORKER)))
    groups: list[list[SessionFile]] = []
    current: list[SessionFile] = []
    held = 0
    for session, size in sorted(sized, key=lambda pair: -pair[1]):
        if current and (held + size > budget or len(current) >= max_sessions):
            groups.append(current)
            current, held = [], 0
        current.append(session)
        held += size
    if current:
        groups.append(current)
    return groups


def _digest_options(options: Any) -> object:
    """Options without the knobs that never change a report (worker count, log format, report dir)."""
    sweep = getattr(options, "sweep", None)
    if sweep is None:
        return options
    return replace(options, sweep=replace(sweep, jobs=0, report_dir="", log_format=LogFormat.JSON))


def _task_key(command: str, session_keys: Sequence[str]) -> str:
    return f"compaction-{command}-" + hashlib.sha256("\n".join(session_keys).encode()).hexdigest()[:32]


@dataclass(slots=True)
class _Plan:
    """Every session as a worker task, its key, and the batches they are submitted in."""

    tasks: dict[str, SessionTask]
    keys: dict[str, str]
    groups: list[list[SessionFile]]


def _plan(
    sessions: Sequence[SessionFile],
    command: str,
    options_for: Callable[[SessionFile], object],
    destination: Destination,
    settings: ClusterSettings,
    workers: int = 1,
) -> _Plan:
    tasks: dict[str, SessionTask] = {}
    keys: dict[str, str] = {}
    sized: list[tuple[SessionFile, int]] = []
    for session in sessions:
        label, options = session.report_label, options_for(session)
        size, stamp = _size(session)
        digest = config_digest(command, _digest_options(options))
        marker = destination.location(marker_label(label)) if settings.resume else None
        report = destination.location(f"{label}.report.json")
        path = str(session.path)
        tasks[label] = SessionTask(label, session.label, path, session.url, options, digest, report, marker)
        keys[label] = hashlib.sha256(f"{label}\0{stamp}\0{digest}".encode()).hexdigest()
        sized.append((session, size))
    return _Plan(tasks, keys, batches(sized, settings.batch_bytes, settings.batch_sessions, workers))


def _results(
    client: Any, job: SessionJob[Any], plan: _Plan, command: str, settings: ClusterSettings, per_code: int
) -> Iterator[TaskResult]:
    """Submit every batch and yield results as they finish; a batch that failed is split, and a
    lone session that failed (its worker died every time) yields its crash outcome."""
    from distributed import as_completed  # noqa: PLC0415 - the optional extra

    groups: dict[str, tuple[list[SessionFile], int]] = {}

    def submit(group: list[SessionFile], attempt: int = 0) -> Any:
        labels = [session.report_label for session in group]
        key = _task_key(command, [plan.keys[label] for label in labels])
        key += f"-again{attempt}" if attempt else ""
        batch = tuple(plan.tasks[label] for label in labels)
        groups[key] = (group, attempt)
        return client.submit(
            run_batch, job, batch, per_code, settings.read_block_bytes, key=key, retries=settings.task_retries
        )

    running = as_completed([submit(group) for group in plan.groups])
    for future in running:
        group, attempt = groups.pop(future.key)
        try:
            results: tuple[TaskResult, ...] = future.result()
        except Exception as exc:  # a lost worker, an error outside the guarded job
            if len(group) > 1:  # find the culprit: every session on its own
                for session in group:
                    running.add(submit([session]))
                continue
            if attempt < settings.task_retries:  # it may have shared a worker with the culprit
                running.add(submit(group, attempt + 1))
                continue
            session = group[0]
            log.error("session_task_failed", session=session.report_label, error=repr(exc))
            crash = crashed(session.label, repr(exc), per_code=per_code)  # no worker wrote its report
            results = (
                TaskResult(
                    session.report_label, publish(plan.tasks[session.report_label], crash, per_code), False
                ),
            )
        finally:
            future.release()
        yield from results


def run_on_cluster(
    sessions: Sequence[SessionFile],
    job: SessionJob[Any],
    options_for: Callable[[SessionFile], object],
    *,
    command: str,
    cluster: ClusterRun,
    destination: str,
    per_code: int,
    on_outcome: Callable[[Outcome], None] = lambda outcome: None,
    prepare: ClusterPrepare | None = None,
) -> RunResult:
    """Run `job` for every session as Dask tasks (with `prepare`, the job and options it makes)."""
    started = time.perf_counter()
    target, settings = Destination(destination), cluster.settings
    outcomes: dict[str, Outcome] = {}
    paths: dict[str, str] = {}
    with _client(cluster.address, settings) as client:
        if prepare is not None:
            job, options_for = prepare(client)
        workers = max(1, sum(client.nthreads().values()))
        plan = _plan(sessions, command, options_for, target, settings, workers)
        for result in _results(client, job, plan, command, settings, per_code):
            label, outcome = result.report_label, result.outcome
            if outcome.error:
                log.error("session_internal_error", session=label, traceback=outcome.error)
            paths[label], outcomes[label] = f"{label}.report.json", outcome
            on_outcome(outcome)
    ordered = {label: outcomes[label] for label in sorted(outcomes)}
    return RunResult(ordered, paths, (time.perf_counter() - started) * 1000)
