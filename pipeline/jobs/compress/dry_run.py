"""`compress --dry-run`: what a model would be asked to summarize, and what that would cost.

The same front, gate, bounding and plan as a real run (the summary's room is the model's planned
output), then the evidence pack is built and the engine's own planner predicts its calls,
rounds, tokens and cost; a session read through the seam gets its own gate and first cut
(`plan_context`) and the same prediction. No model is called, no candidate is written; the
report of each session says `planned` and holds the prediction, the run's summary the totals.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from msgspec import UNSET

from pipeline.formats.line_guard import LineLimits
from pipeline.jobs.compress.context_compress import plan_context
from pipeline.jobs.compress.damage import damage_refusal
from pipeline.jobs.compress.options import CompressOptions
from pipeline.jobs.compress.planning import first_plan
from pipeline.jobs.compress.stages import Stop, gate, report_findings, source_validation
from pipeline.jobs.front import Analysis, open_session
from pipeline.reasons import Reason
from pipeline.report.chain import leaf_section, strict_section
from pipeline.report.compression import CompressTokens, ModelPlanSection, plan_section, reason_figures
from pipeline.report.documents import CompressReport, Outcome, Skipped
from pipeline.report.sections import Timing, findings_section, peak_rss_mb
from pipeline.summarize.evidence.items import EvidenceItem
from pipeline.summarize.model.cost import PriceTable, plan_summary
from pipeline.summarize.model.engine import ModelSummaryOptions
from pipeline.summarize.model.limiter import RateLimits
from pipeline.vocabulary import PlanOutcome, SessionStatus

__all__ = ["DryRunOptions", "plan_session"]


@dataclass(frozen=True, slots=True)
class DryRunOptions:
    """A compression's options and what the prediction needs: the engine's bounds, limits, prices."""

    compress: CompressOptions
    model_summary: ModelSummaryOptions
    limits: RateLimits
    prices: PriceTable
    model: str


def _report(
    analysis: Analysis, options: DryRunOptions, stop: Stop | None, started: float, **sections: object
) -> CompressReport:
    topology = analysis.topology
    source = source_validation(analysis)  # again on each report: one per session, never a hot path
    return CompressReport(
        session=analysis.session(),
        status=stop.status if stop is not None else SessionStatus.PLANNED,
        strict_status=topology.strict.status,
        strict=strict_section(topology),
        leaf=leaf_section(topology),
        findings=findings_section(
            report_findings(analysis, source, stop), per_code=options.compress.sweep.findings_per_code
        ),
        tokens=CompressTokens(estimator="seed", active_chain=analysis.tokens_of(topology.chain)),
        timing_ms=Timing(
            total=round((time.perf_counter() - started) * 1000, 2), worker_peak_rss_mb=peak_rss_mb()
        ),
        reasons=[str(r) for r in stop.reasons] if stop is not None else UNSET,
        reason_figures=reason_figures(stop.reasons) if stop is not None else UNSET,
        **sections,  # type: ignore[arg-type]
    )


def plan_session(path: Path, label: str, options: DryRunOptions) -> Outcome:
    """Predict one session's model summary; nothing is called or written."""
    started = time.perf_counter()
    compress = options.compress
    opened = open_session(
        path,
        label,
        compress.topology(),
        command="compress",
        per_code=compress.sweep.findings_per_code,
        limits=LineLimits.of(compress.sweep),
        contexts=lambda agent, name, source: plan_context(
            agent, name, source, compress, partial(_predicted, options=options)
        ),
    )
    if not isinstance(opened, Analysis):
        return opened
    admitted = gate(opened, compress, source_validation(opened))
    if isinstance(admitted, Stop):
        return Skipped(label, _report(opened, options, admitted, started))
    plan = first_plan(
        opened,
        compress,
        summary_tokens=options.model_summary.planned_output_tokens,
        repair_floor=admitted.floor,
    )
    left = admitted.left_in(plan)
    if left:  # a real run refuses it: a damaged record would stay raw
        refused = Stop(SessionStatus.REFUSED, damage_refusal(left), left)
        return Skipped(label, _report(opened, options, refused, started, plan=plan_section(plan)))
    if plan.outcome is not PlanOutcome.CUT:
        fits = plan.outcome is PlanOutcome.FITS
        status = SessionStatus.SKIPPED_FITS if fits else SessionStatus.SKIPPED_NO_CUT
        nothing = Stop(status, tuple(Reason(note) for note in plan.reasons))
        return Skipped(label, _report(opened, options, nothing, started, plan=plan_section(plan)))
    evidence = opened.chain_format.evidence(opened.source.data, opened.index, plan.summary_lines)
    report = _report(
        opened, options, None, started, plan=plan_section(plan), model_plan=_predicted(evidence, options)
    )
    return Skipped(label, report)


def _predicted(evidence: tuple[EvidenceItem, ...], options: DryRunOptions) -> ModelPlanSection:
    """The engine's own planner over `evidence`: calls, rounds, tokens, cost, least wall time."""
    predicted = plan_summary(evidence, options.model_summary, options.limits, options.prices, options.model)
    return ModelPlanSection(
        model=options.model,
        calls=predicted.calls,
        rounds=predicted.rounds,
        estimated_input_tokens=predicted.estimated_input_tokens,
        estimated_output_tokens=predicted.estimated_output_tokens,
        estimated_cost_usd=predicted.estimated_cost_usd,
        min_wall_seconds=round(predicted.min_wall_seconds, 2),
        refusal=predicted.refusal.value if predicted.refusal is not None else UNSET,
    )
