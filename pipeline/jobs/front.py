"""The front every job shares: read the file, detect its format, index it, choose the topology.

`open_session` returns either an `Analysis` to continue from, or the outcome of a file that goes
no further (unreadable, or not a Claude Code transcript). Every job starts here. A job that
handles the formats read through the seam (`agents/registry.py`) passes its `ContextJob`, which
such a session is handed to with its format's plug-in; for the others it stays
`unsupported-format`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pipeline.agents.protocol import ChainFormat, ContextFormat
from pipeline.agents.registry import CHAIN_FORMATS, CHAIN_PARTS, context_format
from pipeline.core.graph import UuidGraph, build_graph
from pipeline.core.index import LineIndex, build_index
from pipeline.core.topology.select import Topology, TopologyOptions, resolve_topology
from pipeline.errors import NotARegularFile, UnreadableSource
from pipeline.findings import Finding
from pipeline.formats.detect import detect_format, why_not_a_transcript
from pipeline.formats.line_guard import LineLimits
from pipeline.read.compressed import Compression
from pipeline.read.load import SourceBytes, read_source
from pipeline.report.documents import BriefReport, NotATranscript, Outcome, Unreadable, Unsupported
from pipeline.report.sections import SessionSection, findings_section, session_section
from pipeline.settings import SweepSettings
from pipeline.vocabulary import FindingCode, SessionKind, SessionStatus, Severity, SourceFormat

__all__ = [
    "Analysis",
    "ContextJob",
    "open_session",
    "open_source",
    "store_unreadable",
    "topology_options",
    "unsafe_key",
]

ContextJob = Callable[[ContextFormat, str, SourceBytes], "Outcome"]
"""What a job does with a session read through the seam: its format's plug-in, label and bytes
in, its outcome out."""


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
        if self.graph.uuid_lines and not self.graph.main_rows:
            return SessionKind.SUBAGENT
        return SessionKind.MAIN

    @property
    def chain_format(self) -> ChainFormat:
        """The format's own parts in a compaction: its bounding, records and stamps."""
        return CHAIN_PARTS[self.format]

    def session(self) -> SessionSection:
        """The report's `session` section."""
        versions = self.index.client_versions()
        return session_section(self.label, self.source, versions, len(self.index), self.format, self.kind)

    def tokens_of(self, lines: tuple[int, ...]) -> int:
        """Seed-estimated tokens of some lines."""
        return self.index.tokens(lines)


def topology_options(sweep: SweepSettings, resume_leaf: str | None) -> TopologyOptions:
    """The leaf-choosing part of the settings."""
    return TopologyOptions(sweep.leaf_policy, resume_leaf, sweep.max_post_last_prompt_extension)


def _line_count(data: bytes) -> int:
    return data.count(b"\n") + (not data.endswith(b"\n"))


def _not_processed(
    label: str, source: SourceBytes, fmt: SourceFormat, *, command: str, per_code: int
) -> Outcome:
    """Another agent's transcript, or a file that is nobody's transcript (saying what it is)."""
    known = fmt not in (SourceFormat.EMPTY, SourceFormat.UNKNOWN)
    if known:
        finding = Finding(FindingCode.UNSUPPORTED_FORMAT, Severity.INFO, ids=(fmt.value,))
        status = SessionStatus.UNSUPPORTED_FORMAT
    else:
        why = why_not_a_transcript(source.data)
        finding = Finding(FindingCode.NOT_A_TRANSCRIPT, Severity.WARNING, ids=(why.value,))
        status = SessionStatus.NOT_A_TRANSCRIPT
    report = BriefReport(
        command=command,
        session=session_section(label, source, (), _line_count(source.data), fmt, None),
        status=status,
        findings=findings_section([finding], per_code=per_code),
    )
    return Unsupported(label, report) if known else NotATranscript(label, report)


def _brief(
    label: str, status: SessionStatus, finding: Finding, *, command: str, per_code: int
) -> BriefReport:
    """The report of a session that was never read: its label, status and the one finding why."""
    return BriefReport(
        command=command,
        session=SessionSection(label=label),
        status=status,
        findings=findings_section([finding], per_code=per_code),
    )


def unsafe_key(label: str, *, command: str, per_code: int) -> Outcome:
    """An object key that cannot be mirrored under a report or output directory: never read."""
    finding = Finding(FindingCode.OBJECT_KEY_UNSAFE, Severity.WARNING)
    return NotATranscript(
        label, _brief(label, SessionStatus.NOT_A_TRANSCRIPT, finding, command=command, per_code=per_code)
    )


def store_unreadable(label: str, reason: str, *, command: str, per_code: int) -> Outcome:
    """A store (a file holding several sessions) that could not give this session: why, no text."""
    finding = Finding(FindingCode.UNREADABLE, Severity.ERROR, ids=(reason,))
    return Unreadable(
        label, _brief(label, SessionStatus.UNREADABLE, finding, command=command, per_code=per_code)
    )


def open_session(
    path: Path,
    label: str,
    options: TopologyOptions,
    *,
    command: str,
    per_code: int,
    limits: LineLimits,
    contexts: ContextJob | None = None,
) -> Analysis | Outcome:
    """Read, detect, index and resolve; or the outcome of a file that goes no further."""
    try:
        source = read_source(path)
    except NotARegularFile as exc:  # skipped, not failed: a pipe or socket is nobody's session
        finding = Finding(FindingCode.NOT_A_REGULAR_FILE, Severity.WARNING, ids=(exc.kind,))
        status = SessionStatus.NOT_A_TRANSCRIPT
        return NotATranscript(label, _brief(label, status, finding, command=command, per_code=per_code))
    except UnreadableSource as exc:
        finding = Finding(FindingCode.UNREADABLE, Severity.ERROR, ids=(exc.reason,))
        status = SessionStatus.UNREADABLE
        return Unreadable(label, _brief(label, status, finding, command=command, per_code=per_code))
    return open_source(
        label, source, options, command=command, per_code=per_code, limits=limits, contexts=contexts
    )


def open_source(
    label: str,
    source: SourceBytes,
    options: TopologyOptions,
    *,
    command: str,
    per_code: int,
    limits: LineLimits,
    contexts: ContextJob | None = None,
) -> Analysis | Outcome:
    """Detect, index and resolve bytes already read; or the outcome of a file that goes no further."""
    fmt = detect_format(source.data, source.path)
    plain = source.compression is Compression.NONE
    agent = context_format(fmt)
    if agent is not None and contexts is not None and (plain or agent.compressed_sessions):
        return contexts(agent, label, source)
    # A client that never compresses its sessions leaves a compressed one as it is: never
    # rewritten plain under its compressed name.
    if fmt not in CHAIN_FORMATS or not plain:
        return _not_processed(label, source, fmt, command=command, per_code=per_code)
    index = build_index(source.data, fmt, limits)
    graph = build_graph(index)
    topology = resolve_topology(index, graph, options)
    return Analysis(source.path, label, source, fmt, index, graph, topology)
