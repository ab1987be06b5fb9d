"""`compaction repair`, published: in place through the transaction, or as a candidate file.

`damage_repair_builder` plugs the repair job (`pipeline.proof.damage_repair`) into the in-place
drive as a `BuildCandidate`: the candidate is the repaired bytes, proven by the setup's judge
first, and its validator checks, on the immutable candidate and again on the bytes re-read from
the live path, that they are exactly the planned bytes, every line without a receipt unchanged,
nothing left to repair and no new validator error. `write_damage_candidate` is the candidate mode: the
repaired bytes go to a separate output path and are re-read and checked the same way.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import msgspec
from msgspec import UNSET

from pipeline.core.session_repair import SessionRepairOptions, repair_failures
from pipeline.live_vocabulary import OperationState
from pipeline.proof.damage_repair import DamageRepair, ProofSetup, repair_session
from pipeline.proof.repair_verdict import RepairVerdict
from pipeline.publish.files import write_bytes_atomic
from pipeline.publish.live.decisions import Candidate, Declined
from pipeline.publish.live.read_pages_repair import NOTHING_TO_REPAIR, REPAIRED, CandidateOverSource
from pipeline.publish.live.session_pass import BuildCandidate
from pipeline.publish.live.source import FrozenSource
from pipeline.report.repair_documents import DamageRepairReport, edit_entries, proof_section, unrepaired_entry

__all__ = [
    "REFUSED",
    "damage_repair_builder",
    "declined_reasons",
    "job_report",
    "status_of",
    "write_damage_candidate",
]

REFUSED = "refused"


def declined_reasons(job: DamageRepair) -> tuple[str, ...]:
    """Why a repair is not published: the defect left as it was, or the judge's verdict."""
    if job.plan.unrepaired is not None:
        return (f"unrepaired-{job.plan.unrepaired.code}",)
    if job.proof is not None and not job.accepted:
        return (f"resume-{job.proof.verdict.value}",)
    return ()


def job_report(
    job: DamageRepair, *, label: str, mode: str, status: str, frozen_sha256: str | None
) -> DamageRepairReport:
    """The report of one session's repair, before anything was written."""
    return DamageRepairReport(
        session=label,
        mode=mode,
        status=status,
        operation_state=OperationState.NOT_COMMITTED,
        reasons=list(declined_reasons(job)),
        edits=edit_entries(job.plan),
        unrepaired=unrepaired_entry(job.plan),
        proof=proof_section(job.proof),
        frozen_sha256=frozen_sha256,
    )


def status_of(job: DamageRepair) -> str:
    """repaired, nothing-to-repair, or refused."""
    if job.accepted:
        return REPAIRED
    return REFUSED if declined_reasons(job) else NOTHING_TO_REPAIR


def damage_repair_builder(options: SessionRepairOptions, setup: ProofSetup) -> BuildCandidate:
    """A `BuildCandidate` that repairs instead of compressing (nothing to do is a final no)."""

    def build(frozen: FrozenSource, work_dir: Path) -> Candidate | Declined:
        job = repair_session(frozen.data, frozen.path.name, options, setup, work_dir)
        status = status_of(job)
        if status != REPAIRED or job.plan.repaired is None:
            return Declined(status, declined_reasons(job), final=True, failed=status == REFUSED, job=job)
        original, plan = frozen.data, job.plan

        def validate(data: bytes) -> tuple[str, ...]:
            return repair_failures(original, data, plan, options)

        proven = job.proof is not None and job.proof.verdict is RepairVerdict.PROVEN
        return Candidate(job.plan.repaired, validate, proven=proven, status=REPAIRED, job=job)

    return build


def write_damage_candidate(
    frozen: FrozenSource, out: Path, job: DamageRepair, options: SessionRepairOptions, *, label: str
) -> DamageRepairReport:
    """Candidate mode: write the repaired bytes to `out` (never the source), re-read and check them."""
    status = status_of(job)
    base = job_report(job, label=label, mode="candidate", status=status, frozen_sha256=frozen.sha256)
    if status != REPAIRED or job.plan.repaired is None:
        return base
    if out.resolve() == frozen.path:
        raise CandidateOverSource(out)
    write_bytes_atomic(out, job.plan.repaired)
    published = out.read_bytes()
    failures = repair_failures(frozen.data, published, job.plan, options)
    return msgspec.structs.replace(
        base,
        status=REFUSED if failures else REPAIRED,
        operation_state=OperationState.NOT_COMMITTED if failures else OperationState.COMMITTED,
        candidate_sha256=hashlib.sha256(job.plan.repaired).hexdigest(),
        published_sha256=hashlib.sha256(published).hexdigest(),
        output=str(out),
        bytes_before=UNSET if failures else len(frozen.data),
        bytes_after=UNSET if failures else len(published),
        failures=list(failures),
    )
