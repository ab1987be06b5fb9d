"""Recovery after the process died at any step: the live file is whole, our names are gone.

The transaction is stopped dead at each step (an exception no handler of the transaction
catches, as a kill would), and `recover_intent` then runs on the intent it had journaled. The
crash test kills real processes at random points; this one reaches every step on purpose.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from pipeline.live_vocabulary import (
    BackupCompression,
    BackupPlacement,
    PublishStrategy,
    RecoveredState,
    StateSync,
    Step,
)
from pipeline.publish.live.backups import BackupOptions, read_backup
from pipeline.publish.live.faults import Fault
from pipeline.publish.live.fingerprint import Intent
from pipeline.publish.live.fsops import exchange_supported
from pipeline.publish.live.recovery import recover_intent, sweep_backup_temporaries
from pipeline.publish.live.source import SessionTarget, freeze_source
from pipeline.publish.live.transaction import ReplaceOptions, replace_session
from tests.publish.conftest import Compacted, validator
from tests.publish.live.test_transaction_faults import ORDER, SEPARATE_BACKUP_DIRECTORY

AFTER_PUBLICATION = (Step.DIRECTORY_FSYNC, Step.PUBLISHED_VERIFY, Step.CLEANUP)


class Died(BaseException):
    """The process is gone: nothing of the transaction runs after this point."""


class DieAt:
    """A seam that kills the transaction when it reaches one step."""

    def __init__(self, step: Step) -> None:
        self.step = step

    def fault_at(self, step: Step) -> Fault | None:
        if step is self.step:
            raise Died(step.value)
        return None


def cases() -> list[tuple[PublishStrategy, Step]]:
    return [
        (strategy, step)
        for strategy in (PublishStrategy.EXCHANGE, PublishStrategy.LINK)
        for step in (*ORDER[strategy], *AFTER_PUBLICATION)
        if step is not Step.READ_SOURCE
    ]


@pytest.mark.parametrize(("strategy", "step"), cases(), ids=str)
def test_recovery_after_dying_at_any_step_leaves_a_whole_file_and_no_names_of_ours(
    strategy: PublishStrategy, step: Step, compacted: Compacted, tmp_path: Path
) -> None:
    if strategy is PublishStrategy.EXCHANGE and not exchange_supported():
        pytest.skip("no atomic exchange on this platform")
    live = tmp_path / "session.jsonl"
    live.write_bytes(compacted.original)
    journal: list[Intent] = []
    frozen = freeze_source(SessionTarget(live, tmp_path, "root", "session.jsonl"))
    separate = tmp_path / "backups" if step in SEPARATE_BACKUP_DIRECTORY else None
    options = ReplaceOptions(
        BackupOptions(separate, BackupCompression.NONE, 0, BackupPlacement.DIRECTORY),
        strategy,
        keep_times=True,
    )
    with pytest.raises(Died):
        replace_session(
            frozen,
            compacted.candidate,
            validator,
            options,
            journal=journal.append,
            open_check=lambda path, device, inode: (),
            seam=DieAt(step),
        )
    for directory in [tmp_path, *(p for p in tmp_path.rglob("*") if p.is_dir())]:
        sweep_backup_temporaries(directory)
    found = [recover_intent(intent) for intent in journal]
    data = live.read_bytes()
    assert data in (compacted.original, compacted.candidate)
    if found:
        expected = RecoveredState.COMMITTED if data == compacted.candidate else RecoveredState.NOT_COMMITTED
        assert found[0].state is expected and not found[0].preserved
    else:
        assert data == compacted.original  # nothing is touched before the intent is journaled
    leftovers = [p.name for p in tmp_path.rglob(".*")]
    assert not leftovers, leftovers
    backups = [p for p in tmp_path.rglob("*.backup*") if p.is_file()]
    assert all(read_backup(p) == compacted.original for p in backups)
    if data == compacted.candidate:
        assert backups, "the candidate is live without a backup of the original"
        digest = hashlib.sha256(compacted.original).hexdigest()
        assert found[0].intent.frozen_sha256 == digest


def test_a_session_whose_path_a_killed_run_left_empty_is_still_compacted_by_the_next_run(
    tmp_path: Path,
) -> None:
    """The link strategy's empty moment: discovery misses the session, recovery puts it back."""
    import time

    from pipeline.jobs.compress.in_place import compress_builder
    from pipeline.live_vocabulary import Disposition
    from pipeline.publish.live.state_db import StateOptions, open_state
    from tests.publish.conftest import build_original, drive_in_place
    from tests.publish.live.test_session_pass import COMPRESS, options, targets

    root = tmp_path / "projects"
    live = root / "p" / "s.jsonl"
    live.parent.mkdir(parents=True)
    original = build_original(live)
    with open_state(StateOptions(tmp_path / "state", 5.0, StateSync.NORMAL)) as state:
        candidate = compress_builder(COMPRESS)(freeze_source(targets(root)[0]), tmp_path / "work")
        assert not isinstance(candidate, type(None)) and hasattr(candidate, "data")
        frozen = freeze_source(targets(root)[0])
        link = ReplaceOptions(
            BackupOptions(None, BackupCompression.NONE, 0, BackupPlacement.BESIDE), PublishStrategy.LINK, True
        )
        with pytest.raises(Died):  # killed between moving the original aside and linking the candidate
            replace_session(
                frozen, candidate.data, candidate.validate, link,  # type: ignore[union-attr]
                journal=state.begin_intent, seam=DieAt(Step.PUBLISH),
            )  # fmt: skip
        assert not live.exists() and targets(root) == []  # discovery cannot see it now
        result = drive_in_place(
            targets(root), compress_builder(COMPRESS), options(tmp_path / "work"), state,
            clock_ns=time.time_ns, probe=None, roots=[(root, "projects")],
        )  # fmt: skip
    [outcome] = result.outcomes
    assert outcome.disposition is Disposition.COMMITTED, outcome
    assert live.exists() and read_backup(outcome.receipt.backup.path) == original  # type: ignore[union-attr]


@pytest.mark.parametrize("strategy", [PublishStrategy.EXCHANGE, PublishStrategy.LINK], ids=str)
def test_a_backup_a_killed_run_made_but_never_recorded_is_recorded_and_restore_all_since_finds_it(
    strategy: PublishStrategy, compacted: Compacted, tmp_path: Path
) -> None:
    """Killed after publication, before the run recorded its new backup: the next run's recovery
    records it, so `restore --all-since` puts the original back (it lists recorded backups only)."""
    from datetime import UTC, datetime

    from pipeline.publish.live.backup_restore import restorable_since
    from pipeline.publish.live.recovery import recover
    from pipeline.publish.live.state_db import RecordedResult, StateOptions, open_state

    if strategy is PublishStrategy.EXCHANGE and not exchange_supported():
        pytest.skip("no atomic exchange on this platform")
    root = tmp_path / "projects"
    live = root / "session.jsonl"
    live.parent.mkdir()
    live.write_bytes(compacted.original)
    frozen = freeze_source(SessionTarget(live, root, "projects", "session.jsonl"))
    options = ReplaceOptions(
        BackupOptions(tmp_path / "backups", BackupCompression.GZIP, 1, BackupPlacement.DIRECTORY),
        strategy,
        True,
    )
    since = datetime.now(UTC)
    with open_state(StateOptions(tmp_path / "state", 5.0, StateSync.NORMAL)) as state:
        with pytest.raises(Died):
            replace_session(
                frozen, compacted.candidate, validator, options,
                journal=state.begin_intent, open_check=lambda path, device, inode: (), seam=DieAt(Step.CLEANUP),
            )  # fmt: skip
        assert live.read_bytes() == compacted.candidate and state.backups(live) == []
        [found] = recover(state, "digest", RecordedResult.COMPACTED)
        assert found.state is RecoveredState.COMMITTED
        [recorded] = state.backups(live)
        assert recorded.sha256 == hashlib.sha256(compacted.original).hexdigest()
        [(target, backup)] = restorable_since(state, since, [(root, "projects")])
    assert target.path == live and read_backup(backup) == compacted.original
