"""Frozen option objects of the in-place machinery, parsed once from `[in_place]`, `[state]`, `[read_pages]`.

The command line passes the two settings sections (after flags were merged into them) and the
few values that are not knobs (the work directory it made, the config digest, whether the user
said `--no-verify-resume`); everything after this point takes explicit frozen values.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pipeline.core.read_pages import RepairScope
from pipeline.core.topology.select import TopologyOptions
from pipeline.errors import ConfigError
from pipeline.publish.activity import ActivityOptions, parse_duration
from pipeline.publish.backups import BackupCompression, BackupOptions, require_compression
from pipeline.publish.inplace import InPlaceOptions
from pipeline.publish.outcome import PublishStrategy
from pipeline.publish.repair import RepairOptions
from pipeline.publish.state import RecordedResult, StateOptions
from pipeline.publish.transaction import ReplaceOptions
from pipeline.vocabulary import LeafPolicy

__all__ = ["backup_options", "in_place_options", "repair_options", "state_options"]


def _choice(kind: type[Any], value: str, knob: str) -> Any:
    try:
        return kind(value)
    except ValueError as exc:
        allowed = ", ".join(member.value for member in kind)
        raise ConfigError(f"{knob} must be one of {allowed}, not {value!r}") from exc


def backup_options(in_place: Mapping[str, Any]) -> BackupOptions:
    """Where backups go and how they are stored; a missing zstd package is reported now."""
    compression = _choice(BackupCompression, in_place["backup_compression"], "in_place.backup_compression")
    require_compression(compression)
    level = in_place["zstd_level"] if compression is BackupCompression.ZSTD else in_place["gzip_level"]
    directory = Path(in_place["backup_dir"]).expanduser().resolve() if in_place["backup_dir"] else None
    return BackupOptions(directory, compression, level)


def in_place_options(
    in_place: Mapping[str, Any],
    *,
    work_dir: Path,
    config_digest: str,
    require_resume_proof: bool,
    result: RecordedResult,
) -> InPlaceOptions:
    """The options of one in-place run."""
    try:
        idle = parse_duration(in_place["idle_for"])
    except ValueError as exc:
        raise ConfigError(f"in_place.idle_for: {exc}") from exc
    strategy = _choice(PublishStrategy, in_place["publish_strategy"], "in_place.publish_strategy")
    return InPlaceOptions(
        activity=ActivityOptions(idle, in_place["confirm_sessions_closed"], in_place["detect_open_files"]),
        replace=ReplaceOptions(backup_options(in_place), strategy, in_place["keep_times"]),
        work_dir=work_dir,
        config_digest=config_digest,
        require_resume_proof=require_resume_proof,
        result=result,
    )


def state_options(state: Mapping[str, Any]) -> StateOptions:
    """Where the state database lives and how it commits."""
    if state["synchronous"] not in ("normal", "full"):
        raise ConfigError(f"state.synchronous must be normal or full, not {state['synchronous']!r}")
    return StateOptions(Path(state["dir"]).expanduser(), state["busy_timeout_seconds"], state["synchronous"])


def repair_options(read_pages: Mapping[str, Any]) -> RepairOptions:
    """The `Read.pages` repair's scope and the leaf policy of its active chain."""
    scope = _choice(RepairScope, read_pages["scope"], "read_pages.scope")
    policy = _choice(LeafPolicy, read_pages["leaf_policy"], "read_pages.leaf_policy")
    return RepairOptions(scope, TopologyOptions(policy))
