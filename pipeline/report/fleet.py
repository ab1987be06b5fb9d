"""The fleet summary of `validate` and `compress`: totals by status, verdict and leaf source.

Pure: built from the typed outcomes the runner gathered, never from report files.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from msgspec import UNSET, UnsetType

from pipeline.report.compression import WriterSection
from pipeline.report.documents import (
    CompressReport,
    ContextCompressReport,
    Outcome,
    Report,
    TokensReport,
    ValidateReport,
)
from pipeline.report.resume_check import ResumeCheckSection
from pipeline.report.run_totals import RunTotals
from pipeline.report.sections import Section
from pipeline.vocabulary import FindingCode

if TYPE_CHECKING:  # the planner's module imports the model path (HTTP, the detector): workers import this one
    from pipeline.summarize.model.cost import FleetPlan  # the dry run's totals are the planner's own

__all__ = [
    "SUMMARY_SCHEMA",
    "CompressRun",
    "FleetSummary",
    "Interrupted",
    "ModelSpend",
    "ReportEntry",
    "ResumeChecks",
    "ValidateRun",
    "model_spend",
    "summary_report",
    "unsupported_by_agent",
]

SUMMARY_SCHEMA = "session-compaction/fleet-summary/v1"


class ReportEntry(Section, frozen=True, kw_only=True):
    session: str
    status: str
    report: str | None


class CostMs(Section, frozen=True, kw_only=True):
    total: float  # summed over sessions; they ran concurrently under --jobs
    median: float
    p90: float


class ResumeChecks(Section, frozen=True, kw_only=True):
    """Verdicts of the resume gate, what each client sends in total before and after, and the cost."""

    by_verdict: dict[str, int]
    sent_by_claude_code: dict[str, dict[str, int]]
    cost_ms: CostMs
    # What each other agent's client sent, by format (Codex, pi, ...): set when the run gated any.
    sent_by_format: dict[str, dict[str, dict[str, int]]] | UnsetType = UNSET


class ValidateRun(Section, frozen=True, kw_only=True):
    """The options a `validate` run used, as recorded for the user (never read back)."""

    leaf_policy: str
    resume_leaf: str | None
    max_extension: int
    checkpoint_policy: str
    max_snapshots: int
    jobs: int
    settings_sources: list[str]


class CompressRun(ValidateRun, frozen=True, kw_only=True):
    """The options a `compress` run used, as recorded for the user (never read back)."""

    out_dir: str
    min_tokens: int
    target_ratio: float
    target_tokens: int | None
    min_recent_records: int
    summary_char_budget: int
    min_gain: float
    preserve_prior_verbatim: bool
    anchors: list[str]
    summary_limits: list[tuple[str, int]]
    verify_resume: bool
    claude: str | None
    resume_timeout: float
    min_excluded_chars: int


class ModelSpend(Section, frozen=True, kw_only=True):
    """What the run's model calls were billed, over every session that called the model (its
    summary written, fallen back to the embedded one, or refused): the per-report figures summed."""

    sessions: int
    calls: int
    retries: int
    rate_limit_pauses: int
    retry_wait_seconds: float
    repairs: int
    billed_input_tokens: int  # cached ones included
    billed_output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_usd: float | None  # None when a session's model is not priced


class Interrupted(Section, frozen=True, kw_only=True):
    """A run a signal stopped: which signal, and the sessions it left untouched (no report)."""

    signal: str
    not_done: list[str]  # report labels, sorted


class FleetSummary(Section, frozen=True, kw_only=True):
    schema: str = SUMMARY_SCHEMA
    command: str
    roots: list[str]
    options: ValidateRun | CompressRun
    sessions: int
    failed: int
    by_status: dict[str, int]
    by_strict_status: dict[str, int]
    by_leaf_source: dict[str, int]
    bytes: int
    seed_tokens: int | UnsetType = UNSET  # validate: the seed's tokens of every Claude Code file
    elapsed_ms: float
    totals: RunTotals | UnsetType = UNSET  # what the run read and wrote, per agent format and root
    resume_checks: ResumeChecks | UnsetType = UNSET
    model_plan: FleetPlan | UnsetType = UNSET
    model_spend: ModelSpend | UnsetType = UNSET  # a model summarizer's run: what it was billed
    interrupted: Interrupted | UnsetType = UNSET
    # Files of agents this tool recognizes but does not process yet, per agent (format id).
    unsupported_by_agent: dict[str, int] | UnsetType = UNSET
    reports: list[ReportEntry]


def _quantile(ordered: Sequence[float], share: float) -> float:
    """Nearest-rank quantile of sorted values (0 for none)."""
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


def _sent(checks: Sequence[ResumeCheckSection]) -> dict[str, dict[str, int]]:
    """What one client sent in total, resuming the originals and the candidates."""
    sent: dict[str, Counter[str]] = {"original": Counter(), "compacted": Counter()}
    for check in checks:
        sizes = check.sent
        if sizes is not UNSET and sizes.original is not None and sizes.compacted is not None:
            for side, size in (("original", sizes.original), ("compacted", sizes.compacted)):
                sent[side].update(
                    messages=size.messages, characters=size.characters, estimated_tokens=size.estimated_tokens
                )
    return {side: dict(sorted(values.items())) for side, values in sent.items()}


def _resume_checks(
    claude: Sequence[ResumeCheckSection], others: Mapping[str, Sequence[ResumeCheckSection]]
) -> ResumeChecks | UnsetType:
    checks = [*claude, *(check for group in others.values() for check in group)]
    if not checks:
        return UNSET
    elapsed = sorted(check.elapsed_ms for check in checks)
    return ResumeChecks(
        by_verdict=dict(sorted(Counter(check.verdict.value for check in checks).items())),
        sent_by_claude_code=_sent(claude),
        sent_by_format={fmt: _sent(group) for fmt, group in sorted(others.items())} if others else UNSET,
        cost_ms=CostMs(
            total=round(sum(elapsed), 1), median=_quantile(elapsed, 0.5), p90=_quantile(elapsed, 0.9)
        ),
    )


def _writers(reports: Iterable[object]) -> list[WriterSection]:
    """The model accounts of the reports: a written (or fallen back) summary's, a refused one's."""
    found: list[WriterSection] = []
    for report in reports:
        if not isinstance(report, CompressReport):
            continue
        summary = report.summary
        if not isinstance(summary, UnsetType) and not isinstance(summary.writer, UnsetType):
            found.append(summary.writer)
        if not isinstance(report.model_failure, UnsetType):
            found.append(report.model_failure)
    return found


def model_spend(reports: Iterable[object]) -> ModelSpend | UnsetType:
    """The run's model totals; unset when no session called a model."""
    writers = _writers(reports)
    if not writers:
        return UNSET
    costs = [writer.cost_usd for writer in writers]
    return ModelSpend(
        sessions=len(writers),
        calls=sum(writer.calls for writer in writers),
        retries=sum(writer.retries for writer in writers),
        rate_limit_pauses=sum(writer.rate_limit_pauses for writer in writers),
        retry_wait_seconds=round(sum(writer.retry_wait_seconds for writer in writers), 3),
        repairs=sum(writer.repairs for writer in writers),
        billed_input_tokens=sum(writer.billed_input_tokens for writer in writers),
        billed_output_tokens=sum(writer.billed_output_tokens for writer in writers),
        cache_read_tokens=sum(writer.cache_read_tokens for writer in writers),
        cache_write_tokens=sum(writer.cache_write_tokens for writer in writers),
        cost_usd=None if None in costs else round(sum(c for c in costs if c is not None), 9),
    )


def unsupported_by_agent(reports: Iterable[Report]) -> dict[str, int] | UnsetType:
    """How many files of each agent not processed yet a run met (its `unsupported-format`
    finding names the agent); unset when it met none."""
    agents = Counter(
        entry.ids[0]
        for report in reports
        for entry in report.findings.findings
        if entry.code is FindingCode.UNSUPPORTED_FORMAT and isinstance(entry.ids, list) and entry.ids
    )
    return dict(sorted(agents.items())) if agents else UNSET


def _tokens(report: object) -> int:
    if isinstance(report, ValidateReport):
        return report.tokens.session
    return 0  # a rollout's tokens are Codex's estimate, not the seed's: not added to seed_tokens


def _format_name(report: ContextCompressReport) -> str:
    fmt = report.session.format
    return fmt.value if not isinstance(fmt, UnsetType) else "unknown"


def summary_report(
    outcomes: Mapping[str, Outcome],
    *,
    command: str,
    options: ValidateRun | CompressRun,
    report_paths: Mapping[str, str],
    elapsed_ms: float,
    roots: Iterable[str],
    model_plan: FleetPlan | UnsetType = UNSET,
    totals: RunTotals | UnsetType = UNSET,
) -> FleetSummary:
    """The fleet summary: counts by status, by strict verdict and by leaf source, and the run's
    `totals` (`report.run_totals`). `seed_tokens` only for `validate`: a compress report holds
    the active chain's tokens, not the whole file's (its totals hold the resume contexts)."""
    reports = [outcome.report for outcome in outcomes.values()]
    chained = [r for r in reports if isinstance(r, ValidateReport | CompressReport | TokensReport)]
    strict = Counter(r.strict_status.value for r in chained if not isinstance(r, TokensReport))
    checks = [
        r.resume_check for r in reports if isinstance(r, CompressReport) and r.resume_check is not UNSET
    ]
    others: dict[str, list[ResumeCheckSection]] = {}
    for r in reports:
        if isinstance(r, ContextCompressReport) and r.resume_check is not UNSET:
            others.setdefault(_format_name(r), []).append(r.resume_check)
    return FleetSummary(
        command=command,
        roots=list(roots),
        options=options,
        sessions=len(reports),
        failed=sum(outcome.failed for outcome in outcomes.values()),
        by_status=dict(sorted(Counter(r.status.value for r in reports).items())),
        by_strict_status=dict(sorted(strict.items())),
        by_leaf_source=dict(sorted(Counter(r.leaf.source.value for r in chained).items())),
        bytes=sum(r.session.bytes for r in reports if r.session.bytes is not UNSET),
        seed_tokens=sum(_tokens(r) for r in reports) if command == "validate" else UNSET,
        elapsed_ms=round(elapsed_ms, 1),
        totals=totals,
        resume_checks=_resume_checks(checks, others),
        model_plan=model_plan,
        model_spend=model_spend(reports),
        unsupported_by_agent=unsupported_by_agent(reports),
        reports=[
            ReportEntry(session=label, status=outcome.status.value, report=report_paths.get(label))
            for label, outcome in sorted(outcomes.items())
        ],
    )
