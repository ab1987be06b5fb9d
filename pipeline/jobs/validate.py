"""`validate`: one session's sweep: open, partition, validate, report.

The unit of work a worker process runs for `compaction validate`: a path, a label and typed
options in, a typed `Validated` outcome (or the front's early outcome) out.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from pipeline.core.partition import Partition, partition_lines, select_snapshots
from pipeline.core.validate.checks import Validation, validate
from pipeline.findings import Finding
from pipeline.formats.line_guard import LineLimits
from pipeline.jobs.context_validate import validate_context
from pipeline.jobs.front import Analysis, open_session, topology_options
from pipeline.report.chain import ChainSection, excluded_section, leaf_section, strict_section
from pipeline.report.documents import Outcome, SweepTokens, Validated, ValidateReport
from pipeline.report.sections import (
    Timing,
    findings_section,
    line_set,
    partition_section,
    peak_rss_mb,
    session_status,
)
from pipeline.settings import SweepSettings
from pipeline.vocabulary import FindingCode, Severity

__all__ = ["ValidateOptions", "file_findings", "sweep_partition", "validate_session"]


@dataclass(frozen=True, slots=True)
class ValidateOptions:
    """What a validation sweep needs, as values a worker process receives."""

    sweep: SweepSettings
    resume_leaf: str | None


def validate_session(path: Path, label: str, options: ValidateOptions) -> Outcome:
    """Validate one session file and build its report."""
    started = time.perf_counter()
    sweep = options.sweep
    opened = open_session(
        path,
        label,
        topology_options(sweep, options.resume_leaf),
        command="validate",
        per_code=sweep.findings_per_code,
        limits=LineLimits.of(sweep),
        contexts=lambda agent, context_label, source: validate_context(agent, context_label, source, sweep),
    )
    if not isinstance(opened, Analysis):
        return opened
    analyzed = time.perf_counter()
    return Validated(label, _report(opened, sweep, started, analyzed))


def sweep_partition(analysis: Analysis, sweep: SweepSettings) -> Partition:
    """A sweep's partition: no cut, the whole chain kept, with its correlated snapshots."""
    topology = analysis.topology
    side = select_snapshots(
        analysis.index,
        topology.chain,
        policy=sweep.checkpoint_policy,
        limit=sweep.max_file_history_snapshots,
        stop_line=topology.strict.pointer_line if topology.branch_isolation else None,
    )
    return partition_lines(
        analysis.index,
        summary=(),
        raw_keep=topology.chain,
        side_keep=side,
        pointer_line=topology.strict.pointer_line,
        branch_isolation=topology.branch_isolation,
    )


def file_findings(analysis: Analysis, validation: Validation) -> tuple[Finding, ...]:
    """Every finding `validate` reports for a file: one truth that `compress` reports too."""
    topology = analysis.topology
    missing = () if analysis.graph.uuid_lines else (Finding(FindingCode.NO_ACTIVE_CHAIN, Severity.WARNING),)
    return (*topology.findings, *validation.findings, *missing)


def _report(analysis: Analysis, sweep: SweepSettings, started: float, analyzed: float) -> ValidateReport:
    index, graph, topology = analysis.index, analysis.graph, analysis.topology
    partition = sweep_partition(analysis, sweep)
    validation = validate(index, graph, topology.chain, analysis.source.data)
    findings = file_findings(analysis, validation)
    return ValidateReport(
        session=analysis.session(),
        status=session_status(findings, refused=topology.refused and bool(graph.uuid_lines)),
        strict_status=topology.strict.status,
        strict=strict_section(topology),
        leaf=leaf_section(topology),
        chain=ChainSection(
            records=len(topology.chain),
            api_messages=validation.api_messages,
            lines=line_set(topology.chain),
            excluded=excluded_section(index, graph, topology),
            partial_tool_results=validation.partial_results,
        ),
        partition=partition_section(partition),
        findings=findings_section(findings, per_code=sweep.findings_per_code),
        tokens=SweepTokens(
            estimator="seed",
            session=index.tokens(),
            active_chain=analysis.tokens_of(topology.chain),
        ),
        timing_ms=Timing(
            analyze=round((analyzed - started) * 1000, 2),
            total=round((time.perf_counter() - started) * 1000, 2),
            worker_peak_rss_mb=peak_rss_mb(),
        ),
    )
