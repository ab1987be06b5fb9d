"""Every step of the live replacement, failed every way it can fail, on real files.

For each publish strategy, each step of `FAULTS_BY_STEP` and each fault it can suffer, one real
transaction runs with that fault injected. Whatever happens, the live path must hold a complete
file: the original or the validated candidate byte for byte (or, when another process changed
the file, that process's bytes, never overwritten); whenever the original left the path, a
numbered backup that decodes to it exists; every numbered backup decodes to the original; data
another process wrote is never lost; and the receipt's state says what is on disk.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pipeline.live_vocabulary import BackupCompression, BackupPlacement, OperationState, PublishStrategy, Step
from pipeline.publish.live.backups import BackupOptions, parse_backup_name, read_backup
from pipeline.publish.live.faults import FAULTS_BY_STEP, Fault, FaultPlan
from pipeline.publish.live.fsops import exchange_supported
from pipeline.publish.live.receipt import Receipt
from pipeline.publish.live.source import SessionTarget, SourceRefused, freeze_source
from pipeline.publish.live.transaction import ReplaceOptions, replace_session
from tests.publish.conftest import Compacted, validator

STRATEGIES = (PublishStrategy.EXCHANGE, PublishStrategy.LINK)
WORLD = (Fault.SOURCE_CHANGED, Fault.TARGET_REPLACED)
# Steps each strategy runs, in order (ROLLBACK runs only after a failed verification).
_COMMON = list(Step)[: list(Step).index(Step.CAPTURE_VERIFY) + 1]
ORDER = {
    PublishStrategy.EXCHANGE: (*_COMMON, Step.PUBLISH, Step.DISPLACED_VERIFY),
    PublishStrategy.LINK: (*_COMMON, Step.CAPTURE_MOVE, Step.DISPLACED_VERIFY, Step.PUBLISH),
}
_AFTER = (Step.DIRECTORY_FSYNC, Step.PUBLISHED_VERIFY, Step.CLEANUP)
# The primary fault that makes the transaction reach ROLLBACK.
TO_ROLLBACK = {Step.PUBLISHED_VERIFY: Fault.CORRUPT_READ}
# Faults the transaction is built to absorb and still commit: best-effort directory fsyncs, an
# operation that took effect before reporting an error, and cleanup of our own temporaries.
COMMITS_ANYWAY = {
    (Step.BACKUP_DIRECTORY_FSYNC, Fault.FAIL),
    (Step.BACKUP_DIRECTORY_FSYNC, Fault.FAIL_AFTER),
    (Step.BACKUP_CLAIM, Fault.FAIL_AFTER),
    (Step.CAPTURE_MOVE, Fault.FAIL_AFTER),
    (Step.PUBLISH, Fault.FAIL_AFTER),
    (Step.DIRECTORY_FSYNC, Fault.FAIL),
    (Step.DIRECTORY_FSYNC, Fault.FAIL_AFTER),
    (Step.CLEANUP, Fault.FAIL),
    (Step.CLEANUP, Fault.FAIL_AFTER),
    (Step.ROLLBACK, Fault.FAIL_AFTER),  # the rollback itself took effect: rolled back
}


def cases() -> list[tuple[PublishStrategy, Step, Fault]]:
    """(strategy, step, fault) for every step a strategy runs and every fault of that step."""
    table = []
    for strategy in STRATEGIES:
        steps = (*ORDER[strategy], *_AFTER, Step.ROLLBACK)
        table += [(strategy, step, fault) for step in steps for fault in FAULTS_BY_STEP[step]]
    return table


def expected_state(strategy: PublishStrategy, step: Step, fault: Fault) -> OperationState:
    """Where a transaction with this one fault must end."""
    if fault in WORLD:
        return _expected_under_change(strategy, step, fault)
    if step is Step.ROLLBACK:
        return OperationState.ROLLED_BACK if fault is Fault.FAIL_AFTER else OperationState.ROLLBACK_FAILED
    if (step, fault) in COMMITS_ANYWAY:
        return OperationState.COMMITTED
    if step is Step.PUBLISHED_VERIFY:
        return OperationState.ROLLED_BACK
    return OperationState.NOT_COMMITTED


def _expected_under_change(strategy: PublishStrategy, step: Step, fault: Fault) -> OperationState:
    """Another writer acts just before `step`: before publication we stop; after it we undo."""
    if step in ORDER[strategy] and ORDER[strategy].index(step) <= ORDER[strategy].index(Step.PUBLISH):
        return OperationState.NOT_COMMITTED
    if step is Step.CLEANUP:
        return OperationState.COMMITTED  # the change came after the commit: it is the other writer's
    if step is Step.ROLLBACK:
        return OperationState.ROLLED_BACK  # the swap back takes whatever is there aside, intact
    if fault is Fault.SOURCE_CHANGED:
        return OperationState.ROLLED_BACK  # the append landed in our candidate, which is kept aside
    return OperationState.ROLLBACK_FAILED  # a new file replaced the candidate: theirs stays


@dataclass
class World:
    """The other writer: it records every version of the live file it produced."""

    versions: list[bytes] = field(default_factory=list)

    def change(self, live: Path, fault: Fault) -> None:
        if fault is Fault.SOURCE_CHANGED:
            with live.open("ab") as handle:
                handle.write(b'{"type":"user","note":"appended by another process"}\n')
        else:
            fresh = live.with_name(f"{live.name}.external")
            fresh.write_bytes(b'{"type":"user","note":"a new file from another process"}\n')
            fresh.replace(live)
        self.versions.append(live.read_bytes())


# A backup beside the session is made durable by the session directory's fsync; only a separate
# backup directory gets its own fsync step.
SEPARATE_BACKUP_DIRECTORY = {Step.BACKUP_DIRECTORY_FSYNC}


def run_case(
    session_dir: Path,
    compacted: Compacted,
    strategy: PublishStrategy,
    faults: dict[Step, Fault],
    world: World,
) -> tuple[Receipt, FaultPlan]:
    live = session_dir / "session.jsonl"
    if not live.exists():
        live.write_bytes(compacted.original)
    plan = FaultPlan(live, faults, change=world.change)
    frozen = freeze_source(SessionTarget(live, session_dir, "root", "session.jsonl"), seam=plan)
    separate = session_dir / "backups" if SEPARATE_BACKUP_DIRECTORY & set(faults) else None
    options = ReplaceOptions(
        BackupOptions(separate, BackupCompression.NONE, 0, BackupPlacement.DIRECTORY),
        strategy,
        keep_times=True,
    )
    receipt = replace_session(
        frozen, compacted.candidate, validator, options, open_check=lambda path, dev, ino: (), seam=plan
    )
    return receipt, plan


def backups_in(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*") if parse_backup_name(p.name) and not p.name.startswith("."))


def check_invariants(
    session_dir: Path, compacted: Compacted, receipt: Receipt, world: World, state: OperationState
) -> None:
    live = (session_dir / "session.jsonl").read_bytes()  # never missing
    allowed = {compacted.original, compacted.candidate, *world.versions}
    assert live in allowed, "the live path holds a torn or foreign file"
    backups = backups_in(session_dir)
    originals = [b for b in backups if hashlib.sha256(read_backup(b)).hexdigest() == receipt.frozen_sha256]
    if live != compacted.original and receipt.operation_state is not OperationState.NOT_COMMITTED:
        assert originals, "the original left the live path without a verified backup"
    kept = {read_backup(path) for path in backups} | {live}
    for version in world.versions:
        if version not in (compacted.original, compacted.candidate):
            assert any(version in blob for blob in kept), "another writer's data was lost"
    for path in backups:
        data = read_backup(path)
        assert data == compacted.original or data in world.versions, f"{path.name} is not a copy of anything"
    assert receipt.operation_state is state, (receipt.reason, receipt.failed_step, receipt.errno_name)
    if state is OperationState.COMMITTED and not world.versions:
        assert live == compacted.candidate and receipt.published_sha256 == receipt.candidate_sha256
    if state in (OperationState.NOT_COMMITTED, OperationState.ROLLED_BACK) and not world.versions:
        assert live == compacted.original
    if state is OperationState.ROLLBACK_FAILED and not world.versions:
        assert live == compacted.candidate
    hidden = sorted(p.name for p in session_dir.rglob(".*"))
    listed = sorted(p.name for p in receipt.leftovers)
    assert set(hidden) <= set(listed), f"temporaries left behind: {hidden}"


@pytest.mark.parametrize(("strategy", "step", "fault"), cases(), ids=str)
def test_a_fault_at_any_step_leaves_the_original_or_the_candidate_and_a_verified_backup(
    strategy: PublishStrategy, step: Step, fault: Fault, compacted: Compacted, tmp_path: Path
) -> None:
    if strategy is PublishStrategy.EXCHANGE and not exchange_supported():
        pytest.skip("no atomic exchange on this platform")
    world = World()
    faults = {step: fault, **(TO_ROLLBACK if step is Step.ROLLBACK else {})}
    try:
        receipt, plan = run_case(tmp_path, compacted, strategy, faults, world)
    except SourceRefused:
        assert step is Step.READ_SOURCE and fault is Fault.FAIL
        assert [p.name for p in tmp_path.iterdir()] == ["session.jsonl"]
        assert (tmp_path / "session.jsonl").read_bytes() == compacted.original
        return
    assert (step, fault) in plan.fired, f"{step} was never reached"
    check_invariants(tmp_path, compacted, receipt, world, expected_state(strategy, step, fault))


def test_the_matrix_covers_every_step_and_fault() -> None:
    covered = {(step, fault) for _, step, fault in cases()}
    assert covered == {(step, fault) for step, faults in FAULTS_BY_STEP.items() for fault in faults}
    assert len(cases()) > 150


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_without_faults_the_candidate_is_published_with_the_originals_attributes(
    strategy: PublishStrategy, compacted: Compacted, tmp_path: Path
) -> None:
    if strategy is PublishStrategy.EXCHANGE and not exchange_supported():
        pytest.skip("no atomic exchange on this platform")
    live = tmp_path / "session.jsonl"
    live.write_bytes(compacted.original)
    live.chmod(0o640)
    before = live.stat()
    receipt, _ = run_case(tmp_path, compacted, strategy, {}, World())
    after = live.stat()
    assert receipt.operation_state is OperationState.COMMITTED and receipt.strategy is strategy
    assert live.read_bytes() == compacted.candidate
    assert (after.st_mode, after.st_uid, after.st_gid) == (before.st_mode, before.st_uid, before.st_gid)
    assert after.st_mtime_ns == before.st_mtime_ns  # session lists keep their order
    assert receipt.published is not None and receipt.published.inode == after.st_ino
    (backup,) = backups_in(tmp_path)
    assert backup.name == "session.jsonl.backup" and read_backup(backup) == compacted.original
    assert receipt.backup is not None and receipt.backup.path == backup
