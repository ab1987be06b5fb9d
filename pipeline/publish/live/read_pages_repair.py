"""The `Read.pages` repair, published: in place through the transaction, or as a candidate file.

`repair_builder` plugs the pure plan (`pipeline.core.read_pages`) into the in-place drive as a
`BuildCandidate`: the candidate is the original with the planned spans deleted, and its
validator checks, on the immutable candidate and again on the bytes re-read from the live path,
that they are exactly the planned bytes, that no invariant moved, that a second pass finds
nothing, and that the shared validator finds no error the original did not have.
`write_repaired_candidate` is the candidate mode: the repaired bytes go to a separate output
path, are re-read and checked the same way. Reports spell the state `operationState`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import msgspec
from msgspec import UNSET

from pipeline.core.read_pages import apply_patches, plan_repair, repair_failures
from pipeline.core.topology.select import TopologyOptions
from pipeline.errors import CompactionError
from pipeline.formats.line_guard import LineLimits
from pipeline.live_vocabulary import OperationState, RepairScope
from pipeline.publish.files import write_bytes_atomic
from pipeline.publish.live.decisions import Candidate, Declined
from pipeline.publish.live.session_pass import BuildCandidate
from pipeline.publish.live.source import FrozenSource
from pipeline.report.live_replacement import RepairReport, repair_plan_section

__all__ = [
    "NOTHING_TO_REPAIR",
    "REPAIRED",
    "CandidateOverSource",
    "RepairOptions",
    "repair_builder",
    "write_repaired_candidate",
]

REPAIRED = "repaired"
NOTHING_TO_REPAIR = "nothing-to-repair"


class CandidateOverSource(CompactionError):
    """Candidate mode was asked to write over the source it repairs."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(f"the candidate path {path.name} is the source itself: use the in-place mode")


@dataclass(frozen=True, slots=True)
class RepairOptions:
    """Which calls the repair considers."""

    scope: RepairScope
    topology: TopologyOptions  # the chain of the active-chain scope
    limits: LineLimits  # the longest and deepest line a record may have


def repair_builder(options: RepairOptions) -> BuildCandidate:
    """A `BuildCandidate` that repairs instead of compressing (nothing to do is a final no)."""

    def build(frozen: FrozenSource, work_dir: Path) -> Candidate | Declined:
        del work_dir  # the repair is computed in memory; nothing is staged outside the transaction
        plan = plan_repair(frozen.data, options.scope, options.topology, options.limits)
        if not plan.patches:
            return Declined(
                NOTHING_TO_REPAIR, tuple(sorted({c.verdict.value for c in plan.calls})), final=True, job=plan
            )
        original = frozen.data

        def validate(data: bytes) -> tuple[str, ...]:
            return repair_failures(original, data, plan, options.scope, options.topology, options.limits)

        patched = apply_patches(original, plan.patches)
        return Candidate(patched, validate, proven=False, status=REPAIRED, job=plan)

    return build


def write_repaired_candidate(
    frozen: FrozenSource, out: Path, options: RepairOptions, *, label: str
) -> RepairReport:
    """Candidate mode: write the repaired bytes to `out` (never the source), re-read and check them."""
    plan = plan_repair(frozen.data, options.scope, options.topology, options.limits)
    base = RepairReport(
        session=label,
        mode="candidate",
        operation_state=OperationState.NOT_COMMITTED,
        reason=None,
        plan=repair_plan_section(plan),
        frozen_sha256=frozen.sha256,
    )
    if not plan.patches:
        return msgspec.structs.replace(base, reason=NOTHING_TO_REPAIR)
    if out.resolve() == frozen.path:
        raise CandidateOverSource(out)
    expected = apply_patches(frozen.data, plan.patches)
    write_bytes_atomic(out, expected)
    published = out.read_bytes()
    failures = repair_failures(frozen.data, published, plan, options.scope, options.topology, options.limits)
    return msgspec.structs.replace(
        base,
        operation_state=OperationState.NOT_COMMITTED if failures else OperationState.COMMITTED,
        reason="candidate-check-failed" if failures else None,
        candidate_sha256=hashlib.sha256(expected).hexdigest(),
        published_sha256=hashlib.sha256(published).hexdigest(),
        output=str(out),
        bytes_before=UNSET if failures else len(frozen.data),
        bytes_after=UNSET if failures else len(published),
        failures=list(failures),
    )
