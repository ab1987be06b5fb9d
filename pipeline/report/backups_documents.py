"""What `compaction backups --prune` and `--move-to-archive` print with `--json`: paths, sizes,
dates and verdicts, never content."""

from __future__ import annotations

from pipeline.report.sections import Section

__all__ = ["MovedEntry", "PruneEntryReport", "PruneReport"]


class PruneEntryReport(Section, frozen=True, kw_only=True):
    """A backup the policy lets go: pruned (or, in a dry run, would be), or kept and why."""

    path: str
    session: str
    stored_bytes: int
    created: str  # ISO 8601, UTC
    verdict: str  # prune, kept-only-copy or kept-in-flight
    error: str | None  # the OS error that left it in place, if any


class PruneReport(Section, frozen=True, kw_only=True):
    """One prune: the policy, what it would remove and what it removed."""

    retention: str
    applied: bool  # False: a dry run (no --yes), nothing was removed
    backups: int  # recorded backups of the sessions under the roots, still on disk
    prune: int  # the policy lets these go
    prune_bytes: int
    pruned: int  # removed by this run (0 in a dry run)
    pruned_bytes: int
    kept_only_copy: int
    entries: list[PruneEntryReport]


class MovedEntry(Section, frozen=True, kw_only=True):
    """One backup of `--move-to-archive`: moved, or left where it was and why."""

    source: str
    archived: str | None
    stored_bytes: int
    archived_bytes: int
    reason: str | None
