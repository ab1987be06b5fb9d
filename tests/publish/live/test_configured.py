"""The in-place knobs: typed settings sections made into frozen options, bad values refused at load."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.errors import ConfigError
from pipeline.live_vocabulary import (
    BackupCompression,
    BackupPlacement,
    PublishStrategy,
    RepairScope,
    RetentionKind,
    StateSync,
)
from pipeline.publish.live.backups import zstd_installed
from pipeline.publish.live.configured import in_place_options, repair_options, state_options
from pipeline.publish.live.session_pass import InPlaceOptions
from pipeline.publish.live.state_db import RecordedResult
from pipeline.settings import parse_duration
from pipeline.settings.typed_sections import Retention, parse_retention
from pipeline.testing.settings import default_settings


def parse(**in_place: object) -> InPlaceOptions:
    settings = default_settings(**in_place)
    return in_place_options(
        settings.in_place,
        settings.state,
        work_dir=Path("/w"),
        config_digest="d",
        require_resume_proof=True,
        result=RecordedResult.COMPACTED,
    )


def test_the_defaults_parse_into_the_documented_behaviour() -> None:
    settings = default_settings()
    options = parse()
    assert options.activity.idle_for_seconds == parse_duration(settings.in_place.idle_for)
    # Backups go to the archive under the state directory, compressed: outside the agents' folders.
    assert options.replace.backup.placement is BackupPlacement.ARCHIVE
    assert options.replace.backup.directory == Path(settings.state.dir).expanduser().resolve() / "archive"
    expected = BackupCompression.ZSTD if zstd_installed() else BackupCompression.GZIP
    assert options.replace.backup.compression is expected
    assert settings.in_place.retention == Retention(RetentionKind.ALL)
    assert options.replace.strategy is PublishStrategy.AUTO
    assert state_options(settings.state).synchronous is StateSync.NORMAL
    assert repair_options(settings.read_pages, settings.sweep).scope is RepairScope.ACTIVE_CHAIN


def test_zstd_backups_use_the_zstd_level() -> None:
    options = parse(backup_compression="zstd", zstd_level=7)
    assert options.replace.backup.compression is BackupCompression.ZSTD
    assert options.replace.backup.level == 7


@pytest.mark.parametrize(
    ("knob", "value", "message"),
    [
        ("backup_compression", "xz", "backup_compression"),
        ("publish_strategy", "rename", "publish_strategy"),
        ("idle_for", "soon", "in_place.idle_for must be a duration"),
        ("idle_for", "-2h", "in_place.idle_for must be a duration"),
        ("gzip_level", 10, "in_place.gzip_level must be between 1 and 9"),
        ("zstd_level", 0, "in_place.zstd_level must be between 1 and 22"),
        ("busy_timeout_seconds", 0.0, "state.busy_timeout_seconds must be more than 0"),
        ("synchronous", "sometimes", "synchronous"),
        ("scope", "everything", "scope"),
        ("backup_keep", "forever", "in_place.backup_keep must be all, an age"),
        ("backup_keep", "30", "in_place.backup_keep must be all, an age"),
        ("backup_keep", "last:-1", "in_place.backup_keep must be all, an age"),
        ("backup_keep", "last:x", "in_place.backup_keep must be all, an age"),
    ],
)
def test_bad_values_are_refused_when_the_settings_load(knob: str, value: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        default_settings(**{knob: value})


@pytest.mark.parametrize(
    ("text", "seconds"), [("12h", 43200), ("30m", 1800), ("2d", 172800), ("1w", 604800), ("90", 90), ("0", 0)]
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


def test_a_backup_dir_or_beside_overrides_the_archive(tmp_path: Path) -> None:
    chosen = parse(backup_dir=str(tmp_path / "b")).replace.backup
    assert (chosen.placement, chosen.directory) == (BackupPlacement.DIRECTORY, (tmp_path / "b").resolve())
    beside = parse(backup_dir=str(tmp_path / "b"), backup_beside=True).replace.backup
    assert (beside.placement, beside.directory) == (BackupPlacement.BESIDE, None)
    assert parse(backup_compression="none").replace.backup.compression is BackupCompression.NONE


@pytest.mark.parametrize(
    ("text", "policy"),
    [
        ("all", Retention(RetentionKind.ALL)),
        ("30d", Retention(RetentionKind.AGE, age_seconds=30 * 86400)),
        ("12h", Retention(RetentionKind.AGE, age_seconds=12 * 3600)),
        ("last:3", Retention(RetentionKind.LAST, count=3)),
        (" LAST:0 ", Retention(RetentionKind.LAST, count=0)),
    ],
)
def test_retentions(text: str, policy: Retention) -> None:
    assert parse_retention(text) == policy
