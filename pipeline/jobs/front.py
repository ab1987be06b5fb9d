"""The front every job shares: read the file, detect its format, index it, choose the topology.

`analyze` returns either an `Analysis` to continue from, or an early `SessionOutcome` for a
file that cannot be read or is not a Claude Code transcript.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.core.graph import UuidGraph, build_graph
from pipeline.core.index import LineIndex, build_index
from pipeline.core.topology.select import Topology, TopologyOptions, resolve_topology
from pipeline.core.topology.strict import latest_pointer_line
from pipeline.errors import UnreadableSource
from pipeline.findings import Finding
from pipeline.formats.detect import detect_format
from pipeline.read.load import SourceBytes, read_source
from pipeline.report.sessions import SESSION_SCHEMA, SessionOutcome, findings_report, line_set_report
from pipeline.vocabulary import FindingCode, LeafPolicy, SessionKind, SessionStatus, Severity, SourceFormat

__all__ = ["Analysis", "analyze", "excluded_breakdown", "leaf_report", "session_block"]


@dataclass(frozen=True, slots=True)
class Analysis:
    """A Claude Code transcript, indexed, with its topology resolved."""

    path: Path
    label: str
    source: SourceBytes
    format: SourceFormat
    index: LineIndex
    graph: UuidGraph
    topology: Topology

    @property
    def kind(self) -> SessionKind:
        """A subagent transcript lives under `subagents/` or holds sidechain records only."""
        if self.path.parent.name == "subagents":
            return SessionKind.SUBAGENT
        lines = self.graph.uuid_lines
        if lines and all(self.index.record(line).sidechain for line in lines):  # type: ignore[union-attr]
            return SessionKind.SUBAGENT
        return SessionKind.MAIN


def session_block(
    label: str, source: SourceBytes, index: LineIndex | None, fmt: SourceFormat, kind: SessionKind | None
) -> dict[str, Any]:
    """The report's `session` section."""
    versions = sorted({r.version for r in index.records if r is not None and r.version}) if index else []
    return {
        "label": label,
        "kind": kind.value if kind else None,
        "sha256": source.sha256,
        "bytes": source.size,
        "lines": len(index)
        if index is not None
        else source.data.count(b"\n") + (not source.data.endswith(b"\n")),
        "format": fmt.value,
        "client_versions": versions,
    }


def _early(
    label: str, command: str, status: SessionStatus, finding: Finding, session: dict[str, Any]
) -> SessionOutcome:
    report = {
        "schema": SESSION_SCHEMA,
        "command": command,
        "session": session,
        "status": status.value,
        **findings_report([finding]),
    }
    return SessionOutcome(label, status, report)


def analyze(path: Path, label: str, options: TopologyOptions, *, command: str) -> Analysis | SessionOutcome:
    """Read, detect, index and resolve; or the outcome of a file that goes no further."""
    try:
        source = read_source(path)
    except UnreadableSource as exc:
        finding = Finding(FindingCode.UNREADABLE, Severity.ERROR, ids=(exc.reason,))
        return _early(label, command, SessionStatus.UNREADABLE, finding, {"label": label})
    fmt = detect_format(source.data)
    if fmt not in (SourceFormat.CLAUDE_CODE, SourceFormat.EMPTY):
        finding = Finding(FindingCode.UNSUPPORTED_FORMAT, Severity.INFO, ids=(fmt.value,))
        return _early(
            label,
            command,
            SessionStatus.UNSUPPORTED_FORMAT,
            finding,
            session_block(label, source, None, fmt, None),
        )
    index = build_index(source.data, fmt)
    graph = build_graph(index)
    topology = resolve_topology(index, graph, options)
    return Analysis(path, label, source, fmt, index, graph, topology)


def leaf_report(topology: Topology) -> dict[str, Any]:
    """The report's `leaf` section: the leaf used and what chose it."""
    return {
        "uuid": topology.leaf_uuid,
        "line": topology.leaf_line,
        "source": topology.leaf_source.value if topology.leaf_line else "none",
        "policy": topology.policy.value,
        "branch_isolation": topology.branch_isolation,
        "chain_end": topology.chain_end.value if topology.chain_end else None,
        "external_parent": topology.external_parent is not None,
        "last_prompt_check": topology.prompt_check,
        "refusal": topology.refusal,
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
