"""One session's validation sweep: read, index, topology, partition, validate, report.

This is the unit of work a worker process runs. It takes a path and plain options and returns
a `SessionOutcome`; any exception becomes an `internal-error` outcome for this session only.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pipeline.errors import UnreadableSource
from pipeline.findings import Finding
from pipeline.formats.detect import detect_format
from pipeline.graph import UuidGraph, build_graph
from pipeline.index import LineIndex, build_index
from pipeline.load import SourceBytes, read_source
from pipeline.partition import partition_lines, select_snapshots
from pipeline.report import SESSION_SCHEMA, SessionOutcome, findings_report, line_set_report, session_status
from pipeline.strict import latest_pointer_line
from pipeline.topology import Topology, TopologyOptions, resolve_topology
from pipeline.validate import validate
from pipeline.vocabulary import (
    CheckpointPolicy,
    FindingCode,
    LeafPolicy,
    PartitionSet,
    SessionKind,
    SessionStatus,
    Severity,
    SourceFormat,
)

__all__ = ["SweepOptions", "run_guarded", "session_kind", "sweep_session"]

_PROCESSED: Final = frozenset({SourceFormat.CLAUDE_CODE})


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


def session_kind(label: str) -> SessionKind:
    """Subagent transcripts live under `<session>/subagents/`."""
    return SessionKind.SUBAGENT if "/subagents/" in f"/{label}" else SessionKind.MAIN


def _session_block(label: str, source: SourceBytes, index: LineIndex | None, fmt: SourceFormat) -> dict[str, Any]:
    versions = sorted({r.version for r in index.records if r is not None and r.version}) if index else []
    return {
        "label": label,
        "kind": session_kind(label).value,
        "sha256": source.sha256,
        "bytes": source.size,
        "lines": len(index) if index is not None else source.data.count(b"\n") + (not source.data.endswith(b"\n")),
        "format": fmt.value,
        "client_versions": versions,
    }


def excluded_breakdown(index: LineIndex, graph: UuidGraph, topology: Topology) -> dict[str, Any]:
    """Why excluded uuid records are excluded: pre-compaction history, sidechains, rewinds."""
    active = set(topology.chain)
    pointer = latest_pointer_line(index)
    groups: dict[str, list[int]] = {"pre_compaction": [], "sidechain": [], "after_pointer": [], "rewound": []}
    main_is_sidechain = bool(topology.chain) and bool(index.record(topology.chain[-1]).sidechain)  # type: ignore[union-attr]
    for line in graph.uuid_lines:
        if line in active:
            continue
        record = index.record(line)
        assert record is not None
        if line in topology.pre_compaction:
            groups["pre_compaction"].append(line)
        elif record.sidechain and not main_is_sidechain:
            groups["sidechain"].append(line)
        elif pointer is not None and line > pointer and topology.policy is not LeafPolicy.PHYSICAL:
            groups["after_pointer"].append(line)
        else:
            groups["rewound"].append(line)
    return {name: line_set_report(lines) for name, lines in groups.items()}


def _chain_tokens(index: LineIndex, lines: tuple[int, ...]) -> int:
    return sum(record.tokens for line in lines if (record := index.record(line)) is not None)


def sweep_session(path: Path, label: str, options: SweepOptions) -> SessionOutcome:
    """Validate one session file and build its report."""
    started = time.perf_counter()
    timing: dict[str, float] = {}

    def lap(name: str, since: float) -> float:
        now = time.perf_counter()
        timing[name] = round((now - since) * 1000, 2)
        return now

    try:
        source = read_source(path)
    except UnreadableSource as exc:
        finding = Finding(FindingCode.UNREADABLE, Severity.ERROR, ids=(exc.reason,))
        report = {"schema": SESSION_SCHEMA, "command": "validate", "session": {"label": label},
                  "status": SessionStatus.UNREADABLE.value, **findings_report([finding])}
        return SessionOutcome(label, SessionStatus.UNREADABLE, report)
    mark = lap("read", started)
    fmt = detect_format(source.data)
    if fmt not in _PROCESSED and fmt is not SourceFormat.EMPTY:
        finding = Finding(FindingCode.UNSUPPORTED_FORMAT, Severity.INFO, ids=(fmt.value,))
        report = {"schema": SESSION_SCHEMA, "command": "validate",
                  "session": _session_block(label, source, None, fmt),
                  "status": SessionStatus.UNSUPPORTED_FORMAT.value, **findings_report([finding])}
        return SessionOutcome(label, SessionStatus.UNSUPPORTED_FORMAT, report)
    index = build_index(source.data, fmt)
    graph = build_graph(index)
    mark = lap("index", mark)
    topology = resolve_topology(index, graph, options.topology())
    mark = lap("topology", mark)
    side = select_snapshots(index, topology.chain, policy=CheckpointPolicy(options.checkpoint_policy),
                            limit=options.max_snapshots,
                            stop_line=topology.strict.pointer_line if topology.branch_isolation else None)
    partition = partition_lines(index, summary=(), raw_keep=topology.chain, side_keep=side,
                                branch_isolation=topology.branch_isolation)
    validation = validate(index, graph, topology.chain, source.data)
    mark = lap("validate", mark)
    findings = list(topology.findings) + list(validation.findings)
    if fmt is SourceFormat.EMPTY or not graph.uuid_lines:
        findings.append(Finding(FindingCode.NO_ACTIVE_CHAIN, Severity.WARNING))
    status = session_status(findings, refused=topology.refused and bool(graph.uuid_lines))
    report = {
        "schema": SESSION_SCHEMA,
        "command": "validate",
        "session": _session_block(label, source, index, fmt),
        "status": status.value,
        "strict_status": topology.strict.status.value,
        "strict": {
            "status": topology.strict.status.value,
            "reason": topology.strict.reason,
            "pointer_line": topology.strict.pointer_line,
            "leaf_uuid": topology.strict.leaf_uuid,
        },
        "leaf": {
            "uuid": topology.leaf_uuid,
            "line": topology.leaf_line,
            "source": topology.leaf_source.value if topology.leaf_line else "none",
            "policy": topology.policy.value,
            "branch_isolation": topology.branch_isolation,
            "chain_end": topology.chain_end.value if topology.chain_end else None,
            "external_parent": topology.external_parent is not None,
            "last_prompt_check": topology.prompt_check,
            "refusal": topology.refusal,
        },
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
            "active_chain": _chain_tokens(index, topology.chain),
        },
    }
    assert partition[PartitionSet.SUMMARY].count == 0
    lap("report", mark)
    timing["total"] = round((time.perf_counter() - started) * 1000, 2)
    report["timing_ms"] = timing
    return SessionOutcome(label, status, report)


def run_guarded(job: Callable[..., SessionOutcome], path: str, label: str, *args: Any) -> SessionOutcome:
    """Run one session job; an unexpected exception becomes this session's internal error."""
    try:
        return job(Path(path), label, *args)
    except Exception:  # noqa: BLE001 - one bad session must never stop the others
        finding = Finding(FindingCode.INTERNAL_ERROR, Severity.ERROR)
        report = {"schema": SESSION_SCHEMA, "session": {"label": label},
                  "status": SessionStatus.INTERNAL_ERROR.value, **findings_report([finding])}
        return SessionOutcome(label, SessionStatus.INTERNAL_ERROR, report, error=traceback.format_exc())
