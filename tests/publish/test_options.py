"""The in-place knobs: parsed once from the settings into frozen options, bad values refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.errors import ConfigError
from pipeline.publish.activity import parse_duration
from pipeline.publish.backups import BackupCompression
from pipeline.publish.inplace import InPlaceOptions
from pipeline.publish.options import in_place_options, repair_options, state_options
from pipeline.publish.outcome import PublishStrategy
from pipeline.publish.state import RecordedResult
from pipeline.settings import load_settings


def parse(**in_place: object) -> InPlaceOptions:
    settings = load_settings(environ={}, flags={"in_place": in_place})
    return in_place_options(
        settings.section("in_place"),
        work_dir=Path("/w"),
        config_digest="d",
        require_resume_proof=True,
        result=RecordedResult.COMPACTED,
    )


def test_the_defaults_parse_into_the_documented_behaviour() -> None:
    settings = load_settings(environ={})
    options = parse()
    assert options.activity.idle_for_seconds == 12 * 3600
    assert options.replace.backup.directory is None
    assert options.replace.backup.compression is BackupCompression.NONE
    assert options.replace.strategy is PublishStrategy.AUTO
    assert state_options(settings.section("state")).synchronous == "normal"
    assert repair_options(settings.section("read_pages")).scope.value == "active-chain"


def test_zstd_backups_use_the_zstd_level() -> None:
    options = parse(backup_compression="zstd", zstd_level=7)
    assert options.replace.backup.compression is BackupCompression.ZSTD
    assert options.replace.backup.level == 7


@pytest.mark.parametrize(
    "bad", [{"backup_compression": "xz"}, {"publish_strategy": "rename"}, {"idle_for": "soon"}]
)
def test_bad_values_are_configuration_errors(bad: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        parse(**bad)


@pytest.mark.parametrize(
    ("text", "seconds"), [("12h", 43200), ("30m", 1800), ("2d", 172800), ("1w", 604800), ("90", 90), ("0", 0)]
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds
