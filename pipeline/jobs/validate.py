"""One session's validation sweep: analyze, partition, validate, report.

This is the unit of work a worker process runs for `compaction validate`. It takes a path and
plain options and returns a `SessionOutcome`; `run_guarded` turns any exception into an
`internal-error` outcome for this session only.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.core.index import LineIndex
from pipeline.core.partition import partition_lines, select_snapshots
from pipeline.core.topology.select import TopologyOptions
from pipeline.core.validate.checks import validate
from pipeline.findings import Finding
from pipeline.jobs.front import Analysis, analyze, excluded_breakdown, leaf_report, session_block
from pipeline.report.sessions import (
    SESSION_SCHEMA,
    SessionOutcome,
    findings_report,
    line_set_report,
    peak_rss_mb,
    session_status,
)
from pipeline.vocabulary import CheckpointPolicy, FindingCode, LeafPolicy, SessionStatus, Severity

__all__ = ["SweepOptions", "chain_tokens", "run_guarded", "strict_report", "sweep_session"]


@dataclass(frozen=True, slots=True)
class SweepOptions:
    """Options of a validation sweep, as plain values a worker process can receive."""

    leaf_policy: str = LeafPolicy.AUTO.value
    resume_leaf: str | None = None
    max_extension: int = 0
    checkpoint_policy: str = CheckpointPolicy.ACTIVE_CORRELATED.value
    max_snapshots: int = 80

    def topology(self) -> TopologyOptions:
        """The topology part of these options."""
        return TopologyOptions(LeafPolicy(self.leaf_policy), self.resume_leaf, self.max_extension)


def chain_tokens(index: LineIndex, lines: tuple[int, ...]) -> int:
    """Seed-estimated tokens of some lines."""
    return sum(record.tokens for line in lines if (record := index.record(line)) is not None)


def strict_report(analysis: Analysis) -> dict[str, Any]:
    """The report's `strict` section: the seed's verdict, always computed."""
    strict = analysis.topology.strict
    return {
        "status": strict.status.value,
        "reason": strict.reason,
        "pointer_line": strict.pointer_line,
        "leaf_uuid": strict.leaf_uuid,
    }


def sweep_session(path: Path, label: str, options: SweepOptions) -> SessionOutcome:
    """Validate one session file and build its report."""
    started = time.perf_counter()
    analysis = analyze(path, label, options.topology(), command="validate")
    if isinstance(analysis, SessionOutcome):
        return analysis
    analyzed = time.perf_counter()
    index, graph, topology = analysis.index, analysis.graph, analysis.topology
    side = select_snapshots(
        index,
        topology.chain,
        policy=CheckpointPolicy(options.checkpoint_policy),
        limit=options.max_snapshots,
        stop_line=topology.strict.pointer_line if topology.branch_isolation else None,
    )
    partition = partition_lines(
        index, summary=(), raw_keep=topology.chain, side_keep=side, branch_isolation=topology.branch_isolation
    )
    validation = validate(index, graph, topology.chain, analysis.source.data)
    findings: list[Finding] = list(topology.findings) + list(validation.findings)
    if not graph.uuid_lines:
        findings.append(Finding(FindingCode.NO_ACTIVE_CHAIN, Severity.WARNING))
    status = session_status(findings, refused=topology.refused and bool(graph.uuid_lines))
    report = {
        "schema": SESSION_SCHEMA,
        "command": "validate",
        "session": session_block(label, analysis.source, index, analysis.format, analysis.kind),
        "status": status.value,
        "strict_status": topology.strict.status.value,
        "strict": strict_report(analysis),
        "leaf": leaf_report(topology),
        "chain": {
            "records": len(topology.chain),
            "api_messages": validation.api_messages,
            "lines": line_set_report(topology.chain),
            "excluded": excluded_breakdown(index, graph, topology),
            "partial_tool_results": validation.partial_results,
        },
        "partition": partition.to_report(),
        **findings_report(findings),
        "tokens": {
            "estimator": "seed",
            "session": sum(record.tokens for record in index.records if record is not None),
            "active_chain": chain_tokens(index, topology.chain),
        },
        "timing_ms": {
            "analyze": round((analyzed - started) * 1000, 2),
            "total": round((time.perf_counter() - started) * 1000, 2),
            "worker_peak_rss_mb": peak_rss_mb(),
        },
    }
    return SessionOutcome(label, status, report)


def run_guarded(job: Callable[..., SessionOutcome], path: str, label: str, *args: Any) -> SessionOutcome:
    """Run one session job; an unexpected exception becomes this session's internal error."""
    try:
        return job(Path(path), label, *args)
    except Exception:
        finding = Finding(FindingCode.INTERNAL_ERROR, Severity.ERROR)
        report = {
            "schema": SESSION_SCHEMA,
            "session": {"label": label},
            "status": SessionStatus.INTERNAL_ERROR.value,
            **findings_report([finding]),
        }
        return SessionOutcome(label, SessionStatus.INTERNAL_ERROR, report, error=traceback.format_exc())
