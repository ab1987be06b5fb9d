"""The retention policy: which backups `backup_keep` lets go, which stay and why, and what a prune
records in the state database (so a restore can say when a backup went)."""

from __future__ import annotations

import gzip
import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pipeline.live_vocabulary import BackupCompression, StateSync
from pipeline.publish.live.backups import Backup
from pipeline.publish.live.fingerprint import Fingerprint
from pipeline.publish.live.retention import (
    PruneVerdict,
    finish_pruned,
    plan_prune,
    protected_backups,
    prune_under,
)
from pipeline.publish.live.state_db import (
    BackupRecord,
    RecordedResult,
    SessionRecord,
    StateOptions,
    open_state,
)
from pipeline.settings.typed_sections import parse_retention

NOW = datetime(2026, 12, 7, 3, 0, tzinfo=UTC)


def record(session: str, number: int, days_old: float) -> BackupRecord:
    path = Path(f"/a/{session}.jsonl.backup{number or ''}")
    return BackupRecord(
        path, Path(f"/s/{session}.jsonl"), "0" * 64, 100, 10 + number, "gzip", NOW - timedelta(days=days_old)
    )


# Two sessions: s has three backups (10, 5 and 1 day old), t has one (40 days old).
BACKUPS = (record("s", 0, 10), record("s", 1, 5), record("s", 2, 1), record("t", 0, 40))


def verdicts(
    policy: str, *, only_copies: frozenset[Path] = frozenset(), explicit: bool = False
) -> dict[str, str]:
    plan = plan_prune(
        BACKUPS,
        parse_retention(policy),
        NOW,
        only_copies=only_copies,
        in_flight=frozenset(),
        prune_only_copies=explicit,
    )
    return {entry.backup.path.name: entry.verdict.value for entry in plan.entries}


@pytest.mark.parametrize(
    ("policy", "pruned"),
    [
        ("all", set()),
        ("last:1", {"s.jsonl.backup", "s.jsonl.backup1"}),
        ("last:2", {"s.jsonl.backup"}),
        ("last:0", {"s.jsonl.backup", "s.jsonl.backup1", "s.jsonl.backup2", "t.jsonl.backup"}),
        ("7d", {"s.jsonl.backup", "t.jsonl.backup"}),
        ("60d", set()),
    ],
)
def test_each_policy_prunes_what_it_says(policy: str, pruned: set[str]) -> None:
    found = verdicts(policy)
    assert {name for name, verdict in found.items() if verdict == PruneVerdict.PRUNE} == pruned
    assert set(found.values()) <= {PruneVerdict.PRUNE.value, PruneVerdict.KEEP.value}


def test_the_only_copy_of_a_summarized_history_stays_unless_the_user_says_so() -> None:
    sole = frozenset({Path("/a/t.jsonl.backup")})  # t's live file is a compaction of that backup
    assert verdicts("7d", only_copies=sole)["t.jsonl.backup"] == PruneVerdict.ONLY_COPY
    assert verdicts("last:0", only_copies=sole)["t.jsonl.backup"] == PruneVerdict.ONLY_COPY
    assert verdicts("7d", only_copies=sole, explicit=True)["t.jsonl.backup"] == PruneVerdict.PRUNE


def test_a_backup_an_unfinished_replacement_names_is_never_pruned() -> None:
    plan = plan_prune(
        BACKUPS,
        parse_retention("last:0"),
        NOW,
        only_copies=frozenset(),
        in_flight=frozenset({Path("/a/s.jsonl.backup")}),
        prune_only_copies=True,
    )
    assert [e.verdict for e in plan.entries if e.backup.path.name == "s.jsonl.backup"] == [
        PruneVerdict.IN_FLIGHT
    ]


def _stored(path: Path, data: bytes) -> Backup:
    stored = gzip.compress(data, mtime=0)
    path.write_bytes(stored)
    return Backup(
        path, hashlib.sha256(data).hexdigest(), len(data), len(stored), BackupCompression.GZIP, False
    )


def test_a_prune_is_recorded_before_the_file_goes_and_a_leftover_is_finished(tmp_path: Path) -> None:
    options = StateOptions(tmp_path / "state", 5.0, StateSync.NORMAL)
    session = tmp_path / "p" / "s.jsonl"
    old, new = tmp_path / "s.jsonl.backup.gz", tmp_path / "s.jsonl.backup1.gz"
    with open_state(options) as state:
        state.add_backup(_stored(old, b"first night\n"), session, NOW - timedelta(days=2))
        state.add_backup(_stored(new, b"second night\n"), session, NOW - timedelta(days=1))
        dry, nothing = prune_under(
            state, [tmp_path / "p"], parse_retention("last:1"), NOW, prune_only_copies=False, apply=False
        )
        assert (
            dry.of(PruneVerdict.PRUNE) and not nothing.removed and old.exists()
        )  # a dry run removes nothing
        plan, done = prune_under(
            state, [tmp_path / "p"], parse_retention("last:1"), NOW, prune_only_copies=False, apply=True
        )
        assert [b.path for b in done.removed] == [old] and done.removed_bytes == plan.pruned_bytes
        assert not old.exists() and new.exists()
        assert state.pruned_on(old) == NOW and state.pruned_on(new) is None
        assert [row.path for row in state.backups(session)] == [new]
        # A prune killed after recording but before unlinking leaves the file: the next one removes it.
        _stored(old, b"first night\n")
        assert finish_pruned(state, state.pruned()) == 1 and not old.exists()
        # ... but never a file that no longer holds the pruned bytes.
        old.write_bytes(gzip.compress(b"something else\n", mtime=0))
        assert finish_pruned(state, state.pruned()) == 0 and old.exists()


def _row(session: str, result: RecordedResult, backup: str | None) -> SessionRecord:
    return SessionRecord(
        f"/s/{session}.jsonl",
        result,
        result.value,
        "cfg",
        "a" * 64,
        Fingerprint(1, 1, 1, 1, 1),
        None,
        None,
        backup,
    )


def test_what_may_be_the_only_copy_of_a_summarized_history_follows_the_sessions_record(
    tmp_path: Path,
) -> None:
    """Compacted: the backup its output replaced (not a newer backup of the compacted file). Declined
    since (it changed after its compaction) or unknown: the newest. Restored: none."""
    rows = [record(name, number, days) for name in ("c", "d", "r", "u") for number, days in ((0, 9), (1, 2))]
    with open_state(StateOptions(tmp_path / "state", 5.0, StateSync.NORMAL)) as state:
        state.save(_row("c", RecordedResult.COMPACTED, "/a/c.jsonl.backup"), NOW)
        state.save(_row("d", RecordedResult.DECLINED, None), NOW)
        state.save(_row("r", RecordedResult.RESTORED, "/a/r.jsonl.backup1"), NOW)
        protected = protected_backups(state, rows)
    assert sorted(p.name for p in protected) == ["c.jsonl.backup", "d.jsonl.backup1", "u.jsonl.backup1"]
