"""Undo: restore gives back every original byte for byte, only over our own output unless forced."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pipeline.jobs.compress.in_place import compress_builder
from pipeline.live_vocabulary import (
    BackupCompression,
    BackupPlacement,
    Disposition,
    OperationState,
    PublishStrategy,
    RestoreRefusal,
    StateSync,
)
from pipeline.proof.claude_code.client import resume
from pipeline.publish.live.backup_restore import (
    RestoreOptions,
    list_backups,
    restorable_since,
    restore_session,
)
from pipeline.publish.live.backups import BackupOptions
from pipeline.publish.live.source import SessionTarget
from pipeline.publish.live.state_db import RecordedResult, StateDb, StateOptions, open_state
from pipeline.publish.live.transaction import ReplaceOptions
from pipeline.testing.settings import default_settings
from pipeline.testing.synth import generate_fleet
from tests.publish.conftest import build_original, drive_in_place
from tests.publish.live.test_session_pass import COMPRESS, options, targets

REPLACE = ReplaceOptions(
    BackupOptions(None, BackupCompression.GZIP, 6, BackupPlacement.BESIDE), PublishStrategy.AUTO, True
)
TIMEOUT = default_settings().verify.resume_timeout_seconds


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def state(tmp_path: Path) -> Iterator[StateDb]:
    with open_state(StateOptions(tmp_path / "state", 5.0, StateSync.NORMAL)) as db:
        yield db


def compact(root: Path, state: StateDb, work: Path) -> list[SessionTarget]:
    chosen = targets(root)
    result = drive_in_place(
        chosen, compress_builder(COMPRESS), options(work), state, clock_ns=time.time_ns, probe=None
    )
    return [o.target for o in result.outcomes if o.disposition is Disposition.COMMITTED]


def test_restoring_everything_since_a_date_gives_back_every_original_byte_for_byte(
    tmp_path: Path, state: StateDb
) -> None:
    generate_fleet(tmp_path / "fleet", target_bytes=900_000, seed=8)
    root = tmp_path / "fleet" / "projects"
    before = {p: sha(p) for p in root.rglob("*.jsonl")}
    started = datetime.now(UTC) - timedelta(seconds=1)
    compacted = compact(root, state, tmp_path / "work")
    assert compacted
    chosen = restorable_since(state, started, [(root, "projects")])
    assert sorted(t.path for t, _ in chosen) == sorted(t.path.resolve() for t in compacted)
    for target, backup in chosen:
        outcome = restore_session(target, state, RestoreOptions(REPLACE, force=False), backup=backup)
        assert outcome.restored, (outcome.refusal, outcome.receipt)
    assert {p: sha(p) for p in root.rglob("*.jsonl")} == before
    listed = list_backups(state, [root])
    assert len([b for b in listed if b.recorded]) == 2 * len(compacted)  # originals, then the compacted files
    assert all(b.stored_bytes > 0 and b.created >= started for b in listed)
    assert state.record(chosen[0][0].path).result is RecordedResult.RESTORED  # type: ignore[union-attr]
    again = drive_in_place(
        targets(root),
        compress_builder(COMPRESS),
        options(tmp_path / "work"),
        state,
        clock_ns=time.time_ns,
        probe=None,
    )
    assert again.compression_work == 0  # a restored session is not compacted again until it changes


def test_restore_refuses_a_file_that_is_not_our_output_unless_forced(tmp_path: Path, state: StateDb) -> None:
    generate_fleet(tmp_path / "fleet", target_bytes=600_000, seed=3)
    root = tmp_path / "fleet" / "projects"
    target = compact(root, state, tmp_path / "work")[0]
    original_backup = state.record(target.path.resolve()).backup_path  # type: ignore[union-attr]
    with target.path.open("ab") as handle:  # the user went on working in the compacted session
        handle.write(b'{"type":"user","note":"new work"}\n')
    worked_on = target.path.read_bytes()
    refused = restore_session(target, state, RestoreOptions(REPLACE, force=False))
    assert refused.refusal is RestoreRefusal.NOT_OUR_OUTPUT and target.path.read_bytes() == worked_on
    forced = restore_session(target, state, RestoreOptions(REPLACE, force=True))
    assert forced.restored and forced.receipt is not None
    assert forced.backup == Path(original_backup or "")
    assert forced.receipt.backup is not None  # the worked-on file was itself backed up first
    from pipeline.publish.live.backups import read_backup

    assert read_backup(forced.receipt.backup.path) == worked_on


@pytest.mark.claude_code
def test_claude_code_resumes_a_restored_file_exactly_as_it_resumed_the_original(
    tmp_path: Path, state: StateDb, claude_code: Path
) -> None:
    root = tmp_path / "projects"
    root.mkdir()
    live = root / "session.jsonl"
    original = build_original(live, turns=6, seed=11)
    kept = tmp_path / "original-copy.jsonl"
    kept.write_bytes(original)
    [target] = compact(root, state, tmp_path / "work")
    assert live.read_bytes() != original
    outcome = restore_session(target, state, RestoreOptions(REPLACE, force=False))
    assert outcome.restored and outcome.receipt is not None
    assert outcome.receipt.operation_state is OperationState.COMMITTED
    assert live.read_bytes() == original and sha(live) == hashlib.sha256(original).hexdigest()
    with ThreadPoolExecutor(2) as pool:
        before, after = pool.map(
            lambda path: resume(path, executable=claude_code, timeout=TIMEOUT), (kept, live)
        )
    assert before.resumed and after.resumed, (before.stderr[-300:], after.stderr[-300:])
    assert after.context.blocks == before.context.blocks
    assert after.context.blocks, "an empty context proves nothing"
