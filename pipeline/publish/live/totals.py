"""The figures of an in-place run's sessions for its totals (`report.run_totals`): what the job
said, and what the transaction did (the file replaced, its backup).

A session counts as written only once its replacement committed, with the backup it kept (a
reused one stored no new bytes). Sessions skipped before any job
ran (unchanged, recently modified, held open) have no figures: `in_place.by_disposition` counts them.
"""

from __future__ import annotations

from dataclasses import replace

from msgspec import UNSET, UnsetType

from pipeline.core.read_pages import RepairPlan
from pipeline.proof.damage_repair import DamageRepair
from pipeline.publish.live.decisions import InPlaceOutcome
from pipeline.publish.live.receipt import Receipt
from pipeline.report.documents import Outcome
from pipeline.report.rewrite_documents import RewriteReport
from pipeline.report.run_totals import BackupFigure, SessionFigures, repair_figures, report_figures
from pipeline.vocabulary import SourceFormat

__all__ = ["committed_sizes", "in_place_figures"]


def _committed(receipt: Receipt | None) -> Receipt | None:
    return receipt if receipt is not None and receipt.committed else None


def _backup(receipt: Receipt | None) -> BackupFigure | None:
    backup = receipt.backup if receipt is not None else None
    if backup is None:
        return None
    return BackupFigure(backup.size, backup.stored_size, backup.compression.value, backup.reused)


def committed_sizes(receipt: Receipt | None) -> tuple[int | UnsetType, int | UnsetType]:
    """A committed replacement's original size (its backup's) and the published file's; unset
    when nothing was replaced."""
    if receipt is None or not receipt.committed or receipt.backup is None or receipt.published is None:
        return UNSET, UNSET
    return receipt.backup.size, receipt.published.size


def _repair(outcome: InPlaceOutcome, receipt: Receipt | None, source_format: SourceFormat) -> SessionFigures:
    """A repaired session: the original's bytes (its backup's) and the published file's."""
    before, after = committed_sizes(receipt)
    status = outcome.status or outcome.disposition.value
    root = outcome.target.root_name
    return repair_figures(
        status, root, source_format=source_format, failed=outcome.failed, before=before, after=after
    )


def in_place_figures(
    outcome: InPlaceOutcome, chain_repairs: SourceFormat | None = None
) -> SessionFigures | None:
    """One session's figures; None for a session no job ran on (`chain_repairs`: the format the
    command's chain repairs take, as the registry names it; None for a command that makes none)."""
    receipt = _committed(outcome.receipt)
    job = outcome.job
    if isinstance(job, Outcome):
        figures = report_figures(job.report, outcome.target.root_name)
        if receipt is None:  # built, maybe, but the live file is the original still
            figures = replace(figures, written=None, tokens=None)
    elif isinstance(job, DamageRepair | RepairPlan):
        assert chain_repairs is not None, "a command that repairs chains names their format"
        figures = _repair(outcome, receipt, chain_repairs)
    elif isinstance(job, RewriteReport):  # a repair or vacuum of another agent's session
        figures = _repair(outcome, receipt, SourceFormat(job.format))
    else:
        return None
    # Failed as the run counts it: a replacement that failed fails the session, whatever the job said.
    return replace(figures, failed=outcome.failed, backup=_backup(receipt))
