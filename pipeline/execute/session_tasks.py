"""What a worker runs, whichever executor sent it: a batch of sessions, each guarded, skipped
when its completion marker vouches for it, its report (and then its marker) written by the worker.

Kept apart from the executors so a worker imports the job, the report types and the readers,
never the event loop's machinery, Dask's client or the console. A session behind a URL is
fetched into a local temporary file in blocks (`pipeline.read.remote.fetch`) and the ordinary
job runs on that file; so is one session of a store (a file holding several, `member`), its
transcript taken from the store by its format. The report is rendered once, here (a report that
cannot be rendered is its session's crash), and written the one way: an atomic rename in a
directory, a conditional whole-object put on an object store.
"""

from __future__ import annotations

import tempfile
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from pipeline.execute.completion_markers import marker_bytes, vouched_outcome
from pipeline.formats.registry import stored_session
from pipeline.jobs.front import store_unreadable, unsafe_key
from pipeline.publish.files import PublishConflict, ReportFiles, put_object, read_object, write_report_now
from pipeline.read.remote import fetch, is_url
from pipeline.report.documents import Outcome, crashed
from pipeline.report.render import report_bytes

__all__ = [
    "BoundJob",
    "Destination",
    "SessionJob",
    "SessionTask",
    "SessionWork",
    "TaskResult",
    "publish",
    "run_batch",
]

Options = TypeVar("Options")
Options_contra = TypeVar("Options_contra", contravariant=True)


class SessionJob(Protocol[Options_contra]):
    """One session's work: a module-level function, so worker processes can run it."""

    def __call__(self, path: Path, label: str, options: Options_contra, /) -> Outcome: ...


class SessionWork(Protocol):
    """A job bound to one session's options: what an executor hands a worker."""

    @property
    def options(self) -> object:
        """What the completion marker's digest covers."""
        ...

    def __call__(self, path: Path, label: str, /) -> Outcome: ...


@dataclass(frozen=True, slots=True)
class BoundJob(Generic[Options]):
    """`job` with its typed options (picklable when the job is a module-level function)."""

    job: SessionJob[Options]
    options: Options

    def __call__(self, path: Path, label: str, /) -> Outcome:
        return self.job(path, label, self.options)


@dataclass(frozen=True, slots=True)
class Destination:
    """The report directory: a local one (atomic renames) or an fsspec URL (conditional puts)."""

    root: str

    def location(self, relative: str) -> str:
        """Where a file of the report directory is, as a path or a URL."""
        if is_url(self.root):
            return f"{self.root.rstrip('/')}/{relative}"
        return str(Path(self.root) / relative)


def write_at(location: str, data: bytes, *, once: bool, files: ReportFiles | None = None) -> None:
    """Bytes to a path (whole, not fsynced: any rerun regenerates them; through a batch's `files`
    when it has them) or a URL."""
    if is_url(location):
        put_object(location, data, once=once)
    elif files is not None:
        files.write(Path(location), data)
    else:
        write_report_now(Path(location), data)


def read_at(location: str) -> bytes | None:
    """A path's or an object's bytes, or None when there are none."""
    if is_url(location):
        return read_object(location)
    try:
        return Path(location).read_bytes()
    except OSError:
        return None


@dataclass(frozen=True, slots=True)
class SessionTask:
    """One session as a worker receives it: where to read it, its work, where its files go."""

    command: str
    report_label: str
    label: str
    path: str
    url: str | None
    work: SessionWork
    digest: str | None  # of its options; None: no marker is written or trusted
    report: str  # where its report goes: a path or a URL
    marker: str  # where its completion marker goes
    resume: bool  # whether a marker that vouches for this session skips it
    outputs: str | None = None  # where the candidates its report names are (compress --out)
    unsafe_key: bool = False  # an object key that cannot be mirrored: its finding, never its bytes
    member: str | None = None  # one session of the store at `path`, by its id


@dataclass(frozen=True, slots=True)
class TaskResult:
    """One session's outcome, and whether a completion marker vouched for it (its report was kept)."""

    report_label: str
    outcome: Outcome
    resumed: bool
    marker_ignored: str | None = None  # why a marker found beside the report was not trusted


def publish(
    task: SessionTask, outcome: Outcome, per_code: int, source: Path | None, files: ReportFiles | None = None
) -> Outcome:
    """Write a fresh outcome's report, then its marker; a report another run wrote fails the session."""
    try:
        rendered = report_bytes(outcome.report)
    except Exception:  # a report that cannot be rendered is this session's failure only
        outcome = crashed(task.label, traceback.format_exc(), per_code=per_code)
        rendered = report_bytes(outcome.report)
    try:
        write_at(task.report, rendered, once=True, files=files)
    except PublishConflict as exc:
        return crashed(task.label, str(exc), per_code=per_code)
    if task.digest is not None and source is not None:
        _leave_marker(task, outcome, rendered, source, files)
    return outcome


def _leave_marker(
    task: SessionTask, outcome: Outcome, rendered: bytes, source: Path, files: ReportFiles | None
) -> None:
    """The completion marker beside a written report; one that cannot be made or written (a label
    JSON cannot hold, a full disk) only means the session runs again next time."""
    try:
        marker = marker_bytes(task.command, task.report_label, outcome, rendered, task.digest or "", source)
        if marker is not None:
            write_at(task.marker, marker, once=False, files=files)
    except (OSError, UnicodeError):
        return


def run_guarded(work: SessionWork, path: Path, label: str, per_code: int) -> Outcome:
    """Run one session's job; an unexpected exception becomes this session's `Failed` outcome."""
    try:
        return work(path, label)
    except Exception:
        return crashed(label, traceback.format_exc(), per_code=per_code)


def _vouched(task: SessionTask, source: Path) -> Outcome | str | None:
    """The outcome the session's marker vouches for, why it does not, or None: no marker."""
    if not task.resume or task.digest is None:
        return None
    data = read_at(task.marker)
    if data is None:
        return None
    return vouched_outcome(
        data,
        command=task.command,
        session=task.report_label,
        label=task.label,
        digest=task.digest,
        source=source,
        read_report=lambda: read_at(task.report),
        outputs=Path(task.outputs) if task.outputs is not None else None,
    )


def _run(task: SessionTask, source: Path, per_code: int, files: ReportFiles) -> TaskResult:
    earlier = _vouched(task, source)
    if isinstance(earlier, Outcome):
        return TaskResult(task.report_label, earlier, True)
    outcome = run_guarded(task.work, source, task.label, per_code)
    return TaskResult(task.report_label, publish(task, outcome, per_code, source, files), False, earlier)


def _stored(task: SessionTask, member: str, per_code: int, files: ReportFiles) -> TaskResult:
    """One session of a store, run as the file its format gives it as (or why there is none)."""
    transcript = stored_session(Path(task.path), member)
    if isinstance(transcript, str):
        outcome = store_unreadable(task.label, transcript, command=task.command, per_code=per_code)
        return TaskResult(task.report_label, publish(task, outcome, per_code, None, files), False)
    with tempfile.TemporaryDirectory(prefix="compaction-") as directory:
        local = Path(directory) / Path(task.label).name
        local.write_bytes(transcript)
        return _run(task, local, per_code, files)


def _one(task: SessionTask, per_code: int, block_bytes: int, files: ReportFiles) -> TaskResult:
    if task.unsafe_key:
        outcome = unsafe_key(task.label, command=task.command, per_code=per_code)
        return TaskResult(task.report_label, publish(task, outcome, per_code, None, files), False)
    if task.member is not None:
        return _stored(task, task.member, per_code, files)
    if task.url is None:
        return _run(task, Path(task.path), per_code, files)
    return _fetched(task, task.url, per_code, block_bytes, files)


def _fetched(task: SessionTask, url: str, per_code: int, block_bytes: int, files: ReportFiles) -> TaskResult:
    """A session at a URL, run from a local copy; one that cannot be fetched (gone since it was
    listed, a store that stopped answering) is unreadable, as a local file that cannot be read is."""
    with tempfile.TemporaryDirectory(prefix="compaction-") as directory:
        local = Path(directory) / Path(task.label).name
        try:
            with local.open("wb") as handle:
                fetch(url, handle, block_bytes)
        except Exception as exc:  # every store library raises its own kind: this session's failure only
            reason = f"cannot fetch: {type(exc).__name__}"
            outcome = store_unreadable(task.label, reason, command=task.command, per_code=per_code)
            return TaskResult(task.report_label, publish(task, outcome, per_code, None, files), False)
        return _run(task, local, per_code, files)


def _guarded(task: SessionTask, per_code: int, block_bytes: int, files: ReportFiles) -> TaskResult:
    """One session of a batch: whatever fails around its job (its marker, its store) is its
    failure alone, never its batch's."""
    try:
        return _one(task, per_code, block_bytes, files)
    except Exception:
        outcome = crashed(task.label, traceback.format_exc(), per_code=per_code)
        return TaskResult(task.report_label, publish(task, outcome, per_code, None, files), False)


def run_batch(tasks: tuple[SessionTask, ...], per_code: int, block_bytes: int) -> tuple[TaskResult, ...]:
    """Run every session of a batch in turn, writing each report; one session's exception is that
    session's outcome."""
    files = ReportFiles()  # the batch's directories are made once
    return tuple(_guarded(task, per_code, block_bytes, files) for task in tasks)
