"""Numbered backups: exclusive names, every encoding verified over the decoded bytes, the listing."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from pipeline.live_vocabulary import BackupCompression, BackupPlacement, OperationState, PublishStrategy
from pipeline.publish.live.backups import (
    BackupOptions,
    BackupUnreadable,
    backup_name,
    parse_backup_name,
    read_backup,
)
from pipeline.publish.live.source import SessionTarget, freeze_source
from pipeline.publish.live.transaction import ReplaceOptions, replace_session
from tests.publish.conftest import Compacted, validator


def replace_once(
    session_dir: Path, compacted: Compacted, compression: BackupCompression, directory: Path | None = None
) -> Path:
    live = session_dir / "s.jsonl"
    live.write_bytes(compacted.original)
    frozen = freeze_source(SessionTarget(live, session_dir, "root", "s.jsonl"))
    placement = BackupPlacement.BESIDE if directory is None else BackupPlacement.DIRECTORY
    options = ReplaceOptions(BackupOptions(directory, compression, 3, placement), PublishStrategy.AUTO, True)
    receipt = replace_session(frozen, compacted.candidate, validator, options)
    assert receipt.operation_state is OperationState.COMMITTED and receipt.backup is not None
    return receipt.backup.path


@pytest.mark.parametrize("compression", list(BackupCompression))
def test_every_encoding_decodes_to_the_original_and_numbers_are_never_reused(
    compression: BackupCompression, compacted: Compacted, tmp_path: Path
) -> None:
    first = replace_once(tmp_path, compacted, compression)
    (tmp_path / backup_name("s.jsonl", 1, BackupCompression.GZIP)).write_bytes(gzip.compress(b"other"))
    second = replace_once(tmp_path, compacted, compression)
    assert first.name == backup_name("s.jsonl", 0, compression)
    assert second.name == backup_name("s.jsonl", 2, compression)  # 1 is taken by another encoding
    assert read_backup(first) == read_backup(second) == compacted.original
    if compression is not BackupCompression.NONE:
        assert first.stat().st_size < len(compacted.original)


def test_a_backup_dir_mirrors_the_session_layout(compacted: Compacted, tmp_path: Path) -> None:
    sessions, backups = tmp_path / "projects" / "p", tmp_path / "archive"
    sessions.mkdir(parents=True)
    live = sessions / "s.jsonl"
    live.write_bytes(compacted.original)
    frozen = freeze_source(SessionTarget(live, tmp_path / "projects", "projects", "p/s.jsonl"))
    options = ReplaceOptions(
        BackupOptions(backups, BackupCompression.GZIP, 6, BackupPlacement.DIRECTORY),
        PublishStrategy.AUTO,
        True,
    )
    receipt = replace_session(frozen, compacted.candidate, validator, options)
    assert receipt.backup is not None
    assert receipt.backup.path == backups.resolve() / "projects" / "p" / "s.jsonl.backup.gz"
    assert read_backup(receipt.backup.path) == compacted.original
    assert sorted(p.name for p in sessions.iterdir()) == ["s.jsonl"]  # nothing else beside the session


def test_a_corrupt_backup_is_reported_not_decoded_into_garbage(tmp_path: Path) -> None:
    broken = tmp_path / "s.jsonl.backup.gz"
    broken.write_bytes(gzip.compress(b"x" * 1000)[:-20])
    with pytest.raises(BackupUnreadable):
        read_backup(broken)


@pytest.mark.parametrize(
    ("name", "parsed"),
    [
        ("s.jsonl.backup", ("s.jsonl", 0, BackupCompression.NONE)),
        ("s.jsonl.backup12.zst", ("s.jsonl", 12, BackupCompression.ZSTD)),
        ("s.jsonl.backup3.gz", ("s.jsonl", 3, BackupCompression.GZIP)),
        ("s.jsonl.backup0", None),  # the first backup has no number
        ("s.jsonl", None),
        (".s.jsonl.compaction-abc.backup-tmp", None),
    ],
)
def test_backup_names_parse_exactly(name: str, parsed: object) -> None:
    assert parse_backup_name(name) == parsed
