"""The pass `vacuum` (and `repair`, for the sessions read through the seam) runs: report only, as
candidates under `--out`, or in place through the live-replacement transaction; one report per
session and a summary.

The job is `jobs/context_rewrite.py`, published by `jobs/rewrite_published.py`; in place,
the same pass as `compress --in-place` (state database, idle rule, open files, verified backups,
`restore`).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import msgspec
from msgspec import UNSET

from pipeline.cli.compress_command import check_apart, gate_judge
from pipeline.cli.console import progress_bar
from pipeline.cli.fleet_command import SUMMARY_NAME
from pipeline.cli.in_place_pass import LiveCommand, LiveRun, finish, in_place_totals, run_pass
from pipeline.cli.live_tables import present_counts, present_space
from pipeline.cli.repair_command import elsewhere_report_dir
from pipeline.execute.process_pool import ProcessPoolInPlaceRunner
from pipeline.execute.seam import report_path
from pipeline.formats.line_guard import LineLimits
from pipeline.formats.rewrites import RewriteKind
from pipeline.jobs.context_rewrite import RewriteOptions
from pipeline.jobs.rewrite_published import (
    in_place_rewrite_report,
    rewrite_builder,
    rewrite_frozen,
    write_rewrite_candidate,
)
from pipeline.publish.files import write_bytes_atomic
from pipeline.publish.live.source import FrozenSource, SessionTarget, SourceRefused, freeze_source
from pipeline.publish.live.state_db import RecordedResult
from pipeline.report.render import json_bytes
from pipeline.report.rewrite_documents import RewriteReport, RewriteStatus, RewriteSummary
from pipeline.report.run_totals import SessionFigures, TotalsOf, fold_totals, repair_figures
from pipeline.settings import Settings
from pipeline.vocabulary import ExitCode, ResumeGate, SourceFormat

__all__ = [
    "REWRITE_ENGINE",
    "frozen_rewrite_elsewhere",
    "one_rewrite_elsewhere",
    "rewrite_figures",
    "rewrite_options",
    "rewrite_pass",
    "rewrite_summary",
]

REWRITE_ENGINE: Final = "rewrite-v1"  # bump when a rewrite's rules change: declined sessions are rescanned


def rewrite_options(settings: Settings, kind: RewriteKind, *, verify: bool) -> RewriteOptions:
    """The run's options: the readers' limits, and the clients the resume gate runs (none when off)."""
    from pipeline.agents.registry import CONTEXT_FORMATS  # noqa: PLC0415 - the plug-ins, on use

    gate = settings.compress.verify_resume if verify else ResumeGate.OFF
    judges: dict[SourceFormat, str] = {}
    if gate is not ResumeGate.OFF:
        for source_format, agent in CONTEXT_FORMATS.items():
            found = gate_judge(settings, source_format) if kind in agent.rewrites else None
            if found is not None:
                judges[source_format] = found
    return RewriteOptions(
        kind, LineLimits.of(settings.sweep), gate, judges, settings.verify.resume_timeout_seconds
    )


def _unreadable(session: SessionTarget, options: RewriteOptions, mode: str, why: str) -> RewriteReport:
    return RewriteReport(
        command=options.kind.value,
        session=session.report_label,
        format="",
        mode=mode,
        status=RewriteStatus.UNREADABLE,
        reasons=[why],
        bytes_before=0,
    )


def one_rewrite_elsewhere(session: SessionTarget, options: RewriteOptions, out: Path | None) -> RewriteReport:
    """Report mode (nothing written, nothing proven), or the candidate under `out`."""
    try:
        frozen = freeze_source(session)
    except SourceRefused as exc:
        return _unreadable(session, options, "candidate" if out is not None else "report", exc.refusal.value)
    return frozen_rewrite_elsewhere(frozen, options, out)


def frozen_rewrite_elsewhere(
    frozen: FrozenSource, options: RewriteOptions, out: Path | None
) -> RewriteReport:
    """`one_rewrite_elsewhere` of a session already frozen."""
    mode = "candidate" if out is not None else "report"
    done = rewrite_frozen(frozen, options, mode=mode, prove=out is not None)
    if out is None:
        return done.report
    status = RewriteStatus.REPAIRED if options.kind is RewriteKind.REPAIR else RewriteStatus.VACUUMED
    return write_rewrite_candidate(frozen, out, done, status)


def rewrite_summary(
    live: LiveRun, mode: str, reports: Sequence[RewriteReport], elapsed_ms: float, kind: RewriteKind
) -> RewriteSummary:
    """The run's `summary.json`: statuses, edits, verdicts and the bytes of the files rewritten."""
    rewritten = [
        r
        for r in reports
        if r.status in (RewriteStatus.REPAIRED, RewriteStatus.VACUUMED, RewriteStatus.PLANNED)
    ]
    changes: Counter[str] = Counter()
    for report in rewritten:
        for edit in report.edits:
            changes[edit.change] += edit.count
    proofs = Counter(r.resume_check.verdict.value for r in reports if r.resume_check is not UNSET)
    return RewriteSummary(
        command=kind.value,
        mode=mode,
        roots=[str(root) for root, _ in live.roots],
        sessions=len(reports),
        by_status=dict(sorted(Counter(r.status.value for r in reports).items())),
        by_change=dict(sorted(changes.items())),
        by_proof=dict(sorted(proofs.items())),
        bytes_before=sum(r.bytes_before for r in rewritten),
        bytes_after=sum(r.bytes_after for r in rewritten if isinstance(r.bytes_after, int)),
        elapsed_ms=round(elapsed_ms, 1),
        reports=[r.session for r in reports],
    )


def _present(summary: RewriteSummary, report_dir: Path) -> None:
    present_counts(f"{summary.sessions} sessions", ("status", "sessions"), summary.by_status)
    if summary.by_change:
        present_counts(summary.command, ("change", "edits"), summary.by_change)
    if summary.by_proof:
        present_counts("resume check", ("verdict", "sessions"), summary.by_proof)
    if summary.by_disposition is not UNSET:
        present_counts("in place", ("disposition", "sessions"), summary.by_disposition)
    if summary.archive is not UNSET:
        present_space(summary.archive)
    print(f"bytes: {summary.bytes_before} -> {summary.bytes_after}")
    print(f"reports: {report_dir}")


def _in_place(live: LiveRun, options: RewriteOptions) -> int:
    command = LiveCommand(
        name=options.kind.value,
        result=RecordedResult.REPAIRED,  # ours, as a repair's: restore and retention treat it so
        config_digest=f"{REWRITE_ENGINE}-{options.kind.value}-{options.gate.value}",
        require_resume_proof=False,  # the builder refuses what the client shows differs; unproven is reported
        runner=ProcessPoolInPlaceRunner(1),
        here=rewrite_builder(options),
        report_of=in_place_rewrite_report,
    )
    done = run_pass(command, live)
    reports = [o.job for o in done.outcomes if isinstance(o.job, RewriteReport)]
    committed = {
        o.target.report_label for o in done.outcomes if o.receipt is not None and o.receipt.committed
    }
    written = RewriteStatus.REPAIRED if options.kind is RewriteKind.REPAIR else RewriteStatus.VACUUMED
    reports = [msgspec.structs.replace(r, status=written) if r.session in committed else r for r in reports]
    summary = msgspec.structs.replace(
        rewrite_summary(live, "in-place", reports, done.elapsed_ms, options.kind),
        sessions=len(done.outcomes),
        by_disposition=dict(sorted(Counter(o.disposition.value for o in done.outcomes).items())),
        totals=in_place_totals(done),
        archive=done.archive,
    )
    return finish(done, summary, lambda: _present(summary, done.report_dir), quiet=live.args.quiet)


def _elsewhere(live: LiveRun, options: RewriteOptions) -> int:
    out = live.args.out.resolve() if live.args.out else None
    if out is not None:
        check_apart(out, [root for root, _ in live.roots], "--out")
    report_dir = elsewhere_report_dir(live.settings, out, options.kind.value)
    started = time.perf_counter()
    reports: list[RewriteReport] = []
    with progress_bar(
        len(live.sessions), enabled=not live.args.quiet, description=options.kind.value
    ) as advance:
        for session in live.sessions:
            report = one_rewrite_elsewhere(session, options, out)
            write_bytes_atomic(report_path(report_dir, session), json_bytes(report))
            reports.append(report)
            advance(_Done(report))
    mode = "candidate" if out is not None else "report"
    summary = rewrite_summary(live, mode, reports, (time.perf_counter() - started) * 1000, options.kind)
    if out is not None:
        figures = (rewrite_figures(r, s.root_name) for s, r in zip(live.sessions, reports, strict=True))
        summary = msgspec.structs.replace(summary, totals=fold_totals(figures, TotalsOf.WRITTEN))
    write_bytes_atomic(report_dir / SUMMARY_NAME, json_bytes(summary))
    if not live.args.quiet:
        _present(summary, report_dir)
    return ExitCode.FAILED if any(r.status.is_failure for r in reports) else ExitCode.OK


def rewrite_figures(report: RewriteReport, root: str) -> SessionFigures:
    """A rewrite's figures for the run's totals: its status, and the file written (its sizes)."""
    after = report.bytes_after if report.output is not UNSET else UNSET
    return repair_figures(
        report.status.value,
        root,
        source_format=SourceFormat(report.format),
        failed=report.status.is_failure,
        before=report.bytes_before,
        after=after,
    )


class _Done:
    """What the progress bar counts (a failure: a session refused or unreadable)."""

    def __init__(self, report: RewriteReport) -> None:
        self.failed = report.status.is_failure


def rewrite_pass(live: LiveRun, kind: RewriteKind) -> int:
    """The command in the mode its flags name; the exit code (see --help)."""
    options = rewrite_options(live.settings, kind, verify=not live.args.no_verify_resume)
    return _in_place(live, options) if live.args.in_place else _elsewhere(live, options)
