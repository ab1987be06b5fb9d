"""`validate` of a session read through the seam (`agents/protocol.py`): read it, rebuild the
context its client resumes, judge it, report. The same sweep as for a Claude Code session
(six-way partition with digests, findings, tokens, timing), with the rebuilt context in place of
the active chain.
"""

from __future__ import annotations

import time

from pipeline.agents.protocol import ContextFormat
from pipeline.core.partition import checked_partition
from pipeline.formats.line_guard import LineLimits
from pipeline.read.load import SourceBytes
from pipeline.report.documents import ContextValidateReport, Outcome, SweepTokens, Validated
from pipeline.report.sections import (
    Timing,
    findings_section,
    partition_section,
    peak_rss_mb,
    session_section,
    session_status,
)
from pipeline.settings import SweepSettings

__all__ = ["validate_context"]


def validate_context(agent: ContextFormat, label: str, source: SourceBytes, sweep: SweepSettings) -> Outcome:
    """Validate one session's bytes and build its report."""
    started = time.perf_counter()
    session = agent.read(source.data, source.path, LineLimits.of(sweep))
    analyzed = time.perf_counter()
    partition = checked_partition(session.sweep_sets(), session.line_count)
    context_tokens = sum(item.tokens for item in session.sent())
    described = session_section(
        label, source, session.versions, session.line_count, agent.format, session.kind
    )
    report = ContextValidateReport(
        session=described,
        status=session_status(session.findings, refused=False),
        findings=findings_section(session.findings, per_code=sweep.findings_per_code),
        context=session.context_section(context_tokens),
        partition=partition_section(partition),
        tokens=SweepTokens(
            estimator=agent.estimator, session=session.file_tokens(), active_chain=context_tokens
        ),
        timing_ms=Timing(
            analyze=round((analyzed - started) * 1000, 2),
            total=round((time.perf_counter() - started) * 1000, 2),
            worker_peak_rss_mb=peak_rss_mb(),
        ),
    )
    return Validated(label, report)
