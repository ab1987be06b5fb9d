"""The typed sections of the commands that change session files: `[in_place]`, `[state]` and
`[read_pages]` (read by `compress --in-place`, `restore`, `backups` and `repair-read-pages`),
and the durations `idle_for` is written in. `pipeline.settings` loads them with the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pipeline.live_vocabulary import BackupCompression, PublishStrategy, RepairScope, StateSync
from pipeline.vocabulary import LeafPolicy

__all__ = ["InPlaceSettings", "ReadPagesSettings", "StateSettings", "is_duration", "parse_duration"]

DURATION_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(text: str) -> float:
    """Seconds in `12h`, `30m`, `2d`, `1w`, `90s` or a bare number of seconds; ValueError otherwise."""
    value = text.strip().lower()
    unit = value[-1:] if value[-1:] in DURATION_UNITS else "s"
    number = value[:-1] if value[-1:] in DURATION_UNITS else value
    try:
        seconds = float(number) * DURATION_UNITS[unit]
    except ValueError as exc:
        raise ValueError(f"not a duration: {text!r} (examples: 12h, 30m, 2d)") from exc
    if not seconds >= 0:  # also refuses nan
        raise ValueError(f"a duration cannot be negative: {text!r}")
    return seconds


def is_duration(value: str) -> bool:
    try:
        parse_duration(value)
    except ValueError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class InPlaceSettings:
    """`[in_place]`: `compress --in-place`, `restore`, `repair-read-pages --in-place`."""

    idle_for: str  # a duration (`parse_duration`), checked when the settings are loaded
    confirm_sessions_closed: bool
    detect_open_files: bool
    backup_dir: str
    backup_compression: BackupCompression
    gzip_level: int
    zstd_level: int
    publish_strategy: PublishStrategy
    keep_times: bool
    work_dir: str

    @property
    def idle_for_seconds(self) -> float:
        """The idle period in seconds."""
        return parse_duration(self.idle_for)


@dataclass(frozen=True, slots=True)
class StateSettings:
    """`[state]`: the database of earlier in-place runs and the run lock."""

    dir: str
    busy_timeout_seconds: float
    synchronous: StateSync


@dataclass(frozen=True, slots=True)
class ReadPagesSettings:
    """`[read_pages]`: the `Read.pages` compatibility repair."""

    scope: RepairScope
    leaf_policy: LeafPolicy
