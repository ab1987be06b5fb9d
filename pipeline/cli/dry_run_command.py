"""`compress --dry-run` as a fleet command: predict every session's model summary, total them.

Nothing is called and no candidate is written; each session's report says `planned` with its
calls, tokens, cost and least wall time, the run's summary the totals (`model_plan`), and the
table shows both.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from msgspec import UNSET
from rich.console import Console
from rich.table import Table

from pipeline.cli.fleet_command import FleetCommand
from pipeline.errors import UsageError
from pipeline.execute.model_services import model_window
from pipeline.execute.seam import RunResult
from pipeline.execute.session_tasks import BoundJob
from pipeline.jobs.compress import CompressOptions
from pipeline.jobs.compress.dry_run import DryRunOptions, plan_session
from pipeline.read.discover import SessionFile
from pipeline.report.documents import CompressReport, ContextCompressReport
from pipeline.report.fleet import CompressRun, FleetSummary, summary_report
from pipeline.settings import Settings
from pipeline.summarize.model.configure import (
    model_summary_options,
    price_table,
    provider_settings,
    rate_limits,
)
from pipeline.summarize.model.cost import FleetPlan, SummaryPlan, plan_fleet
from pipeline.summarize.model.limiter import RateLimits
from pipeline.summarize.model.providers import ProviderName
from pipeline.vocabulary import Strategy, SummarizerName

__all__ = ["dry_run_command"]

_PLANNED = (CompressReport, ContextCompressReport)  # the reports that may hold a model plan


def _fleet_plan(result: RunResult, limits: RateLimits) -> FleetPlan:
    sections = [
        o.report.model_plan
        for o in result.outcomes.values()
        if isinstance(o.report, _PLANNED) and o.report.model_plan is not UNSET
    ]
    plans = [
        SummaryPlan(
            s.calls,
            s.rounds,
            s.estimated_input_tokens,
            s.estimated_output_tokens,
            s.estimated_cost_usd,
            s.min_wall_seconds,
            None if s.refusal is UNSET else s.refusal,  # type: ignore[arg-type]
        )
        for s in sections
    ]
    fleet = plan_fleet(plans, limits)
    cost = fleet.estimated_cost_usd
    return replace(
        fleet,
        estimated_cost_usd=None if cost is None else round(cost, 4),
        min_wall_seconds=round(fleet.min_wall_seconds, 1),
    )


def _table(model: str, summary: FleetSummary, result: RunResult) -> None:
    caption = "least wall s: the time the rate limits alone allow; cost $ blank: no price for the model"
    title = f"compress --dry-run: model summaries planned with {model}"
    table = Table(title=title, caption=caption, show_edge=False)
    for column in ("session", "calls", "input tokens", "output tokens", "cost $", "least wall s"):
        table.add_column(column, justify="left" if column == "session" else "right", overflow="fold")
    for label, outcome in result.outcomes.items():
        plan = outcome.report.model_plan if isinstance(outcome.report, _PLANNED) else UNSET
        if plan is UNSET:
            continue
        cost = "" if plan.estimated_cost_usd is None else f"{plan.estimated_cost_usd:.4f}"
        row = (plan.calls, plan.estimated_input_tokens, plan.estimated_output_tokens)
        table.add_row(label, *map(str, row), cost, f"{plan.min_wall_seconds:.1f}")
    total = summary.model_plan
    if total is not UNSET:
        cost = "" if total.estimated_cost_usd is None else f"{total.estimated_cost_usd:.4f}"
        row = (total.calls, total.estimated_input_tokens, total.estimated_output_tokens)
        table.add_row("all", *map(str, row), cost, f"{total.min_wall_seconds:.1f}", style="bold")
    Console().print(table)


def dry_run_command(
    args: argparse.Namespace,
    settings: Settings,
    record: CompressRun,
    options_for: Callable[[SessionFile], CompressOptions],
    report_dir: Path,
) -> FleetCommand[FleetSummary]:
    """The fleet command of a dry run; `options_for` gives a session's compression options."""
    if settings.compress.summarizer is SummarizerName.DETERMINISTIC:
        raise UsageError(
            "--dry-run plans model summaries: choose one with --summarizer (the embedded one is free)"
        )
    if settings.compress.strategy is Strategy.MASK:
        raise UsageError("--dry-run plans model summaries: --strategy mask writes none (it calls no model)")
    name = ProviderName(settings.compress.summarizer.value)
    model = provider_settings(settings, name, args.model, args.base_url).model
    limits = rate_limits(settings)
    budget = model_summary_options(settings, name, model, model_window(args))
    shared = (budget, limits, price_table(settings), model)

    def dry_options(session: SessionFile) -> DryRunOptions:
        compress: CompressOptions = options_for(session)
        return DryRunOptions(compress, *shared)

    def summarize(result: RunResult, sessions: Sequence[SessionFile]) -> FleetSummary:
        roots = [str(root) for root in dict.fromkeys(session.root for session in sessions)]
        return summary_report(
            result.outcomes,
            command="compress",
            options=record,
            report_paths=result.report_paths,
            elapsed_ms=result.elapsed_ms,
            roots=roots,
            model_plan=_fleet_plan(result, limits),
        )

    return FleetCommand(
        name="compress --dry-run",
        work_for=lambda session: BoundJob(plan_session, dry_options(session)),
        destination=str(report_dir),
        per_code=settings.sweep.findings_per_code,
        resume=settings.sweep.resume,
        summarize=summarize,
        present=functools.partial(_table, model),
    )
