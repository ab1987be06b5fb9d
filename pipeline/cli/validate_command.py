"""`compaction validate` as a fleet command: its options, the run record its summary keeps, the
fleet summary and table (which `compress` shares)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path

from msgspec import UnsetType

from pipeline.cli.console import render_summary
from pipeline.cli.fleet_command import FleetCommand, default_report_dir
from pipeline.cli.totals_line import totals_lines
from pipeline.core.plan import CutOptions
from pipeline.execute.process_pool import resolve_jobs
from pipeline.execute.seam import RunResult
from pipeline.execute.session_tasks import BoundJob
from pipeline.read.discover import SessionFile
from pipeline.read.remote import is_url
from pipeline.report.fleet import FleetSummary, ValidateRun, summary_report
from pipeline.report.run_totals import TotalsOf, outcome_totals
from pipeline.settings import CompressSettings, Settings

__all__ = [
    "fleet_headline",
    "fleet_summarizer",
    "needs_compaction",
    "present_fleet",
    "validate_command",
    "validate_run",
]


def validate_run(args: argparse.Namespace, settings: Settings) -> ValidateRun:
    """The options a validate run used, as its summary records them."""
    sweep = settings.sweep
    return ValidateRun(
        leaf_policy=sweep.leaf_policy.value,
        resume_leaf=args.resume_leaf,
        max_extension=sweep.max_post_last_prompt_extension,
        checkpoint_policy=sweep.checkpoint_policy.value,
        max_snapshots=sweep.max_file_history_snapshots,
        jobs=resolve_jobs(sweep.jobs),
        settings_sources=list(settings.sources),
    )


def needs_compaction(compress: CompressSettings) -> Callable[[int], bool]:
    """Whether an active chain of so many tokens would be compacted at the current target: not
    below `min_tokens`, and over the goal the plan would set it."""
    cut = CutOptions(
        compress.target_ratio,
        compress.target_estimated_tokens or None,
        compress.context_window,
        compress.max_window_share,
        compress.min_recent_records,
    )
    return lambda chain: chain >= compress.min_tokens and chain > cut.goal(chain)


def fleet_summarizer(
    command: str, record: ValidateRun, of: TotalsOf, needs: Callable[[int], bool] | None = None
) -> Callable[[RunResult, Sequence[SessionFile]], FleetSummary]:
    """The fleet summary of a run (`summary.json`), with the options it ran with and its totals."""

    def summarize(result: RunResult, sessions: Sequence[SessionFile]) -> FleetSummary:
        roots = list(dict.fromkeys(session.root_name for session in sessions))
        root_of = {session.report_label: session.root_name for session in sessions}
        return summary_report(
            result.outcomes,
            command=command,
            options=record,
            report_paths=result.report_paths,
            elapsed_ms=result.elapsed_ms,
            roots=roots,
            totals=outcome_totals(result.outcomes, root_of, of, needs=needs),
        )

    return summarize


def fleet_headline(verb: str) -> Callable[[FleetSummary], tuple[str, ...]]:
    """The lines under the status table that say what the run achieved (`verb`: compacted)."""

    def headline(summary: FleetSummary) -> tuple[str, ...]:
        totals = summary.totals
        return () if isinstance(totals, UnsetType) else totals_lines(totals, verb)

    return headline


def present_fleet(report_dir: Path | str, verb: str) -> Callable[[FleetSummary, RunResult], None]:
    """The table a person sees at the end of a run, and what the run achieved under it."""
    headline = fleet_headline(verb)

    def present(summary: FleetSummary, result: RunResult) -> None:
        spend = summary.model_spend
        render_summary(result.outcomes, report_dir, result.elapsed_ms, spend or None, headline(summary))

    return present


def validate_command(args: argparse.Namespace, settings: Settings) -> FleetCommand[FleetSummary]:
    """`validate` over the discovered sessions, reports to `--report-dir` (a path or a URL)."""
    from pipeline.jobs.validate import ValidateOptions, validate_session  # noqa: PLC0415 - per command

    work = BoundJob(validate_session, ValidateOptions(settings.sweep, args.resume_leaf))
    configured = settings.sweep.report_dir
    destination = (
        configured
        if is_url(configured)
        else str(Path(configured) if configured else default_report_dir("validate"))
    )
    return FleetCommand(
        name="validate",
        work_for=lambda session: work,
        destination=destination,
        per_code=settings.sweep.findings_per_code,
        resume=settings.sweep.resume,
        summarize=fleet_summarizer(
            "validate", validate_run(args, settings), TotalsOf.SWEEP, needs_compaction(settings.compress)
        ),
        present=present_fleet(destination, "validated"),
        headline=fleet_headline("validated"),
    )
