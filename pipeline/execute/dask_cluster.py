"""The Dask backend: the same tasks and typed outcomes as the local executor, as tasks on a cluster.

`--cluster local:N` starts a `LocalCluster` of N worker processes (loopback, no dashboard);
`--cluster tcp://host:port` joins a running scheduler. Sessions are grouped into batches (up to
`[cluster] batch_bytes` of sources or `batch_sessions` sessions) so each task carries enough work
to hide its few milliseconds of scheduling. A batch's key is derived from its sessions (report
label, size and version, options digest), so a resubmitted batch runs once. A task whose worker
died is retried (`retries`, Dask's `allowed-failures`); a batch that still fails is split into
one task per session, and a session that keeps killing its worker becomes its own `Failed`
outcome while the run goes on. Only paths, options and outcomes cross the network.

Workers run `session_tasks.run_batch`, as the local executor's do: the same reports and the same
completion markers, written the same way (an atomic rename locally, a conditional whole-object
put on an object store); the client gathers the small outcomes. The in-place commands' runner on a
cluster (`DaskInPlaceRunner`) builds their candidates as Dask tasks the same way.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TypeVar, TypeVarTuple

import anyio
import anyio.to_thread
import structlog

from pipeline.errors import UsageError
from pipeline.execute.in_place_drive import InPlaceRequest, WorkerLost, drive
from pipeline.execute.seam import (
    RunPlan,
    RunRequest,
    RunResult,
    log_result,
    plan_batches,
    plan_run,
    report_name,
)
from pipeline.execute.session_tasks import TaskResult, publish, run_batch
from pipeline.execute.stop_request import StopRequest
from pipeline.publish.live.decisions import InPlaceOutcome
from pipeline.read.discover import SessionFile
from pipeline.report.documents import Outcome, crashed
from pipeline.settings import ClusterSettings

if TYPE_CHECKING:
    from distributed import Client, Future, LocalCluster, as_completed

__all__ = [
    "EXTRA_HINT",
    "ClusterRun",
    "DaskExecutor",
    "DaskInPlaceRunner",
    "check_address",
    "loopback_cluster",
    "require_cluster_extra",
]

log = structlog.get_logger(__name__)

EXTRA_HINT: Final = "--cluster needs the cluster extra: pip install 'session-compaction[cluster]'"
LOCAL_PREFIX: Final = "local:"
_POLL_SECONDS: Final = 0.05  # how soon a stop (Ctrl-C, SIGTERM) is seen while batches run
T = TypeVar("T")
Ts = TypeVarTuple("Ts")


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
def _client(address: str, settings: ClusterSettings) -> Iterator[Client]:
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


def loopback_cluster(workers: int, *, quiet_below: int = logging.WARNING) -> LocalCluster:
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


@dataclass(frozen=True, slots=True)
class _DaskCalls:
    """A build as a Dask task, `limiter` of them at once; a stop cancels it, a lost worker fails it."""

    client: Client
    limiter: anyio.CapacityLimiter

    async def __call__(self, function: Callable[[*Ts], T], /, *args: *Ts) -> T:
        async with self.limiter:
            future = self.client.submit(function, *args, pure=False)
            try:
                result: T = await anyio.to_thread.run_sync(future.result, abandon_on_cancel=True)
            except anyio.get_cancelled_exc_class():
                future.cancel()
                raise
            except Exception as exc:  # a lost worker (KilledWorker), a task that could not run
                raise WorkerLost(repr(exc)) from exc
            finally:
                future.release()
            return result


def _task_key(command: str, session_keys: Sequence[str]) -> str:
    digest = hashlib.sha256("\n".join(session_keys).encode()).hexdigest()[:32]
    return f"compaction-{command}-{digest}"


def _results(
    client: Client, plan: RunPlan, request: RunRequest, settings: ClusterSettings
) -> Iterator[TaskResult]:
    """Submit every batch and yield results as they finish; a batch that failed is split, and a
    lone session that failed (its worker died every time) yields its crash outcome."""
    from distributed import as_completed  # noqa: PLC0415 - the optional extra

    per_code = request.per_code
    groups: dict[str, tuple[tuple[SessionFile, ...], int]] = {}
    submitted: dict[str, Future[tuple[TaskResult, ...]]] = {}
    workers = max(1, sum(client.nthreads().values()))

    def submit(group: tuple[SessionFile, ...], attempt: int = 0) -> Future[tuple[TaskResult, ...]]:
        key = _task_key(request.command, [plan.keys[session.report_label] for session in group])
        key += f"-again{attempt}" if attempt else ""
        groups[key] = (group, attempt)
        batch = plan.batch(group)
        submitted[key] = client.submit(
            run_batch, batch, per_code, settings.read_block_bytes, key=key, retries=settings.task_retries
        )
        return submitted[key]

    planned = plan_batches(plan.sized, settings.batch_bytes, settings.batch_sessions, workers)
    running = as_completed([submit(group) for group in planned])
    for future in _until_stopped(running, request.stop):
        key = str(future.key)  # ours: a string (`submit`)
        submitted.pop(key, None)
        group, attempt = groups.pop(key)
        try:
            results: tuple[TaskResult, ...] = future.result()
        except Exception as exc:  # a lost worker, an error outside the guarded job
            if len(group) > 1:  # find the culprit: every session on its own
                for session in group:
                    running.add(submit((session,)))
                continue
            if attempt < settings.task_retries:  # it may have shared a worker with the culprit
                running.add(submit(group, attempt + 1))
                continue
            session = group[0]
            log.error("session_task_failed", session=session.report_label, error=repr(exc))
            crash = crashed(session.label, repr(exc), per_code=per_code)  # no worker wrote its report
            task = plan.tasks[session.report_label]
            results = (TaskResult(session.report_label, publish(task, crash, per_code, None), False),)
        finally:
            future.release()
        yield from results
    if submitted:  # a stop: what is queued or running is left not done (no new batch starts)
        client.cancel(list(submitted.values()))


def _until_stopped(running: as_completed, stop: StopRequest) -> Iterator[Future[tuple[TaskResult, ...]]]:
    """Batches as they finish; once a stop is requested, only those already finished."""
    while not running.is_empty():
        if running.has_ready():
            yield next(running)
        elif stop.requested:
            return
        else:
            time.sleep(_POLL_SECONDS)


@dataclass(frozen=True, slots=True)
class DaskExecutor:
    """The run's sessions as Dask tasks on a local or remote cluster."""

    cluster: ClusterRun

    def run(self, request: RunRequest) -> RunResult:
        """Run every session as Dask tasks (with shared services, the work they make on the cluster)."""
        started = time.perf_counter()
        settings = self.cluster.settings
        outcomes: dict[str, Outcome] = {}
        paths: dict[str, str] = {}
        with _client(self.cluster.address, settings) as client:
            work_for = request.work_for if request.services is None else request.services.on_cluster(client)
            plan = plan_run(request, work_for)
            for result in _results(client, plan, request, settings):
                label, outcome = result.report_label, result.outcome
                log_result(result)
                paths[label], outcomes[label] = report_name(label), outcome
                request.on_outcome(outcome)
        ordered = {label: outcomes[label] for label in sorted(outcomes)}
        return RunResult(ordered, paths, (time.perf_counter() - started) * 1000)


@dataclass(frozen=True, slots=True)
class DaskInPlaceRunner:
    """The in-place drive with each candidate built as a Dask task (the workers read the frozen
    file, so the cluster shares this machine's files: `local:N`); screening and replacing stay here."""

    cluster: ClusterRun

    def run(self, request: InPlaceRequest) -> list[InPlaceOutcome]:
        """Every session's outcome (see `in_place_drive.drive`), one build per worker thread at once."""
        with _client(self.cluster.address, self.cluster.settings) as client:
            workers = max(1, sum(client.nthreads().values()))
            return anyio.run(drive, request, lambda limiter: _DaskCalls(client, limiter), workers)
