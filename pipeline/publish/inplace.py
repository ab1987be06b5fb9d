"""An in-place run over many sessions: recover, skip what is unchanged or in use, build, replace, record.

The caller supplies what builds a candidate (`BuildCandidate`: the compress job, or the
`Read.pages` repair) and the state database; this module decides, per session, at the cost of a
`stat` (and a hash only when the `stat` is not conclusive) whether there is anything to do, and
runs the live-replacement transaction when there is. Interrupted replacements of an earlier run
are finished first (`recovery`). One session's failure never stops the others.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from pipeline.publish.activity import (
    ActivityOptions,
    OpenFileProbe,
    OpenFiles,
    SessionActivity,
    assess_activity,
)
from pipeline.publish.backups import backup_subdirectory
from pipeline.publish.decisions import Candidate, Declined, Disposition, InPlaceOutcome, incremental_skip
from pipeline.publish.faults import NO_FAULTS, FaultSeam
from pipeline.publish.outcome import OperationState, Receipt, StopReason
from pipeline.publish.records import Fingerprint, fingerprint_of
from pipeline.publish.recovery import Recovered, RecoveredState, recover_intent, sweep_backup_temporaries
from pipeline.publish.source import FrozenSource, SessionTarget, SourceRefused, freeze_source
from pipeline.publish.state import RecordedResult, SessionRecord, StateDb
from pipeline.publish.transaction import ReplaceOptions, replace_session

__all__ = ["BuildCandidate", "InPlaceOptions", "InPlaceRun", "ReportWriter", "recover", "run_in_place"]

BuildCandidate = Callable[[FrozenSource, Path], Candidate | Declined]
"""Builds a candidate from frozen bytes, working only in the given work directory."""
ReportWriter = Callable[[InPlaceOutcome], None]
"""Writes one session's report; an OS error after a commit makes it `committed-report-failed`."""

_CHANGED: frozenset[StopReason] = frozenset({StopReason.SOURCE_CHANGED, StopReason.TARGET_REPLACED})
_STATE_DISPOSITION = {
    OperationState.NOT_COMMITTED: Disposition.NOT_COMMITTED,
    OperationState.ROLLED_BACK: Disposition.ROLLED_BACK,
    OperationState.ROLLBACK_FAILED: Disposition.ROLLBACK_FAILED,
}


@dataclass(frozen=True, slots=True)
class InPlaceOptions:
    """Everything an in-place run needs besides the sessions, the builder and the database."""

    activity: ActivityOptions
    replace: ReplaceOptions
    work_dir: Path  # candidates are built here, outside the live tree
    config_digest: str  # engine version and every option that shapes the output
    require_resume_proof: bool  # refuse candidates the resume gate did not prove
    result: RecordedResult  # what a commit is recorded as (compacted or repaired)


@dataclass(frozen=True, slots=True)
class InPlaceRun:
    """What a run did: recovered intents of earlier runs, then one outcome per session."""

    recovered: tuple[Recovered, ...]
    outcomes: tuple[InPlaceOutcome, ...]

    @property
    def compression_work(self) -> int:
        """Sessions for which a candidate was built (zero on an unchanged fleet's second night)."""
        return sum(outcome.built for outcome in self.outcomes)


def _now() -> datetime:
    return datetime.now(UTC)


def recover(state: StateDb, config_digest: str) -> tuple[Recovered, ...]:
    """Finish every intent an interrupted run left, recording committed ones as compacted."""
    done = []
    for intent in state.intents():
        found = recover_intent(intent)
        if found.state is RecoveredState.COMMITTED and found.live is not None:
            record = SessionRecord(
                path=str(intent.session),
                result=RecordedResult.COMPACTED,
                status="recovered",
                config_digest=config_digest,
                source_sha256=intent.frozen_sha256,
                source=found.live,  # the original's own fingerprint was not recorded
                output_sha256=intent.candidate_sha256,
                output=found.live,
                backup_path=str(intent.backup),
            )
            state.save(record, _now())
        else:
            state.clear_intent(intent.session)
        done.append(found)
    return tuple(done)


class _Session:
    """One session's way through the run."""

    def __init__(self, target: SessionTarget, key: str, options: InPlaceOptions, state: StateDb) -> None:
        self.target = target
        self.options = options
        self.state = state
        self.key = key  # resolved directory and own name: the state database's key
        self.hashed = False

    @property
    def path(self) -> Path:
        """The session's resolved path."""
        return Path(self.key)

    def outcome(
        self,
        disposition: Disposition,
        *,
        status: str | None = None,
        reasons: tuple[str, ...] = (),
        receipt: Receipt | None = None,
        holders: tuple[int, ...] = (),
        built: bool = False,
    ) -> InPlaceOutcome:
        """The outcome of this session, remembering whether a hash was needed."""
        return InPlaceOutcome(self.target, disposition, status, reasons, receipt, holders, self.hashed, built)

    def digest(self) -> str:
        """SHA-256 of the live file, read in chunks (skips need no parse)."""
        self.hashed = True
        with self.path.open("rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()

    def skip(self, now_ns: int, context: _RunContext) -> InPlaceOutcome | None:
        """The cheap checks: a stat, the state row, a hash only when needed, the activity rule."""
        try:
            status = os.lstat(self.key)
        except OSError:
            return self.outcome(Disposition.UNSAFE_TARGET, reasons=("missing",))
        fingerprint = fingerprint_of(status)
        record = self.state.record(self.key)
        skipped = incremental_skip(record, fingerprint, self.options.config_digest, self.digest)
        if skipped is not None:
            if self.hashed and record is not None:  # next time the stat alone will do
                self.state.save(_refreshed(record, fingerprint), _now())
            return self.outcome(skipped)
        open_files = context.open_files()
        activity, holders = assess_activity(self.path, fingerprint, now_ns, self.options.activity, open_files)
        if activity is SessionActivity.HELD_OPEN:
            return self.outcome(Disposition.HELD_OPEN, holders=holders)
        if activity is SessionActivity.RECENTLY_MODIFIED:
            return self.outcome(Disposition.RECENTLY_MODIFIED)
        return None


def _refreshed(record: SessionRecord, fingerprint: Fingerprint) -> SessionRecord:
    if record.result is RecordedResult.DECLINED:
        return replace(record, source=fingerprint)
    return replace(record, output=fingerprint)


def _declined(session: _Session, frozen: FrozenSource, declined: Declined) -> InPlaceOutcome:
    try:
        unchanged = fingerprint_of(os.lstat(session.path)) == frozen.fingerprint
    except OSError:
        unchanged = False
    if not unchanged:
        return session.outcome(Disposition.CHANGED_DURING_RUN, status=declined.status, built=True)
    if declined.final:
        record = SessionRecord(
            path=str(session.path),
            result=RecordedResult.DECLINED,
            status=declined.status,
            config_digest=session.options.config_digest,
            source_sha256=frozen.sha256,
            source=frozen.fingerprint,
            output_sha256=None,
            output=None,
            backup_path=None,
        )
        session.state.save(record, _now())
    return session.outcome(Disposition.DECLINED, status=declined.status, reasons=declined.reasons, built=True)


def _replace(
    session: _Session,
    frozen: FrozenSource,
    candidate: Candidate,
    probe: OpenFileProbe | None,
    seam: FaultSeam,
) -> InPlaceOutcome:
    options, state = session.options, session.state
    known = [b.path for b in state.backups(session.path) if b.sha256 == frozen.sha256]
    check = probe.holders if probe is not None and options.activity.detect_open_files else None
    receipt = replace_session(
        frozen,
        candidate.data,
        candidate.validate,
        options.replace,
        known_backups=known,
        journal=state.begin_intent,
        open_check=check,
        seam=seam,
    )
    if receipt.backup is not None and not receipt.backup.reused:
        state.add_backup(receipt.backup, session.path, _now())
    if receipt.committed:
        state.save(_committed_record(session, frozen, receipt), _now())
        disposition = Disposition.COMMITTED
    else:
        if receipt.operation_state is not OperationState.ROLLBACK_FAILED:
            state.clear_intent(session.path)  # the original is in place: nothing left to recover
        disposition = _failed_disposition(receipt)
    return session.outcome(
        disposition, status=candidate.status, receipt=receipt, holders=receipt.holders, built=True
    )


def _failed_disposition(receipt: Receipt) -> Disposition:
    if receipt.reason in _CHANGED:
        return Disposition.CHANGED_DURING_RUN
    if receipt.reason is StopReason.HELD_OPEN:
        return Disposition.HELD_OPEN
    return _STATE_DISPOSITION[receipt.operation_state]


def _committed_record(session: _Session, frozen: FrozenSource, receipt: Receipt) -> SessionRecord:
    """The row of a commit: `output` is None when the file changed after we verified it."""
    return SessionRecord(
        path=str(session.path),
        result=session.options.result,
        status="committed",
        config_digest=session.options.config_digest,
        source_sha256=frozen.sha256,
        source=frozen.fingerprint,
        output_sha256=receipt.published_sha256,
        output=receipt.published,
        backup_path=str(receipt.backup.path) if receipt.backup else None,
    )


@dataclass(slots=True)
class _RunContext:
    """What a run takes once, and only when a session first needs it."""

    probe: OpenFileProbe | None
    detect_open: bool
    snapshot: OpenFiles | None = None
    taken: bool = False
    swept: set[Path] = field(default_factory=set)

    def open_files(self) -> OpenFiles | None:
        """One snapshot of open files screens every session; an unchanged fleet never takes it."""
        if not self.taken and self.probe is not None and self.detect_open:
            self.snapshot = self.probe.snapshot()
        self.taken = True
        return self.snapshot

    def sweep(self, directory: Path) -> None:
        """Remove a killed run's backup temporaries from a directory about to get a backup."""
        if directory not in self.swept:
            sweep_backup_temporaries(directory)
            self.swept.add(directory)


def _process(
    session: _Session,
    build: BuildCandidate,
    now_ns: int,
    context: _RunContext,
    seam: FaultSeam,
) -> InPlaceOutcome:
    skipped = session.skip(now_ns, context)
    if skipped is not None:
        return skipped
    try:
        frozen = freeze_source(session.target)
    except SourceRefused as exc:
        return session.outcome(Disposition.UNSAFE_TARGET, reasons=(exc.refusal.value,))
    built = build(frozen, session.options.work_dir)
    if isinstance(built, Declined):
        return _declined(session, frozen, built)
    if session.options.require_resume_proof and not built.proven:
        return session.outcome(Disposition.UNPROVEN, status=built.status, reasons=("resume-proof-missing",))
    context.sweep(_backup_directory(session.target, session.options))
    return _replace(session, frozen, built, context.probe, seam)


def _reported(outcome: InPlaceOutcome, report: ReportWriter | None) -> InPlaceOutcome:
    if report is None:
        return outcome
    try:
        report(outcome)
    except OSError:
        receipt = outcome.receipt.report_failed() if outcome.receipt is not None else None
        return replace(outcome, receipt=receipt, report_failed=True)
    return outcome


def run_in_place(
    targets: Iterable[SessionTarget],
    build: BuildCandidate,
    options: InPlaceOptions,
    state: StateDb,
    *,
    clock_ns: Callable[[], int],
    probe: OpenFileProbe | None,
    report: ReportWriter | None = None,
    roots: Sequence[tuple[Path, str]] = (),
    seam: FaultSeam = NO_FAULTS,
) -> InPlaceRun:
    """Recover, then take every session through the skip rules and, when needed, the transaction.

    `clock_ns` is the wall clock the idle rule compares modification times with; `probe` finds
    processes holding a file open (None: the platform offers none); `report` writes each
    session's report as soon as its outcome is known (after the commit, never before);
    `roots` are the scanned (root, root label) pairs, so a session recovery puts back after
    discovery missed it is processed too, even in a root where discovery found nothing.
    """
    recovered = recover(state, options.config_digest)
    targets = _with_put_back(list(targets), recovered, roots)
    # The transaction asks the probe afresh just before it publishes, so a file opened after
    # the run's snapshot was taken is still caught.
    context = _RunContext(probe, options.activity.detect_open_files)
    state.preload()
    resolved: dict[Path, str] = {}  # discovery never descends a symlink, so root + label is resolved
    outcomes = []
    for target in targets:
        if target.root not in resolved:
            resolved[target.root] = os.path.realpath(target.root)
        session = _Session(target, os.path.join(resolved[target.root], target.label), options, state)
        outcome = _process(session, build, clock_ns(), context, seam)
        outcomes.append(_reported(outcome, report))
    return InPlaceRun(recovered, tuple(outcomes))


def _with_put_back(
    targets: list[SessionTarget], recovered: tuple[Recovered, ...], scanned: Sequence[tuple[Path, str]]
) -> list[SessionTarget]:
    """The targets, plus sessions recovery put back at their path after discovery missed them.

    The link strategy leaves a session's path empty for a moment; a run killed then leaves it
    empty until the next run's recovery puts the original back, after that run's discovery.
    """
    roots = {root: (os.path.realpath(root), label) for root, label in scanned}
    roots.update({target.root: (os.path.realpath(target.root), target.root_label) for target in targets})
    known = {os.path.join(resolved, t.label) for t in targets for resolved in (roots[t.root][0],)}
    added = []
    for found in recovered:
        session = found.intent.session
        if found.state is RecoveredState.COMMITTED or str(session) in known or found.live is None:
            continue
        for root, (resolved, label) in roots.items():
            if Path(resolved) in session.parents:
                relative = session.relative_to(resolved).as_posix()
                added.append(SessionTarget(session, root, label, relative))
                break
    return [*targets, *added]


def _backup_directory(target: SessionTarget, options: InPlaceOptions) -> Path:
    chosen = options.replace.backup.directory
    if chosen is None:
        return target.path.parent
    return chosen / backup_subdirectory(target.root_label, target.label)
