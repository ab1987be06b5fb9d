"""Publishing: the only place that writes files.

`files` holds the atomic writes every job uses (candidates, reports). Beside it lives the
in-place machinery the command line drives for `compress --in-place`, `restore`, `backups` and
`repair-read-pages`: the live-replacement transaction (`transaction`, `replacement`,
`publication`), numbered verified backups (`backups`), the state database and run lock
(`state`), the idle rule and open-file detection (`activity`), recovery of interrupted runs
(`recovery`), the per-session loop of an in-place run (`inplace`, `decisions`), restore and the
backups listing (`restore`), the `Read.pages` repair (`repair`) and the option objects made
from the typed `[in_place]`, `[state]` and `[read_pages]` settings (`options`). The in-place
names are loaded on first use, so a validation sweep that only writes reports does not import
SQLite or the repair planner.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from pipeline.publish.files import fsync_directory, write_bytes_atomic, write_report, write_report_now

if TYPE_CHECKING:
    from pipeline.publish.activity import ActivityOptions, SessionActivity, platform_probe
    from pipeline.publish.backups import (
        Backup,
        BackupCompression,
        BackupOptions,
        BackupUnavailable,
        BackupUnreadable,
        read_backup,
    )
    from pipeline.publish.decisions import Candidate, Declined, Disposition, InPlaceOutcome
    from pipeline.publish.faults import FAULTS_BY_STEP, NO_FAULTS, Fault, FaultPlan, FaultSeam, Step
    from pipeline.publish.inplace import (
        BuildCandidate,
        InPlaceOptions,
        InPlacePass,
        Pending,
        Screened,
    )
    from pipeline.publish.options import (
        backup_options,
        in_place_options,
        repair_options,
        replace_options,
        state_options,
    )
    from pipeline.publish.outcome import OperationState, PublishStrategy, Receipt, StopReason
    from pipeline.publish.repair import (
        CandidateOverSource,
        RepairOptions,
        repair_builder,
        write_repaired_candidate,
    )
    from pipeline.publish.restore import (
        BackupListing,
        RestoreOptions,
        RestoreOutcome,
        RestoreRefusal,
        list_backups,
        restorable_since,
        restore_session,
    )
    from pipeline.publish.source import (
        FrozenSource,
        SessionTarget,
        SourceRefusal,
        SourceRefused,
        freeze_source,
    )
    from pipeline.publish.state import (
        RecordedResult,
        StateDb,
        StateLocked,
        StateOptions,
        StateUnusable,
        open_state,
        read_state,
    )
    from pipeline.publish.transaction import ReplaceOptions, Validator, replace_session

_LAZY = {
    "activity": ("ActivityOptions", "SessionActivity", "platform_probe"),
    "backups": (
        "Backup",
        "BackupCompression",
        "BackupOptions",
        "BackupUnavailable",
        "BackupUnreadable",
        "read_backup",
    ),
    "decisions": ("Candidate", "Declined", "Disposition", "InPlaceOutcome"),
    "faults": ("FAULTS_BY_STEP", "NO_FAULTS", "Fault", "FaultPlan", "FaultSeam", "Step"),
    "inplace": (
        "BuildCandidate",
        "InPlaceOptions",
        "InPlacePass",
        "Pending",
        "Screened",
    ),
    "options": ("backup_options", "in_place_options", "repair_options", "replace_options", "state_options"),
    "outcome": ("OperationState", "PublishStrategy", "Receipt", "StopReason"),
    "repair": (
        "CandidateOverSource",
        "RepairOptions",
        "repair_builder",
        "write_repaired_candidate",
    ),
    "restore": (
        "BackupListing",
        "RestoreOptions",
        "RestoreOutcome",
        "RestoreRefusal",
        "list_backups",
        "restorable_since",
        "restore_session",
    ),
    "source": ("FrozenSource", "SessionTarget", "SourceRefusal", "SourceRefused", "freeze_source"),
    "state": (
        "RecordedResult",
        "StateDb",
        "StateLocked",
        "StateOptions",
        "StateUnusable",
        "open_state",
        "read_state",
    ),
    "transaction": ("ReplaceOptions", "Validator", "replace_session"),
}
_MODULE_OF = {name: module for module, names in _LAZY.items() for name in names}

__all__ = [
    "FAULTS_BY_STEP",
    "NO_FAULTS",
    "ActivityOptions",
    "Backup",
    "BackupCompression",
    "BackupListing",
    "BackupOptions",
    "BackupUnavailable",
    "BackupUnreadable",
    "BuildCandidate",
    "Candidate",
    "CandidateOverSource",
    "Declined",
    "Disposition",
    "Fault",
    "FaultPlan",
    "FaultSeam",
    "FrozenSource",
    "InPlaceOptions",
    "InPlaceOutcome",
    "InPlacePass",
    "OperationState",
    "Pending",
    "PublishStrategy",
    "Receipt",
    "RecordedResult",
    "RepairOptions",
    "ReplaceOptions",
    "RestoreOptions",
    "RestoreOutcome",
    "RestoreRefusal",
    "Screened",
    "SessionActivity",
    "SessionTarget",
    "SourceRefusal",
    "SourceRefused",
    "StateDb",
    "StateLocked",
    "StateOptions",
    "StateUnusable",
    "Step",
    "StopReason",
    "Validator",
    "backup_options",
    "freeze_source",
    "fsync_directory",
    "in_place_options",
    "list_backups",
    "open_state",
    "platform_probe",
    "read_backup",
    "read_state",
    "repair_builder",
    "repair_options",
    "replace_options",
    "replace_session",
    "restorable_since",
    "restore_session",
    "state_options",
    "write_bytes_atomic",
    "write_repaired_candidate",
    "write_report",
    "write_report_now",
]


def __getattr__(name: str) -> Any:
    """Load an in-place name from its module on first use (PEP 562)."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
