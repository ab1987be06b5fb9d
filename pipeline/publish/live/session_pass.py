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
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pipeline.live_vocabulary import Disposition, OperationState, StopReason
from pipeline.publish.live.activity import (
    ActivityOptions,
    OpenFileProbe,
    SessionActivity,
    assess_activity,
    recently_modified,
)
from pipeline.publish.live.backups import backup_subdirectory
from pipeline.publish.live.decisions import Candidate, Declined, InPlaceOutcome, RunContext, incremental_skip
from pipeline.publish.live.faults import NO_FAULTS, FaultSeam
from pipeline.publish.live.fingerprint import Fingerprint, fingerprint_of
from pipeline.publish.live.receipt import Receipt
from pipeline.publish.live.recovery import Recovered, recover, with_put_back
from pipeline.publish.live.source import (
    FrozenSource,
    SessionTarget,
    SourceRefusal,
    SourceRefused,
    freeze_source,
)
from pipeline.publish.live.state_db import RecordedResult, SessionRecord, StateDb
from pipeline.publish.live.transaction import ReplaceOptions, replace_session
from pipeline.reasons import InPlaceReason
from pipeline.vocabulary import SessionStatus

__all__ = [
    "UNPROVEN_REASON",
    "BuildCandidate",
    "InPlaceOptions",
    "InPlacePass",
    "Pending",
    "Screened",
]

BuildCandidate = Callable[[FrozenSource, Path], Candidate | Declined]
"""Builds a candidate from frozen bytes, working only in the given work directory."""

UNPROVEN_REASON = InPlaceReason.RESUME_PROOF_MISSING.value  # the candidate was not proven by Claude Code
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
    work_dir: Path  # candidates are built here, outside the live tree (the drive's build step gets its own)
    config_digest: str  # engine version and every option that shapes the output
    require_resume_proof: bool  # refuse candidates the resume gate did not prove
    result: RecordedResult  # what a commit is recorded as (compacted or repaired)


def _now() -> datetime:
    return datetime.now(UTC)


class Pending:
    """One session's way through the run, from its cheap checks on."""

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
        built: Candidate | Declined | None = None,
    ) -> InPlaceOutcome:
        """The outcome of this session, remembering whether a hash was needed and what the job said."""
        return InPlaceOutcome(
            self.target,
            disposition,
            status,
            reasons,
            receipt,
            holders,
            self.hashed,
            built=built is not None,
            job=built.job if built is not None else None,
            job_failed=isinstance(built, Declined) and built.failed,
        )

    def digest(self) -> str:
        """SHA-256 of the live file, read in chunks (skips need no parse)."""
        self.hashed = True
        with self.path.open("rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()

    def skip(self, now_ns: int, context: RunContext) -> InPlaceOutcome | None:
        """The cheap checks: a stat, the state row, a hash only when needed, the activity rule."""
        try:
            status = os.lstat(self.key)
        except OSError:
            return self.outcome(Disposition.UNSAFE_TARGET, reasons=(SourceRefusal.MISSING.value,))
        fingerprint = fingerprint_of(status)
        record = self.state.record(self.key)
        options = self.options
        skipped = incremental_skip(record, fingerprint, options.config_digest, self.digest, options.result)
        if skipped is not None:
            if self.hashed and record is not None:  # next time the stat alone will do
                self.state.save(_refreshed(record, fingerprint), _now())
            if skipped is Disposition.UNCHANGED_DECLINED and record is not None and _refusal(record.status):
                # a refusal persists until the session or the configuration changes: said every night
                since = (f"{InPlaceReason.REFUSED_SINCE.value}:{self.state.recorded_at(self.key)[:10]}",)
                return self.outcome(skipped, status=record.status, reasons=since)._replace(job_failed=True)
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
        return record._replace(source=fingerprint)
    return record._replace(output=fingerprint)


def _declined(session: Pending, frozen: FrozenSource, declined: Declined) -> InPlaceOutcome:
    try:
        unchanged = fingerprint_of(os.lstat(session.path)) == frozen.fingerprint
    except OSError:
        unchanged = False
    if not unchanged:
        return session.outcome(Disposition.CHANGED_DURING_RUN, status=declined.status, built=declined)
    if declined.final and not _still_our_output(session, frozen):
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
    return session.outcome(
        Disposition.DECLINED, status=declined.status, reasons=declined.reasons, built=declined
    )


def _still_our_output(session: Pending, frozen: FrozenSource) -> bool:
    """The file is the output another job published: its row (and the backup it names) stays."""
    record = session.state.record(session.path)
    published = (RecordedResult.COMPACTED, RecordedResult.REPAIRED, RecordedResult.RESTORED)
    return record is not None and record.result in published and record.output_sha256 == frozen.sha256


def _replace(
    session: Pending,
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
        disposition, status=candidate.status, receipt=receipt, holders=receipt.holders, built=candidate
    )


def _failed_disposition(receipt: Receipt) -> Disposition:
    if receipt.reason in _CHANGED:
        return Disposition.CHANGED_DURING_RUN
    if receipt.reason is StopReason.HELD_OPEN:
        return Disposition.HELD_OPEN
    return _STATE_DISPOSITION[receipt.operation_state]


def _committed_record(session: Pending, frozen: FrozenSource, receipt: Receipt) -> SessionRecord:
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


@dataclass(frozen=True, slots=True)
class Screened:
    """A session that passed the cheap checks, with its original frozen: a candidate is wanted."""

    session: Pending
    frozen: FrozenSource


def _refusal(status: str) -> bool:
    """Whether a recorded job status is a failure (refused, invalid, unreadable, crashed)."""
    return status in {member.value for member in SessionStatus if member.is_failure}


class InPlacePass:
    """One in-place run, step by step: recover, check and screen each session, settle it with a
    built candidate.

    `begin` and `check` run in the caller's thread; `screen` and `settle` of different sessions
    may run in several threads at once (each session's own files, unique names for everything
    a transaction creates, the state database serializing its own use); the candidates in
    between may be built anywhere (worker processes, from the frozen bytes).
    """

    def __init__(
        self,
        options: InPlaceOptions,
        state: StateDb,
        *,
        clock_ns: Callable[[], int],
        probe: OpenFileProbe | None,
        seam: FaultSeam = NO_FAULTS,
    ) -> None:
        self.options = options
        self.state = state
        self.clock_ns = clock_ns
        self.seam = seam
        # The transaction asks the probe afresh just before it publishes, so a file opened after
        # the run's snapshot was taken is still caught.
        self.context = RunContext(probe, options.activity.detect_open_files)
        self.recovered: tuple[Recovered, ...] = ()
        self._resolved: dict[Path, str] = {}  # root -> its real path and a separator (discovery never
        # descends a symlink, so root + label is resolved)

    def begin(
        self, targets: Iterable[SessionTarget], roots: Sequence[tuple[Path, str]]
    ) -> list[SessionTarget]:
        """Finish what interrupted runs left; the targets plus sessions recovery put back under `roots`."""
        self.recovered = recover(self.state, self.options.config_digest, self.options.result)
        chosen = with_put_back(list(targets), self.recovered, roots)
        self.state.preload()
        return chosen

    def check(self, target: SessionTarget) -> InPlaceOutcome | Pending:
        """The cheap checks: a stat, the state row, a hash when needed, the activity rule.

        An unchanged fleet ends here, session after session, without a thread hop or a read.
        """
        resolved = self._resolved.get(target.root)
        if resolved is None:
            resolved = self._resolved[target.root] = os.path.realpath(target.root).rstrip(os.sep) + os.sep
        key = resolved + target.label  # a label is relative, with forward slashes
        session = Pending(target, key, self.options, self.state)
        skipped = session.skip(self.clock_ns(), self.context)
        return skipped if skipped is not None else session

    def screen(self, session: Pending) -> InPlaceOutcome | Screened:
        """Freeze the original (refusing an unsafe target), and apply the idle rule once more to the
        frozen file's own modification time: it may have been written to since `check`."""
        try:
            frozen = freeze_source(session.target)
        except SourceRefused as exc:
            return session.outcome(Disposition.UNSAFE_TARGET, reasons=(exc.refusal.value,))
        if recently_modified(frozen.status.st_mtime_ns, self.clock_ns(), self.options.activity):
            return session.outcome(Disposition.RECENTLY_MODIFIED)
        return Screened(session, frozen)

    def settle(self, screened: Screened, built: Candidate | Declined) -> InPlaceOutcome:
        """Record a declined session, refuse an unproven candidate, or run the transaction."""
        session, frozen = screened.session, screened.frozen
        if isinstance(built, Declined):
            return _declined(session, frozen, built)
        if self.options.require_resume_proof and not built.proven:
            return session.outcome(
                Disposition.UNPROVEN, status=built.status, reasons=(UNPROVEN_REASON,), built=built
            )
        self.context.sweep(_backup_directory(session.target, self.options))
        return _replace(session, frozen, built, self.context.probe, self.seam)


def _backup_directory(target: SessionTarget, options: InPlaceOptions) -> Path:
    chosen = options.replace.backup.directory
    if chosen is None:
        return target.path.parent
    return chosen / backup_subdirectory(target.root_label, target.label)
