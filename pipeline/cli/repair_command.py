"""`compaction repair-read-pages`: the `Read.pages` compatibility repair over sessions.

Three modes: without `--in-place` or `--out` it only reports what it would delete; `--out DIR`
writes each repaired file as a candidate under DIR (mirroring the layout, outside ~/.claude),
re-read and checked; `--in-place` replaces each session through the same pass as
`compress --in-place` (state database, idle rule, open files, live-replacement transaction,
verified backups). Compression never runs this repair, and this repair never compresses.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

from msgspec import UNSET, UnsetType

from pipeline.agents.registry import READ_PAGES_REPAIR_FORMAT
from pipeline.cli.compress_command import check_apart
from pipeline.cli.console import progress_bar
from pipeline.cli.fleet_command import SUMMARY_NAME, default_report_dir
from pipeline.cli.in_place_pass import LiveCommand, LiveRun, finish, in_place_totals, run_pass
from pipeline.cli.live_tables import present_counts, present_space
from pipeline.cli.totals_line import totals_lines
from pipeline.core.read_pages import RepairPlan, plan_repair
from pipeline.execute.process_pool import ProcessPoolInPlaceRunner
from pipeline.execute.seam import report_path
from pipeline.live_vocabulary import OperationState
from pipeline.publish.files import write_bytes_atomic
from pipeline.publish.live.configured import repair_options
from pipeline.publish.live.decisions import InPlaceOutcome
from pipeline.publish.live.read_pages_repair import RepairOptions, repair_builder, write_repaired_candidate
from pipeline.publish.live.reporting import receipt_section
from pipeline.publish.live.source import SessionTarget, SourceRefused, freeze_source
from pipeline.publish.live.state_db import RecordedResult
from pipeline.publish.live.totals import committed_sizes
from pipeline.report.live_replacement import (
    RepairReceiptSection,
    RepairReport,
    RepairSummary,
    repair_plan_section,
)
from pipeline.report.render import json_bytes
from pipeline.report.run_totals import RunTotals, TotalsOf, fold_totals, repair_figures
from pipeline.settings import Settings
from pipeline.vocabulary import ExitCode

__all__ = ["REPAIR_ENGINE", "elsewhere_report_dir", "repair_command"]

REPAIR_ENGINE: Final = "read-pages-v1"  # bump when the repair's rules change: declined sessions are rescanned


def _digest(options: RepairOptions) -> str:
    text = json.dumps({"engine": REPAIR_ENGINE, "scope": options.scope, "leaf": options.topology.policy})
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _in_place_report(outcome: InPlaceOutcome) -> bytes | None:
    """The repair's report of one session the pass scanned (none for one skipped by a stat)."""
    if not isinstance(outcome.job, RepairPlan):
        return None
    receipt = outcome.receipt
    why = receipt.reason.value if receipt is not None and receipt.reason is not None else outcome.status
    before, after = committed_sizes(receipt)
    report = RepairReport(
        session=outcome.target.report_label,
        mode="in-place",
        operation_state=receipt.operation_state if receipt else OperationState.NOT_COMMITTED,
        reason=why,
        plan=repair_plan_section(outcome.job),
        frozen_sha256=receipt.frozen_sha256 if receipt else None,
        candidate_sha256=receipt.candidate_sha256 if receipt else None,
        published_sha256=receipt.published_sha256 if receipt else None,
        bytes_before=before,
        bytes_after=after,
        disposition=outcome.disposition,
        receipt=receipt_section(receipt, kind=RepairReceiptSection) if receipt is not None else UNSET,
    )
    return json_bytes(report)


def _verdicts(plans: Iterable[RepairPlan]) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for plan in plans:
        counts.update(call.verdict.value for call in plan.calls)
    return dict(sorted(counts.items()))


def _headline(summary: RepairSummary) -> tuple[str, ...]:
    return () if isinstance(summary.totals, UnsetType) else totals_lines(summary.totals, "repaired")


def _present(summary: RepairSummary, report_dir: Path) -> None:
    present_counts(
        f"{summary.sessions} sessions, {summary.patches} pages members",
        ("verdict", "calls"),
        summary.by_verdict,
    )
    for line in _headline(summary):
        print(line)
    if summary.by_disposition is not UNSET:
        present_counts("in place", ("disposition", "sessions"), summary.by_disposition)
    if summary.archive is not UNSET:
        present_space(summary.archive)
    print(f"reports: {report_dir}")


def _in_place(live: LiveRun) -> int:
    args, settings, roots = live.args, live.settings, live.roots
    options = repair_options(settings.read_pages, settings.sweep)
    command = LiveCommand(
        name="repair-read-pages",
        result=RecordedResult.REPAIRED,
        config_digest=_digest(options),
        require_resume_proof=False,  # an exact byte-span deletion, checked byte for byte
        runner=ProcessPoolInPlaceRunner(1),  # a scan per session: no worker is worth its start-up
        here=repair_builder(options),
        report_of=_in_place_report,
    )
    done = run_pass(command, live)
    outcomes = done.outcomes
    repaired = [
        o.job for o in outcomes if isinstance(o.job, RepairPlan) and o.receipt and o.receipt.committed
    ]
    summary = RepairSummary(
        mode="in-place",
        roots=[str(root) for root, _ in roots],
        sessions=len(outcomes),
        patches=sum(len(plan.patches) for plan in repaired),
        by_verdict=_verdicts(o.job for o in outcomes if isinstance(o.job, RepairPlan)),
        by_operation_state=dict(
            sorted(Counter(o.receipt.operation_state.value for o in outcomes if o.receipt).items())
        ),
        by_disposition=dict(sorted(Counter(o.disposition.value for o in outcomes).items())),
        elapsed_ms=round(done.elapsed_ms, 1),
        reports=[
            o.target.report_label for o in outcomes if isinstance(o.job, RepairPlan) and not o.report_failed
        ],
        totals=in_place_totals(done, READ_PAGES_REPAIR_FORMAT),
        archive=done.archive,
    )
    return finish(
        done,
        summary,
        lambda: _present(summary, done.report_dir),
        quiet=args.quiet,
        headline=_headline(summary),
    )


def _one_elsewhere(session: SessionTarget, options: RepairOptions, out: Path | None) -> RepairReport:
    """Report mode, or the candidate under `out`: the source is only read."""
    mode = "candidate" if out is not None else "report"
    try:
        frozen = freeze_source(session)
    except SourceRefused as exc:
        return RepairReport(
            session=session.report_label,
            mode=mode,
            operation_state=OperationState.NOT_COMMITTED,
            reason=exc.refusal.value,
            frozen_sha256=None,
        )
    if out is not None:
        return write_repaired_candidate(
            frozen, out / session.report_label, options, label=session.report_label
        )
    plan = plan_repair(frozen.data, options.scope, options.topology, options.limits)
    return RepairReport(
        session=session.report_label,
        mode=mode,
        operation_state=OperationState.NOT_COMMITTED,
        reason="report-only",
        plan=repair_plan_section(plan),
        frozen_sha256=frozen.sha256,
    )


def _written_totals(live: LiveRun, reports: Sequence[RepairReport]) -> RunTotals:
    """Candidate mode's totals: the files written, their sizes before and after, per root."""
    figures = (
        repair_figures(
            r.operation_state.value,
            session.root_name,
            source_format=READ_PAGES_REPAIR_FORMAT,
            failed=bool(r.failures),
            before=r.bytes_before,
            after=r.bytes_after,
        )
        for session, r in zip(live.sessions, reports, strict=True)
    )
    return fold_totals(figures, TotalsOf.WRITTEN)


class _Done:
    """What the progress bar counts (a failure: a candidate that did not check out)."""

    def __init__(self, report: RepairReport) -> None:
        self.failed = bool(report.failures)


def _elsewhere(live: LiveRun) -> int:
    args, settings, sessions, roots = live.args, live.settings, live.sessions, live.roots
    options = repair_options(settings.read_pages, settings.sweep)
    out = args.out.resolve() if args.out else None
    if out is not None:
        check_apart(out, [root for root, _ in roots], "--out")
    report_dir = elsewhere_report_dir(settings, out, "repair-read-pages")
    started = time.perf_counter()
    reports: list[RepairReport] = []
    with progress_bar(len(sessions), enabled=not args.quiet, description="repair-read-pages") as advance:
        for session in sessions:
            report = _one_elsewhere(session, options, out)
            write_bytes_atomic(report_path(report_dir, session), json_bytes(report))  # as in place
            reports.append(report)
            advance(_Done(report))
    plans = [r.plan for r in reports if r.plan is not UNSET]
    verdicts: Counter[str] = Counter()
    for plan in plans:
        verdicts.update(plan.verdicts)
    summary = RepairSummary(
        mode="candidate" if out else "report",
        roots=[str(root) for root, _ in roots],
        sessions=len(reports),
        patches=sum(plan.patches for plan in plans),
        by_verdict=dict(sorted(verdicts.items())),
        by_operation_state=dict(sorted(Counter(r.operation_state.value for r in reports).items())),
        elapsed_ms=round((time.perf_counter() - started) * 1000, 1),
        totals=_written_totals(live, reports) if out is not None else UNSET,  # report mode writes nothing
        reports=[r.session for r in reports],
    )
    write_bytes_atomic(report_dir / SUMMARY_NAME, json_bytes(summary))
    if not args.quiet:
        _present(summary, report_dir)
    return ExitCode.FAILED if any(r.failures for r in reports) else ExitCode.OK


def elsewhere_report_dir(settings: Settings, out: Path | None, command: str) -> Path:
    """`--report-dir`, else `--out`, else a fresh directory under the state directory (report mode)."""
    configured = settings.sweep.report_dir
    state_dir = Path(settings.state.dir).expanduser()  # a report-only run's reports: as its help says
    return Path(configured).resolve() if configured else (out or default_report_dir(command, state_dir))


def repair_command(live: LiveRun) -> int:
    """`repair-read-pages` in the mode its flags name; the exit code (see --help)."""
    return _in_place(live) if live.args.in_place else _elsewhere(live)
