"""The one executor seam: every way a fleet of sessions runs takes a `RunRequest` and returns a
`RunResult`, and every executor plans the same tasks and batches from it (`plan_run`). The
in-place commands do not run through an executor: their drive is a runner of its own beside it
(`pipeline.execute.in_place_drive`), and each backend offers one (where candidates are built).

An executor differs from another only in where a batch runs (worker processes of this machine,
threads next to shared services, Dask tasks); what a worker does with a batch is
`session_tasks.run_batch` for all of them, so reports and completion markers are the same
bytes whichever ran them. Shared services (a model's client and limiter) are opened by the
executor that runs the sessions, each the way its backend needs (`SharedServices`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol

import structlog

from pipeline.execute.completion_markers import note_ignored, options_digest
from pipeline.execute.session_tasks import Destination, SessionTask, SessionWork, TaskResult
from pipeline.execute.stop_request import StopRequest
from pipeline.read.discover import SessionFile
from pipeline.report.completion import marker_label
from pipeline.report.documents import Outcome

if TYPE_CHECKING:
    from distributed import Client

__all__ = [
    "BATCHES_PER_WORKER",
    "Executor",
    "RunPlan",
    "RunRequest",
    "RunResult",
    "SharedServices",
    "WorkFor",
    "log_result",
    "plan_batches",
    "plan_run",
    "report_name",
]

log = structlog.get_logger(__name__)

DIGESTS_KEPT: Final = 8  # distinct options values a run remembers the digest of (one per command)
BATCHES_PER_WORKER: Final = 8  # at least this many batches a worker where the fleet allows: no idle tail

WorkFor = Callable[[SessionFile], SessionWork]
"""The job each session gets, bound to its options."""


class SharedServices(Protocol):
    """What a run's sessions share (a model's client and limiter), opened by the executor."""

    def in_process(self) -> AbstractAsyncContextManager[WorkFor]:
        """Open them in this process's event loop; the sessions then run in its threads."""
        ...

    def on_cluster(self, client: Client) -> WorkFor:
        """Make them on a Dask cluster (a limiter actor); the work then names them."""
        ...


@dataclass(frozen=True, slots=True)
class RunRequest:
    """One fleet run, as every executor takes it."""

    command: str
    sessions: Sequence[SessionFile]
    work_for: WorkFor
    destination: str  # the report directory: a path, or an fsspec URL
    per_code: int  # findings of one code listed per report (a crash report too)
    resume: bool  # skip a session whose completion marker vouches for it
    services: SharedServices | None = None
    outputs: str | None = None  # where the candidates reports name are: a marker vouches for them too
    on_outcome: Callable[[Outcome], None] = lambda outcome: None
    stop: StopRequest = field(default_factory=StopRequest)  # set by Ctrl-C or SIGTERM: no new batch


@dataclass(frozen=True, slots=True)
class RunResult:
    """Every outcome (keyed by the session's report label), its report path, and the run time."""

    outcomes: dict[str, Outcome]
    report_paths: dict[str, str]
    elapsed_ms: float

    @property
    def failed(self) -> int:
        """Sessions that make the run exit non-zero."""
        return sum(outcome.failed for outcome in self.outcomes.values())


class Executor(Protocol):
    """Runs a fleet's sessions somewhere and gathers their outcomes."""

    def run(self, request: RunRequest) -> RunResult:
        """Every session's outcome by report label, and where its report went."""
        ...


def log_result(result: TaskResult) -> None:
    """What a session's result says for the run's log (workers leave logging to the executor)."""
    if result.outcome.error:
        log.error("session_internal_error", session=result.report_label, traceback=result.outcome.error)
    if result.marker_ignored is not None:
        note_ignored(result.report_label, result.marker_ignored)


def report_name(report_label: str) -> str:
    """A session's report under the report directory, mirroring the input layout."""
    return f"{report_label}.report.json"


def session_size(session: SessionFile) -> tuple[int, str]:
    """A session's size and a stamp of its version (a URL's from its listing; 0 when unreadable)."""
    if session.url is not None:
        stamp = session.stamp or ""
        size = stamp.split(":", 1)[0]
        return (int(size) if size.isdigit() else 0), stamp
    try:
        stat = session.path.stat()
    except OSError:  # its job reports it unreadable
        return 0, "unreadable"
    return stat.st_size, f"{stat.st_size}:{stat.st_mtime_ns}"


def plan_batches(
    sized: Sequence[tuple[SessionFile, int]], max_bytes: int, max_sessions: int, workers: int = 1
) -> list[tuple[SessionFile, ...]]:
    """Sessions grouped largest first, so the last batches are the small ones.

    A batch holds one large session, or small ones up to `max_bytes` and `max_sessions` (fewer
    bytes where that still leaves each worker `BATCHES_PER_WORKER` batches).
    """
    total = sum(size for _, size in sized)
    budget = max(1, min(max_bytes, total // max(1, workers * BATCHES_PER_WORKER)))
    groups: list[tuple[SessionFile, ...]] = []
    current: list[SessionFile] = []
    held = 0
    for session, size in sorted(sized, key=lambda pair: -pair[1]):
        if current and (held + size > budget or len(current) >= max_sessions):
            groups.append(tuple(current))
            current, held = [], 0
        current.append(session)
        held += size
    if current:
        groups.append(tuple(current))
    return groups


@dataclass(frozen=True, slots=True)
class RunPlan:
    """Every session as a worker task, the key of its version, and its size."""

    tasks: dict[str, SessionTask]
    keys: dict[str, str]  # report label, source version and options digest: a Dask task's identity
    sized: list[tuple[SessionFile, int]]

    def batch(self, sessions: Sequence[SessionFile]) -> tuple[SessionTask, ...]:
        return tuple(self.tasks[session.report_label] for session in sessions)


@dataclass(slots=True)
class _Digests:
    """Options digests of one run: a fleet's sessions mostly share one options value, whose
    canonical JSON costs a tenth of a millisecond, so each value is digested once."""

    command: str
    known: list[tuple[object, str | None]] = field(default_factory=list)

    def of(self, options: object) -> str | None:
        for value, digest in self.known:
            if value is options:
                return digest
        digest = options_digest(self.command, options)
        if len(self.known) < DIGESTS_KEPT:
            self.known.append((options, digest))
        return digest


def plan_run(request: RunRequest, work_for: WorkFor) -> RunPlan:
    """Each session's task: its work, the digest of its options, where its report and marker go."""
    destination = Destination(request.destination)
    tasks: dict[str, SessionTask] = {}
    keys: dict[str, str] = {}
    sized: list[tuple[SessionFile, int]] = []
    digests = _Digests(request.command)
    for session in request.sessions:
        label, work = session.report_label, work_for(session)
        size, stamp = session_size(session)
        digest = digests.of(work.options)
        tasks[label] = SessionTask(
            command=request.command,
            report_label=label,
            label=session.label,
            path=str(session.path),
            url=session.url,
            work=work,
            digest=digest,
            report=destination.location(report_name(label)),
            marker=destination.location(marker_label(label)),
            resume=request.resume,
            outputs=request.outputs,
            unsafe_key=session.unsafe_key,
            member=session.member,
        )
        keys[label] = f"{label}\0{stamp}\0{digest}"
        sized.append((session, size))
    return RunPlan(tasks, keys, sized)


class Labelled(Protocol):
    """A session of any command: a fleet's file, an in-place target."""

    @property
    def report_label(self) -> str: ...


def report_path(report_dir: Path, session: Labelled) -> Path:
    """`<report dir>/<root label>/<label>.report.json` (the in-place commands' reports too)."""
    return report_dir / report_name(session.report_label)
