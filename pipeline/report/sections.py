"""The sections every session report is made of, as frozen typed values.

A report is built from codes, counts, line numbers, digests and identifiers only. Field names are
the report's keys; a member left `UNSET` is absent from the JSON (`render.py`), one set to None
is written as null.
"""

from __future__ import annotations

import resource
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Final

import msgspec
from msgspec import UNSET, UnsetType

from pipeline.core.partition import LineSet, Partition, line_digest
from pipeline.findings import REASONS, Finding
from pipeline.read.load import SourceBytes
from pipeline.vocabulary import FindingCode, PartitionSet, SessionKind, SessionStatus, Severity, SourceFormat

__all__ = [
    "SESSION_SCHEMA",
    "ExcludedSection",
    "FindingEntry",
    "FindingsSection",
    "LineSetSection",
    "PartitionSection",
    "SessionSection",
    "Timing",
    "finding_entry",
    "findings_section",
    "line_set",
    "partition_section",
    "peak_rss_mb",
    "session_section",
    "session_status",
]

SESSION_SCHEMA: Final = "session-compaction/session-report/v1"


class Section(msgspec.Struct, frozen=True, kw_only=True):
    """Base of every report section (frozen; fields are report keys)."""


class SessionSection(Section, frozen=True, kw_only=True):
    """Which file: label, kind, digest, size, format, and the client versions that wrote it."""

    label: str
    kind: SessionKind | UnsetType | None = UNSET
    sha256: str | UnsetType = UNSET
    bytes: int | UnsetType = UNSET
    lines: int | UnsetType = UNSET
    format: SourceFormat | UnsetType = UNSET
    client_versions: list[str] | UnsetType = UNSET


class LineSetSection(Section, frozen=True, kw_only=True):
    """A set of lines as reports show it: its size and a digest of its numbers."""

    count: int
    digest: str


class ExcludedSection(Section, frozen=True, kw_only=True):
    """Why uuid records off the chain are off it."""

    pre_compaction: LineSetSection
    sidechain: LineSetSection
    after_pointer: LineSetSection
    rewound: LineSetSection


class PartitionSection(Section, frozen=True, kw_only=True):
    """The six disjoint sets every line lands in, each as count and digest."""

    summary: LineSetSection
    raw_keep: LineSetSection
    side_keep: LineSetSection
    control_projection: LineSetSection
    excluded_branch: LineSetSection
    excluded_unattributed: LineSetSection


class FindingEntry(Section, frozen=True, kw_only=True):
    """One finding: code, severity, the fixed reason for its code, and where."""

    code: FindingCode
    severity: Severity
    reason: str
    line: int | UnsetType = UNSET
    uuid: str | UnsetType = UNSET
    count: int | UnsetType = UNSET
    ids: list[str] | UnsetType = UNSET


class FindingsSection(Section, frozen=True, kw_only=True):
    """Findings in report order, capped per code, with counts by severity."""

    findings: list[FindingEntry]
    findings_truncated: dict[str, int]
    counts: dict[str, int]


class Timing(Section, frozen=True, kw_only=True):
    """Where a session's time went, and the worker's peak memory."""

    analyze: float | UnsetType = UNSET
    total: float
    worker_peak_rss_mb: float


_PROC_STATUS: Final = Path("/proc/self/status")


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MiB (benchmarks read it from reports).

    Linux's own high-water mark where it has one: `ru_maxrss` also holds the peak of the process
    this one was executed from, which Linux carries over an exec (a worker a large process
    starts would report that process's size).
    """
    try:
        with _PROC_STATUS.open() as status:
            high = next((line for line in status if line.startswith("VmHWM:")), None)
    except OSError:
        high = None
    if high is not None:
        return round(int(high.split()[1]) / 1024, 1)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024, 1)


def session_status(findings: Iterable[Finding], *, refused: bool) -> SessionStatus:
    """Refused beats invalid beats warnings beats valid."""
    if refused:
        return SessionStatus.REFUSED
    severities = {finding.severity for finding in findings}
    if Severity.ERROR in severities:
        return SessionStatus.INVALID
    if Severity.WARNING in severities:
        return SessionStatus.WARNINGS
    return SessionStatus.VALID


def finding_entry(finding: Finding) -> FindingEntry:
    """One finding as a report lists it (absent members left out)."""
    return FindingEntry(
        code=finding.code,
        severity=finding.severity,
        reason=REASONS[finding.code],
        line=finding.line if finding.line is not None else UNSET,
        uuid=finding.uuid if finding.uuid is not None else UNSET,
        count=finding.count if finding.count != 1 else UNSET,
        ids=list(finding.ids) if finding.ids else UNSET,
    )


def findings_section(findings: Iterable[Finding], *, per_code: int) -> FindingsSection:
    """Findings in report order, at most `per_code` of one code listed, with counts by severity."""
    ordered = sorted(findings, key=lambda f: (f.line or 0, f.code.value))
    kept: list[FindingEntry] = []
    listed: Counter[FindingCode] = Counter()
    truncated: Counter[str] = Counter()
    severities: Counter[str] = Counter()
    for finding in ordered:
        severities[finding.severity.value] += 1
        listed[finding.code] += 1
        if listed[finding.code] > per_code:
            truncated[finding.code.value] += 1
        else:
            kept.append(finding_entry(finding))
    counts = {severity.value: severities[severity.value] for severity in Severity}
    return FindingsSection(findings=kept, findings_truncated=dict(truncated), counts=counts)


def line_set(lines: Iterable[int]) -> LineSetSection:
    """`{count, digest}` of any set of 1-based lines."""
    unique = frozenset(lines)
    return LineSetSection(count=len(unique), digest=line_digest(unique))


def _set(line_set_value: LineSet) -> LineSetSection:
    return LineSetSection(count=line_set_value.count, digest=line_set_value.digest)


def partition_section(partition: Partition) -> PartitionSection:
    """The six sets as count and digest."""
    return PartitionSection(**{name.value: _set(partition[name]) for name in PartitionSet})


def session_section(
    label: str,
    source: SourceBytes,
    versions: Iterable[str],
    lines: int,
    fmt: SourceFormat,
    kind: SessionKind | None,
) -> SessionSection:
    """The `session` section of a file that was read."""
    return SessionSection(
        label=label,
        kind=kind,
        sha256=source.sha256,
        bytes=source.size,
        lines=lines,
        format=fmt,
        client_versions=sorted(set(versions)),
    )
