"""Frozen option objects of the in-place machinery, made from the typed `[in_place]`, `[state]`
and `[read_pages]` settings sections.

The command line passes the sections (flags already merged into them, every value type- and
range-checked by the settings loader) and the few values that are not knobs (the work
directory it made, the config digest, whether the resume proof is required); everything after
this point takes explicit frozen values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from pipeline.core.topology.select import TopologyOptions
from pipeline.formats.line_guard import LineLimits
from pipeline.live_vocabulary import BackupCompression, BackupPlacement
from pipeline.publish.live.activity import ActivityOptions
from pipeline.publish.live.backups import BackupOptions, chosen_compression, require_compression
from pipeline.publish.live.read_pages_repair import RepairOptions
from pipeline.publish.live.session_pass import InPlaceOptions
from pipeline.publish.live.state_db import RecordedResult, StateOptions
from pipeline.publish.live.transaction import ReplaceOptions
from pipeline.settings import InPlaceSettings, ReadPagesSettings, StateSettings, SweepSettings

__all__ = [
    "ARCHIVE_NAME",
    "archive_directory",
    "backup_options",
    "in_place_options",
    "repair_options",
    "replace_options",
    "state_options",
]

ARCHIVE_NAME: Final = "archive"  # the archive's folder under the state directory


def archive_directory(state: StateSettings) -> Path:
    """The default home of backups: `archive/` under the state directory, outside every agent's folder."""
    return Path(state.dir).expanduser().resolve() / ARCHIVE_NAME


def backup_options(in_place: InPlaceSettings, state: StateSettings) -> BackupOptions:
    """Where backups go and how they are stored; a missing zstd package is reported now."""
    compression = chosen_compression(in_place.backup_compression)
    require_compression(compression)
    level = in_place.zstd_level if compression is BackupCompression.ZSTD else in_place.gzip_level
    if in_place.backup_beside:
        return BackupOptions(None, compression, level, BackupPlacement.BESIDE)
    if in_place.backup_dir:
        directory = Path(in_place.backup_dir).expanduser().resolve()
        return BackupOptions(directory, compression, level, BackupPlacement.DIRECTORY)
    return BackupOptions(archive_directory(state), compression, level, BackupPlacement.ARCHIVE)


def replace_options(in_place: InPlaceSettings, state: StateSettings) -> ReplaceOptions:
    """How one replacement is carried out (in-place runs, restores and repairs alike)."""
    return ReplaceOptions(backup_options(in_place, state), in_place.publish_strategy, in_place.keep_times)


def in_place_options(
    in_place: InPlaceSettings,
    state: StateSettings,
    *,
    work_dir: Path,
    config_digest: str,
    require_resume_proof: bool,
    result: RecordedResult,
) -> InPlaceOptions:
    """The options of one in-place run."""
    return InPlaceOptions(
        activity=ActivityOptions(
            in_place.idle_for_seconds, in_place.confirm_sessions_closed, in_place.detect_open_files
        ),
        replace=replace_options(in_place, state),
        work_dir=work_dir,
        config_digest=config_digest,
        require_resume_proof=require_resume_proof,
        result=result,
    )


def state_options(state: StateSettings) -> StateOptions:
    """Where the state database lives and how it commits."""
    return StateOptions(Path(state.dir).expanduser(), state.busy_timeout_seconds, state.synchronous)


def repair_options(read_pages: ReadPagesSettings, sweep: SweepSettings) -> RepairOptions:
    """The `Read.pages` repair's scope, the leaf policy of its active chain, the line limits."""
    topology = TopologyOptions(read_pages.leaf_policy, None, sweep.max_post_last_prompt_extension)
    return RepairOptions(read_pages.scope, topology, LineLimits.of(sweep))
