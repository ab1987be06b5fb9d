"""The one run-level loop every fleet command shares: run the job over every session, then
write the fleet summary, show it, and exit with a code.

A command (`validate`, `compress`, `tokens`) is described by a `FleetCommand`: its job, the
options each session gets, where reports go, how the outcomes are summed and shown. The loop
itself knows nothing of any one command.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, Protocol, TypeVar

import msgspec

from pipeline.cli.console import progress_bar, say_failures
from pipeline.cli.interrupt import RESUME_AGAIN, RESUME_LISTED, say_stopped, stop_on_signals
from pipeline.execute.seam import Executor, RunRequest, RunResult, SharedServices, WorkFor
from pipeline.execute.session_tasks import Destination, write_at
from pipeline.execute.stop_request import StopRequest
from pipeline.read.discover import SessionFile
from pipeline.report.documents import Outcome
from pipeline.report.fleet import Interrupted
from pipeline.report.render import json_bytes
from pipeline.vocabulary import ExitCode, Severity

__all__ = ["SUMMARY_NAME", "Concluded", "FleetCommand", "FleetRun", "default_report_dir", "run_fleet"]

SUMMARY_NAME = "summary.json"
S = TypeVar("S")


def _nothing(summary: object) -> None:
    return None


def _no_lines(summary: object) -> tuple[str, ...]:
    return ()


@dataclass(frozen=True, slots=True)
class RunEnd:
    """How a fleet run ended: its result, the sessions it was given, and what a stop left."""

    result: RunResult
    sessions: Sequence[SessionFile]
    interrupted: Interrupted | None = None  # a signal stopped the run


@dataclass(frozen=True, slots=True)
class Concluded:
    """What the end of a run leaves to say: whether the summary lists a stop's sessions, and the
    totals lines (`--quiet` ends its failure count with the first)."""

    listed: bool
    headline: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FleetCommand(Generic[S]):
    """What one fleet command gives the run loop (`S`: the type of its fleet summary)."""

    name: str
    work_for: WorkFor  # each session's job, bound to its options
    destination: str  # the report directory: a path, or (with --cluster) an fsspec URL
    per_code: int  # findings of one code listed per report (a crash report too)
    resume: bool  # skip sessions whose completion markers vouch for them
    summarize: Callable[[RunResult, Sequence[SessionFile]], S]  # written as summary.json
    present: Callable[[S, RunResult], None]  # the tables a person sees (not with --quiet)
    finish: Callable[[S], None] = _nothing  # extra outputs (tokens --out)
    headline: Callable[[S], tuple[str, ...]] = _no_lines  # what the run achieved (its totals lines)
    services: SharedServices | None = None  # what the sessions share (a model), opened by the executor
    outputs: str | None = None  # where the candidates the reports name are (compress --out)

    def conclude(self, ended: RunEnd, *, quiet: bool) -> Concluded:
        """Write the fleet summary, the extra outputs, and show the tables; whether the summary
        lists the sessions a stop left (`interrupted`: a summary without the field cannot)."""
        result, interrupted = ended.result, ended.interrupted
        summary = self.summarize(result, ended.sessions)
        listed = interrupted is not None and "interrupted" in getattr(summary, "__struct_fields__", ())
        if listed:
            summary = msgspec.structs.replace(summary, interrupted=interrupted)  # type: ignore[type-var]
        # Replaced whole by every run (renamed into place, not fsynced: any rerun regenerates it).
        write_at(Destination(self.destination).location(SUMMARY_NAME), json_bytes(summary), once=False)
        self.finish(summary)
        if not quiet:
            self.present(summary, result)
        return Concluded(listed, self.headline(summary))


class FleetRun(Protocol):
    """A fleet command whatever its summary's type: what the run loop reads of it."""

    @property
    def name(self) -> str: ...
    @property
    def work_for(self) -> WorkFor: ...
    @property
    def destination(self) -> str: ...
    @property
    def per_code(self) -> int: ...
    @property
    def resume(self) -> bool: ...
    @property
    def services(self) -> SharedServices | None: ...
    @property
    def outputs(self) -> str | None: ...

    def conclude(self, ended: RunEnd, *, quiet: bool) -> Concluded: ...


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


def run_fleet(
    command: FleetRun,
    sessions: Sequence[SessionFile],
    executor: Executor,
    *,
    quiet: bool,
) -> int:
    """Run a command over every session on `executor`; the exit code says whether any failed
    (or, after Ctrl-C or SIGTERM, 128 + the signal's number)."""
    with stop_on_signals() as stop:
        with progress_bar(len(sessions), enabled=not quiet, description=command.name) as advance:
            request = RunRequest(
                command=command.name,
                sessions=sessions,
                work_for=command.work_for,
                destination=command.destination,
                per_code=command.per_code,
                resume=command.resume,
                services=command.services,
                outputs=command.outputs,
                on_outcome=advance,
                stop=stop,
            )
            result = executor.run(request)
        return _finish(command, sessions, result, stop, quiet=quiet)


def _failure_line(label: str, outcome: Outcome) -> str:
    """`label: status (reasons, else its error findings' codes)` for --quiet's failure lines."""
    report = outcome.report
    why = list(getattr(report, "reasons", None) or ())
    if not why:
        why = sorted({f.code.value for f in report.findings.findings if f.severity is Severity.ERROR})
    return f"{label}: {outcome.status.value}" + (f" ({', '.join(why[:4])})" if why else "")


def _say_failures(result: RunResult, achieved: Sequence[str]) -> None:
    """--quiet's lines: one per failed session, and the counts and totals when any failed."""
    failed = {label: o for label, o in result.outcomes.items() if o.failed}
    statuses = Counter(o.status.value for o in result.outcomes.values())
    say_failures([_failure_line(label, o) for label, o in failed.items()], statuses, achieved)


def _finish(
    command: FleetRun, sessions: Sequence[SessionFile], result: RunResult, stop: StopRequest, *, quiet: bool
) -> int:
    """Write the summary (with the sessions a stop left, if one came), show it, give the exit code."""
    left = sorted({session.report_label for session in sessions} - set(result.outcomes))
    interrupted = Interrupted(signal=stop.name, not_done=left) if stop.requested else None
    concluded = command.conclude(RunEnd(result, sessions, interrupted), quiet=quiet)
    listed = concluded.listed
    if quiet:
        _say_failures(result, concluded.headline)
    if stop.requested:
        say_stopped(stop, len(result.outcomes), len(left), RESUME_LISTED if listed else RESUME_AGAIN)
        return stop.exit_code
    return ExitCode.FAILED if result.failed else ExitCode.OK
