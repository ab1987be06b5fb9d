"""`compress --repair`: a damaged active chain is repaired first, then the repaired session compressed.

A compaction summarizes the damage in the span it replaces; damage in the kept tail (the
protected last round, where no cut can reach) used to refuse the session. With the repair on,
any session whose active chain the validator finds in error is first given `compaction
repair`'s minimal edits (`core.session_repair`), proven by the session's own client beside the
damaged original (`proof.damage_repair`, its format's judge) whenever the resume gate runs. The
compaction then runs on the repaired bytes, staged in a scratch directory under the original's
folder name: the gate resumes that copy as the original, so the chain of proof is original ->
repaired (the repair's verdict) -> candidate (the gate's). The original itself is never written;
before the candidate is published its file is hashed again, as for any compaction. A repair that
leaves a defect, or that the client refutes, leaves the compaction to the original, and the
report says which.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pipeline.agents.registry import chain_judge
from pipeline.formats.line_guard import LineLimits
from pipeline.jobs.compress.options import CompressOptions, candidate_path
from pipeline.jobs.compress.stages import Candidate, Publisher, Stop
from pipeline.jobs.front import Analysis, open_source
from pipeline.proof.damage_repair import DamageRepair, ProofSetup, repair_session
from pipeline.read.load import file_sha256, frozen_source
from pipeline.reasons import Reason, Refusal
from pipeline.report.compression import OutputSection
from pipeline.report.repair_documents import edit_entries, proof_section, unrepaired_entry
from pipeline.report.repair_sections import SourceRepairSection
from pipeline.vocabulary import SessionStatus

__all__ = [
    "REMEDY",
    "RepairedSource",
    "declined_section",
    "guarded",
    "remedy_section",
    "repair_first",
    "repaired_section",
]

REPAIRED: Final = "repaired"
UNREPAIRED: Final = "unrepaired"  # a defect no repair can make safely: the file as it was
REFUTED: Final = "refuted"  # the client showed the repair wrong, or could not run
OFF: Final = "off"
REMEDY: Final = "compaction repair (or compress --repair) fixes the damage first"


@dataclass(frozen=True, slots=True)
class RepairedSource:
    """The proven repair, and the repaired session opened from its staged copy."""

    job: DamageRepair
    analysis: Analysis


def _staged(original: Path, data: bytes, scratch: Path) -> Path:
    """The repaired bytes under the original's folder and file name (a subagent stays a subagent)."""
    staged = scratch / "repaired" / original.parent.name / original.name
    staged.parent.mkdir(parents=True, mode=0o700)
    staged.write_bytes(data)
    return staged


def repair_first(
    analysis: Analysis, options: CompressOptions, scratch: Path
) -> RepairedSource | DamageRepair:
    """The repaired session to compress, or the repair that was not made (nothing to do, a defect it
    cannot repair, or the client's refutation)."""
    assert options.damage_repair is not None, "only a run with the repair on repairs first"
    executable = options.judges.get(analysis.format)
    setup = ProofSetup(
        Path(executable) if executable else None,
        options.verify.resume_timeout_seconds,
        chain_judge(analysis.format),
    )
    job = repair_session(analysis.source.data, analysis.path.name, options.damage_repair, setup, scratch)
    repaired = job.plan.repaired
    if not job.accepted or repaired is None:
        return job
    staged = _staged(analysis.path, repaired, scratch)
    source = frozen_source(staged, repaired, hashlib.sha256(repaired).hexdigest())
    opened = open_source(
        analysis.label,
        source,
        options.topology(),
        command="compress",
        per_code=options.sweep.findings_per_code,
        limits=LineLimits.of(options.sweep),
    )
    return RepairedSource(job, opened) if isinstance(opened, Analysis) else job


def guarded(publish: Publisher, original: Analysis) -> Publisher:
    """`publish` for a candidate of the repaired copy: the original's file must still hold the bytes
    that were repaired, and a candidate may never land on it."""

    def run(analysis: Analysis, options: CompressOptions, candidate: Candidate) -> OutputSection | Stop:
        if file_sha256(original.path) != original.source.sha256:
            return Stop(SessionStatus.REFUSED, (Reason(Refusal.SOURCE_CHANGED),))
        if options.out_dir:
            destination = candidate_path(Path(options.out_dir), options.root_label, analysis.label)
            if destination.resolve() == original.path.resolve():
                return Stop(SessionStatus.REFUSED, (Reason(Refusal.OUTPUT_WOULD_OVERWRITE_SOURCE),))
        return publish(analysis, options, candidate)

    return run


def repaired_section(repaired: RepairedSource) -> SourceRepairSection:
    """The report's `source_repair` when the compaction ran on the repaired bytes."""
    plan, data = repaired.job.plan, repaired.analysis.source
    return SourceRepairSection(
        status=REPAIRED,
        edits=edit_entries(plan),
        proof=proof_section(repaired.job.proof),
        repaired_sha256=data.sha256,
        repaired_lines=len(repaired.analysis.index),
    )


def declined_section(job: DamageRepair) -> SourceRepairSection | None:
    """The report's `source_repair` when no repair was made (None: there was nothing to repair)."""
    if not job.plan.changed and job.plan.unrepaired is None:
        return None
    status = UNREPAIRED if job.plan.unrepaired is not None else REFUTED
    return SourceRepairSection(
        status=status,
        edits=edit_entries(job.plan),
        unrepaired=unrepaired_entry(job.plan),
        proof=proof_section(job.proof),
    )


def remedy_section() -> SourceRepairSection:
    """A refusal for damage with the repair off names what fixes it."""
    return SourceRepairSection(status=OFF, remedy=REMEDY)
