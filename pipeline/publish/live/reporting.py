"""The live values as report sections: receipts, backups, an in-place outcome, a restore, a listing.

The section types are `report.live_replacement`'s; these builders read the transaction's
receipt, the in-place run's outcomes, recovery's findings and the backups listing, and copy only
labels, paths, digests, sizes, codes and line numbers into them.
"""

from __future__ import annotations

from datetime import UTC
from typing import TypeVar

from pipeline.publish.live.backup_restore import BackupListing, RestoreOutcome
from pipeline.publish.live.backups import Backup
from pipeline.publish.live.decisions import InPlaceOutcome
from pipeline.publish.live.receipt import Receipt
from pipeline.publish.live.recovery import Recovered
from pipeline.report.live_replacement import (
    BackupEntry,
    BackupSection,
    HashesSection,
    InPlaceSection,
    ReceiptSection,
    RecoveredEntry,
    RestoreReport,
    SkippedEntry,
)

__all__ = [
    "backup_entry",
    "backup_section",
    "in_place_section",
    "receipt_section",
    "recovered_entry",
    "restore_report",
    "skipped_entry",
]


def backup_section(backup: Backup) -> BackupSection:
    return BackupSection(
        path=str(backup.path),
        sha256=backup.sha256,
        bytes=backup.size,
        stored_bytes=backup.stored_size,
        compression=backup.compression,
        reused=backup.reused,
    )


R = TypeVar("R", bound=ReceiptSection)


def receipt_section(receipt: Receipt, *, kind: type[R] = ReceiptSection) -> R:  # type: ignore[assignment]
    """The receipt as a report section (`kind=RepairReceiptSection` for the repair's spelling)."""
    return kind(
        label=receipt.label,
        path=str(receipt.path),
        operation_state=receipt.operation_state,
        reason=receipt.reason,
        failed_step=receipt.failed_step,
        errno=receipt.errno_name,
        strategy=receipt.strategy,
        hashes=HashesSection(
            frozen=receipt.frozen_sha256,
            candidate=receipt.candidate_sha256,
            published=receipt.published_sha256,
        ),
        backup=backup_section(receipt.backup) if receipt.backup else None,
        preserved=[str(path) for path in receipt.preserved],
        leftovers=[str(path) for path in receipt.leftovers],
        holders=list(receipt.holders),
        candidate_codes=list(receipt.candidate_codes),
        directory_synced=receipt.directory_synced,
    )


def in_place_section(outcome: InPlaceOutcome) -> InPlaceSection:
    return InPlaceSection(
        disposition=outcome.disposition,
        reasons=list(outcome.reasons),
        holders=list(outcome.holders),
        hashed=outcome.hashed,
        receipt=receipt_section(outcome.receipt) if outcome.receipt else None,
    )


def skipped_entry(outcome: InPlaceOutcome) -> SkippedEntry:
    return SkippedEntry(
        session=outcome.target.report_label,
        disposition=outcome.disposition,
        reasons=list(outcome.reasons),
        holders=list(outcome.holders),
    )


def recovered_entry(found: Recovered) -> RecoveredEntry:
    return RecoveredEntry(
        session=str(found.intent.session),
        state=found.state,
        removed=len(found.removed),
        preserved=[str(path) for path in found.preserved],
    )


def restore_report(outcome: RestoreOutcome) -> RestoreReport:
    return RestoreReport(
        session=outcome.target.report_label,
        path=str(outcome.target.path),
        backup=str(outcome.backup) if outcome.backup else None,
        restored=outcome.restored,
        refusal=outcome.refusal,
        receipt=receipt_section(outcome.receipt) if outcome.receipt else None,
        pruned_on=outcome.pruned_on.astimezone(UTC).isoformat() if outcome.pruned_on else None,
    )


def backup_entry(listing: BackupListing) -> BackupEntry:
    return BackupEntry(
        path=str(listing.path),
        session=str(listing.session) if listing.session else None,
        stored_bytes=listing.stored_bytes,
        original_bytes=listing.original_bytes,
        created=listing.created.astimezone(UTC).isoformat(),
        compression=listing.compression,
        sha256=listing.sha256,
        recorded=listing.recorded,
    )
