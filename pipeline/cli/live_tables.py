"""What a person sees after the commands that change session files: short tables of what happened.

Labels, statuses, counts, sizes and dates only, never transcript text.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from msgspec import UnsetType
from rich.console import Console
from rich.table import Table

from pipeline.cli.console import model_spend_line
from pipeline.cli.totals_line import totals_lines
from pipeline.publish.live.backup_restore import BackupListing
from pipeline.report.archive_space import ArchiveSpace
from pipeline.report.live_replacement import InPlaceSummary

__all__ = [
    "human_bytes",
    "in_place_lines",
    "present_backups",
    "present_counts",
    "present_in_place",
    "present_space",
    "space_line",
]

IN_PLACE_VERB = "compacted in place"


def _console() -> Console:
    return Console(file=sys.stdout, highlight=False)


def human_bytes(value: float) -> str:
    for limit, suffix in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if value >= limit:
            return f"{value / limit:.1f} {suffix}"
    return f"{value:.0f} B"


def present_counts(title: str, columns: tuple[str, str], counts: Mapping[str, int]) -> None:
    """A two-column table of counts."""
    table = Table(title=title, show_edge=False)
    table.add_column(columns[0])
    table.add_column(columns[1], justify="right")
    for key, count in sorted(counts.items()):
        table.add_row(key, str(count))
    _console().print(table)


def in_place_lines(summary: InPlaceSummary) -> tuple[str, ...]:
    """What an in-place run achieved, in one or two lines (its totals)."""
    totals = summary.totals
    return () if isinstance(totals, UnsetType) else totals_lines(totals, IN_PLACE_VERB)


def present_in_place(summary: InPlaceSummary, report_dir: Path) -> None:
    """What the run did with each session, the job's statuses, and where reports, state and backups are."""
    totals = summary.in_place
    sessions = sum(totals.by_disposition.values())
    present_counts(
        f"{sessions} sessions in {summary.elapsed_ms / 1000:.1f}s, {totals.built} compressed in a worker",
        ("in place", "sessions"),
        totals.by_disposition,
    )
    if summary.by_status:
        present_counts("what the compress job said", ("status", "sessions"), summary.by_status)
    console = _console()
    for line in in_place_lines(summary):
        console.print(line, soft_wrap=True)
    if summary.model_spend:
        console.print(model_spend_line(summary.model_spend))
    console.print(f"reports: {report_dir}")
    console.print(f"state: {totals.state_dir}")
    stored = totals.backup_compression.value
    how = "stored uncompressed" if stored == "none" else f"{stored}-compressed"  # "none" was a riddle
    console.print(f"backups: {totals.backup_dir or 'beside each session'} ({how})")
    present_space(summary.archive)


def space_line(space: ArchiveSpace) -> str:
    """One line: live bytes before and after, what the archive grew by, what the retention removed."""
    live = f"{human_bytes(space.live_bytes_before)} -> {human_bytes(space.live_bytes_after)}"
    added = f"+{human_bytes(space.backup_bytes_added)} ({space.backups_added} backups)"
    pruned = (
        f"{human_bytes(space.backup_bytes_pruned)} ({space.backups_pruned} backups, keep {space.retention})"
    )
    line = f"space: live sessions {live}; {space.placement.value} {added}; pruned {pruned}"
    if space.backups_kept_only_copy:
        line += f"; {space.backups_kept_only_copy} kept as the only copy of a summarized history"
    if space.prune_failures:
        line += f"; {len(space.prune_failures)} could not be removed (the next prune retries)"
    return line


def present_space(space: ArchiveSpace) -> None:
    """The run's space line (see `space_line`)."""
    _console().print(space_line(space))


def present_backups(listing: Sequence[BackupListing]) -> None:
    """One row per backup: when, how big stored and original, how stored, of which session."""
    table = Table(title=f"{len(listing)} backups", show_edge=False)
    table.add_column("created")
    table.add_column("stored", justify="right")
    table.add_column("original", justify="right")
    table.add_column("encoding")
    table.add_column("backup")
    table.add_column("of session")
    for entry in listing:
        table.add_row(
            entry.created.astimezone().strftime("%Y-%m-%d %H:%M"),
            human_bytes(entry.stored_bytes),
            human_bytes(entry.original_bytes) if entry.original_bytes is not None else "?",
            entry.compression,
            str(entry.path),
            str(entry.session) if entry.session else "(not recorded)",
        )
    Console(file=sys.stdout, highlight=False, width=200 if not sys.stdout.isatty() else None).print(table)
