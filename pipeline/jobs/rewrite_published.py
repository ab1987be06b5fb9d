"""`repair` and `vacuum` of the seam's formats, published: in place through the transaction, or as
a candidate file.

`rewrite_frozen` finds a frozen session's format and runs the rewrite job on exactly its bytes
(`jobs/context_rewrite.py`); `rewrite_builder` plugs that into the in-place drive as a
`BuildCandidate` whose validator holds the bytes published to the very bytes the job checked (and
the client judged); `write_rewrite_candidate` is the candidate mode, through the one candidate
writer compress uses; `in_place_rewrite_report` is a session's report after the transaction.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import msgspec
from msgspec import UNSET

from pipeline.agents.registry import context_format
from pipeline.formats.detect import detect_format
from pipeline.jobs.compress.candidate_file import write_candidate_at
from pipeline.jobs.context_rewrite import (
    RewriteOptions,
    Rewritten,
    no_such_rewrite,
    rewrite_session,
    written_status,
)
from pipeline.live_vocabulary import OperationState
from pipeline.publish.live.decisions import Candidate, Declined, InPlaceOutcome
from pipeline.publish.live.reporting import receipt_section
from pipeline.publish.live.session_pass import BuildCandidate
from pipeline.publish.live.source import FrozenSource
from pipeline.publish.live.totals import committed_sizes
from pipeline.read.compressed import Compression
from pipeline.read.load import frozen_source
from pipeline.reasons import Reason, Refusal
from pipeline.report.live_replacement import RepairReceiptSection
from pipeline.report.render import json_bytes
from pipeline.report.rewrite_documents import RewriteReport, RewriteStatus

__all__ = [
    "in_place_rewrite_report",
    "is_context_session",
    "rewrite_builder",
    "rewrite_frozen",
    "write_rewrite_candidate",
]

# Refusals another run may not repeat: the client failed to run, or the file changed meanwhile.
_TRANSIENT = frozenset({Refusal.RESUME_CHECK_FAILED.value, Refusal.SOURCE_CHANGED.value})


def is_context_session(frozen: FrozenSource) -> bool:
    """Whether the frozen bytes are a session of a format read through the seam."""
    return context_format(detect_format(frozen.data, frozen.path)) is not None


def rewrite_frozen(frozen: FrozenSource, options: RewriteOptions, *, mode: str, prove: bool) -> Rewritten:
    """The rewrite of one frozen session (a file of no seam format, or one its client keeps plain but
    found compressed, is skipped with the reason)."""
    source = frozen_source(frozen.path, frozen.data, frozen.sha256)
    label = frozen.target.report_label
    fmt = detect_format(source.data, source.path)
    agent = context_format(fmt)
    if agent is None or (source.compression is not Compression.NONE and not agent.compressed_sessions):
        report = RewriteReport(
            command=options.kind.value,
            session=label,
            format=fmt.value,
            mode=mode,
            status=RewriteStatus.SKIPPED,
            reasons=[no_such_rewrite(fmt, options.kind)],
            bytes_before=len(frozen.data),
            frozen_sha256=frozen.sha256,
        )
        return Rewritten(report)
    return rewrite_session(agent, label, source, options, mode=mode, prove=prove)


def rewrite_builder(options: RewriteOptions) -> BuildCandidate:
    """The in-place build step: the checked, judged rewrite as the transaction's candidate."""

    def build(frozen: FrozenSource, work_dir: Path) -> Candidate | Declined:
        done = rewrite_frozen(frozen, options, mode="in-place", prove=True)
        report = done.report
        if done.data is None:
            final = not _TRANSIENT.intersection(report.reasons)
            return Declined(
                report.status.value, tuple(report.reasons), final, report.status.is_failure, report
            )
        expected = hashlib.sha256(done.data).hexdigest()

        def validate(data: bytes) -> tuple[str, ...]:
            return () if hashlib.sha256(data).hexdigest() == expected else ("candidate-differs-from-checked",)

        status = written_status(options.kind).value
        return Candidate(done.data, validate, done.proven, status, job=report)

    return build


def write_rewrite_candidate(
    frozen: FrozenSource, out_dir: Path, done: Rewritten, kind_status: RewriteStatus
) -> RewriteReport:
    """Candidate mode: the checked bytes written under `out_dir` (the input layout mirrored)."""
    report = done.report
    if done.data is None:
        return report
    source = frozen_source(frozen.path, frozen.data, frozen.sha256)
    written = write_candidate_at(source, out_dir, out_dir / frozen.target.report_label, done.data)
    if isinstance(written, Reason):
        return msgspec.structs.replace(report, status=RewriteStatus.REFUSED, reasons=[str(written)])
    return msgspec.structs.replace(report, status=kind_status, output=written)


def in_place_rewrite_report(outcome: InPlaceOutcome) -> bytes | None:
    """A session's report after the in-place pass (none for one skipped by a stat)."""
    if not isinstance(outcome.job, RewriteReport):
        return None
    report = msgspec.structs.replace(outcome.job, disposition=outcome.disposition)
    receipt = outcome.receipt
    if receipt is None:
        return json_bytes(report)
    before, after = committed_sizes(receipt)
    committed = receipt.operation_state in (OperationState.COMMITTED, OperationState.COMMITTED_REPORT_FAILED)
    status = written_status_of(report) if committed else report.status
    return json_bytes(
        msgspec.structs.replace(
            report,
            status=status,
            bytes_before=before if before is not UNSET else report.bytes_before,
            bytes_after=after if after is not UNSET else report.bytes_after,
            operation_state=receipt.operation_state,
            reasons=[receipt.reason.value] if receipt.reason is not None else report.reasons,
            candidate_sha256=receipt.candidate_sha256,
            published_sha256=receipt.published_sha256,
            receipt=receipt_section(receipt, kind=RepairReceiptSection),
        )
    )


def written_status_of(report: RewriteReport) -> RewriteStatus:
    """The status of a report's session once its rewrite is published."""
    return RewriteStatus.REPAIRED if report.command == "repair" else RewriteStatus.VACUUMED
