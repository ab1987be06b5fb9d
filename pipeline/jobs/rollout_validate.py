"""`validate` of a Codex rollout: read it, rebuild the context Codex resumes, judge it, report.

The same sweep as for a Claude Code session (six-way partition with digests, findings, tokens,
timing), with the rebuilt context in place of the active chain.
"""

from __future__ import annotations

import time

from pipeline.core.partition import checked_partition
from pipeline.formats.claude_code.line_guard import LineLimits
from pipeline.formats.codex.analysis import RolloutAnalysis, analyze_rollout
from pipeline.formats.codex.reconstruct import ItemOrigin
from pipeline.formats.codex.rollout_decode import RolloutKind
from pipeline.read.load import SourceBytes
from pipeline.report.documents import Outcome, RolloutValidateReport, SweepTokens, Validated
from pipeline.report.resume_context import ContextSection
from pipeline.report.sections import (
    Timing,
    findings_section,
    line_set,
    partition_section,
    peak_rss_mb,
    session_section,
    session_status,
)
from pipeline.settings import SweepSettings
from pipeline.vocabulary import SessionKind, SourceFormat

__all__ = ["context_section", "validate_rollout"]

ESTIMATOR = "codex-approx"  # Codex's own approx_token_count: bytes / 4


def context_section(analysis: RolloutAnalysis, tokens: int) -> ContextSection:
    """The report's `context` section: the context Codex rebuilds, as counts and digests."""
    rebuilt, rollout = analysis.rebuilt, analysis.rollout
    compactions = sum(1 for _ in rollout.lines_where(RolloutKind.COMPACTED))
    return ContextSection(
        resumable=rebuilt.resumable,
        items=sum(item.origin is not ItemOrigin.INITIAL_CONTEXT for item in rebuilt.items),
        lines=line_set(analysis.context_lines()),
        base_line=rebuilt.base_line,
        compactions=compactions,
        replayed_records=len(rebuilt.replayed),
        rolled_back_turns=rebuilt.rolled_back,
        aborted_calls=sum(item.origin is ItemOrigin.ABORTED_OUTPUT for item in rebuilt.items),
        dropped_outputs=len(rebuilt.orphans),
        estimated_tokens=tokens,
    )


def validate_rollout(label: str, source: SourceBytes, sweep: SweepSettings) -> Outcome:
    """Validate one rollout's bytes and build its report."""
    started = time.perf_counter()
    analysis = analyze_rollout(source.data, LineLimits.of(sweep))
    analyzed = time.perf_counter()
    partition = checked_partition(analysis.sweep_sets(), len(analysis.rollout))
    context_tokens = analysis.context_tokens()
    session = session_section(
        label, source, analysis.versions, len(analysis.rollout), SourceFormat.CODEX, SessionKind.MAIN
    )
    report = RolloutValidateReport(
        session=session,
        status=session_status(analysis.findings, refused=False),
        findings=findings_section(analysis.findings, per_code=sweep.findings_per_code),
        context=context_section(analysis, context_tokens),
        partition=partition_section(partition),
        tokens=SweepTokens(estimator=ESTIMATOR, session=analysis.file_tokens(), active_chain=context_tokens),
        timing_ms=Timing(
            analyze=round((analyzed - started) * 1000, 2),
            total=round((time.perf_counter() - started) * 1000, 2),
            worker_peak_rss_mb=peak_rss_mb(),
        ),
    )
    return Validated(label, report)
