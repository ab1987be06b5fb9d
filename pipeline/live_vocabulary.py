"""Closed vocabularies of live replacement: what the in-place commands do and report.

The steps of the transaction, where a replacement ended and why it stopped, what an in-place run
did with a session, what recovery found, why a restore did not start, and the knobs' choices
(backup compression, publish strategy, state sync, repair scope). The transaction in
`publish.live` acts by them and the report sections in `report.live_replacement` spell them, so
they sit below both.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "BackupCompression",
    "BackupCompressionChoice",
    "BackupPlacement",
    "Disposition",
    "OperationState",
    "PublishStrategy",
    "RecoveredState",
    "RepairScope",
    "RestoreRefusal",
    "RetentionKind",
    "StateSync",
    "Step",
    "StopReason",
]


class BackupCompression(StrEnum):
    """How an in-place run stores the backup of an original."""

    NONE = "none"
    GZIP = "gzip"
    ZSTD = "zstd"  # the `zstd` extra

    @property
    def suffix(self) -> str:
        """The file-name ending of this encoding."""
        return {"none": "", "gzip": ".gz", "zstd": ".zst"}[self.value]


class BackupCompressionChoice(StrEnum):
    """The `backup_compression` knob: an encoding, or `auto` (zstd when its extra is installed, else gzip)."""

    AUTO = "auto"
    NONE = "none"
    GZIP = "gzip"
    ZSTD = "zstd"


class BackupPlacement(StrEnum):
    """Where an in-place run puts its backups."""

    ARCHIVE = "archive"  # the archive under the state directory, mirroring the sessions' layout
    DIRECTORY = "directory"  # a directory the user chose, mirroring the sessions' layout
    BESIDE = "beside"  # beside each session file, inside the agent's own folder


class RetentionKind(StrEnum):
    """The forms of the `backup_keep` retention."""

    ALL = "all"  # never remove a backup
    AGE = "age"  # remove backups older than a duration (`30d`)
    LAST = "last"  # keep the N newest backups of each session (`last:3`)


class PublishStrategy(StrEnum):
    """How the staged candidate takes the live name."""

    AUTO = "auto"  # exchange where the platform has it, else link
    EXCHANGE = "exchange"  # one atomic swap of the two names (Linux, macOS)
    LINK = "link"  # move the original aside, then a no-clobber hard link


class StateSync(StrEnum):
    """SQLite's `synchronous` for the state database in WAL mode."""

    NORMAL = "normal"  # a commit survives a killed process
    FULL = "full"  # also power loss, at one fsync per commit


class RepairScope(StrEnum):
    """Which records the `Read.pages` repair looks at."""

    ACTIVE_CHAIN = "active-chain"  # the seed's default
    ALL = "all"


class Step(StrEnum):
    """One named operation of the live-replacement transaction, in the order they run."""

    READ_SOURCE = "read-source"  # read and hash the complete original
    VALIDATE_CANDIDATE = "validate-candidate"  # the caller's structural check of the immutable bytes
    RECHECK_SOURCE = "recheck-source"  # the live file still holds the frozen bytes
    BACKUP_CREATE = "backup-create"  # an exclusive temporary file in the backup directory
    BACKUP_WRITE = "backup-write"
    BACKUP_FSYNC = "backup-fsync"
    BACKUP_VERIFY = "backup-verify"  # re-read (and decompress): the frozen bytes exactly
    BACKUP_CLAIM = "backup-claim"  # link to the first free numbered name, never over one
    BACKUP_DIRECTORY_FSYNC = "backup-directory-fsync"
    STAGE_CREATE = "stage-create"  # a unique file in the session's own directory
    STAGE_WRITE = "stage-write"
    STAGE_ATTRIBUTES = "stage-attributes"  # the original's mode, owner and times
    STAGE_FSYNC = "stage-fsync"
    STAGE_VERIFY = "stage-verify"
    OPEN_CHECK = "open-check"  # no process holds the live file open
    CAPTURE_VERIFY = "capture-verify"  # the live file still equals the frozen source, byte for byte
    CAPTURE_MOVE = "capture-move"  # link strategy only: move the original aside
    PUBLISH = "publish"  # atomic exchange, or a no-clobber link where exchange is missing
    DISPLACED_VERIFY = "displaced-verify"  # what left the path is the original we verified
    DIRECTORY_FSYNC = "directory-fsync"
    PUBLISHED_VERIFY = "published-verify"  # re-read the path: the candidate's bytes and structure
    ROLLBACK = "rollback"  # put the original back after a failure past publication
    CLEANUP = "cleanup"  # remove our stage and displaced copies (never a verified backup)


class OperationState(StrEnum):
    """Where a replacement ended."""

    COMMITTED = "committed"  # the candidate is published and verified
    NOT_COMMITTED = "not-committed"  # stopped before publication: the original never left its path
    ROLLED_BACK = "rolled-back"  # published, failed verification, the original is back
    ROLLBACK_FAILED = "rollback-failed"  # the original could not be put back: the verified backup holds it
    COMMITTED_REPORT_FAILED = "committed-report-failed"  # committed; writing its report failed

    @property
    def committed(self) -> bool:
        """Whether the candidate is what the live path now holds."""
        return self in (OperationState.COMMITTED, OperationState.COMMITTED_REPORT_FAILED)


class StopReason(StrEnum):
    """Why a replacement stopped short of committing."""

    CANDIDATE_INVALID = "candidate-invalid"
    SOURCE_CHANGED = "source-changed"  # the live file's bytes changed since they were frozen
    TARGET_REPLACED = "target-replaced"  # another file now stands at the live path
    BACKUP_FAILED = "backup-failed"
    JOURNAL_FAILED = "journal-failed"
    STAGE_FAILED = "stage-failed"
    OWNERSHIP_NOT_PRESERVED = "ownership-not-preserved"
    OPEN_CHECK_FAILED = "open-check-failed"
    HELD_OPEN = "held-open"  # a process holds the live file open
    PUBLISH_FAILED = "publish-failed"
    PUBLISHED_MISMATCH = "published-mismatch"  # the re-read published bytes or structure are wrong


class Disposition(StrEnum):
    """What an in-place run did with one session."""

    COMMITTED = "committed"  # replaced in place (the receipt may say committed-report-failed)
    UNCHANGED_OUTPUT = "skipped-unchanged-output"  # still the output an earlier run published
    UNCHANGED_DECLINED = "skipped-unchanged-declined"  # unchanged since the job declined it, same config
    RECENTLY_MODIFIED = "skipped-recently-modified"  # written to within the idle period
    HELD_OPEN = "skipped-held-open"  # a process holds the file open
    CHANGED_DURING_RUN = "skipped-changed-during-run"  # the bytes changed while we worked
    DECLINED = "declined"  # the job built no candidate (its status says why)
    UNPROVEN = "refused-unproven"  # the resume gate did not prove the candidate
    UNSAFE_TARGET = "refused-unsafe-target"  # a symlink, outside the root, hard-linked, missing
    NOT_COMMITTED = "not-committed"  # the transaction stopped; the original never moved
    ROLLED_BACK = "rolled-back"  # published, failed verification, the original is back
    ROLLBACK_FAILED = "rollback-failed"  # the original could not be put back: see the backup
    INTERRUPTED = "not-started-interrupted"  # Ctrl-C or SIGTERM came first: untouched, the next run takes it

    @property
    def is_failure(self) -> bool:
        """Whether this makes the command exit non-zero (a declined session: its status decides)."""
        return self in _FAILURES

    @property
    def unchanged(self) -> bool:
        """Skipped at the cost of a stat (and maybe a hash): nothing changed since an earlier run."""
        return self in (Disposition.UNCHANGED_OUTPUT, Disposition.UNCHANGED_DECLINED)


_FAILURES: frozenset[Disposition] = frozenset(
    {
        Disposition.UNPROVEN,
        Disposition.UNSAFE_TARGET,
        Disposition.NOT_COMMITTED,
        Disposition.ROLLED_BACK,
        Disposition.ROLLBACK_FAILED,
    }
)


class RecoveredState(StrEnum):
    """What the interrupted replacement had come to."""

    COMMITTED = "committed"  # the live path holds the candidate
    NOT_COMMITTED = "not-committed"  # the live path holds the original
    CHANGED = "changed"  # the live path holds bytes another process wrote
    MISSING = "missing"  # nothing at the live path and nothing of ours to put back


class RestoreRefusal(StrEnum):
    """Why a restore did not start."""

    NOT_OUR_OUTPUT = "not-our-output"  # the live file is not what we published (use force)
    NO_BACKUP = "no-backup"  # nothing recorded to restore from, and none given
    BACKUP_UNREADABLE = "backup-unreadable"
    BACKUP_MISMATCH = "backup-digest-mismatch"  # the backup no longer decodes to its recorded digest
    UNSAFE_TARGET = "unsafe-target"
    OTHER_SESSION = "backup-of-another-session"  # never put one session's bytes into another, forced or not
    ALREADY_RESTORED = "already-restored"  # the live file is the original already: nothing to do
    BACKUP_PRUNED = "backup-pruned"  # the retention policy removed it (the state says when)
