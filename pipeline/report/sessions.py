"""Session reports and the fleet summary: JSON a machine can read, with no transcript text.

Everything here is built from codes, counts, line numbers, digests and identifiers. The
renderers are pure; writing the files is `publish.write_json_atomic`'s job.
"""

from __future__ import annotations

import math
import resource
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from pipeline.core.partition import LineSet, Partition
from pipeline.findings import Finding
from pipeline.vocabulary import FindingCode, SessionStatus, Severity

__all__ = [
    "FINDINGS_PER_CODE",
    "SESSION_SCHEMA",
    "SUMMARY_SCHEMA",
    "SessionOutcome",
    "findings_report",
    "peak_rss_mb",
    "session_status",
    "summary_report",
]

SESSION_SCHEMA: Final = "session-compaction/session-report/v1"
SUMMARY_SCHEMA: Final = "session-compaction/fleet-summary/v1"
FINDINGS_PER_CODE: Final = 200  # a file with a million bad lines still gets a readable report


@dataclass(frozen=True, slots=True)
class SessionOutcome:
    """What a worker hands back for one session: its status and JSON-ready report."""

    label: str
    status: SessionStatus
    report: Mapping[str, Any]
    error: str | None = None  # a traceback for the log, never for the report

    @property
    def failed(self) -> bool:
        """Whether this session makes the run exit non-zero."""
        return self.status.is_failure


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MiB (benchmarks read it from reports)."""
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


def findings_report(findings: Iterable[Finding]) -> dict[str, Any]:
    """Findings in report order, capped per code, with counts by severity."""
    ordered = sorted(findings, key=lambda f: (f.line or 0, f.code.value))
    kept: list[dict[str, object]] = []
    per_code: Counter[FindingCode] = Counter()
    truncated: Counter[str] = Counter()
    severities: Counter[str] = Counter()
    for finding in ordered:
        severities[finding.severity.value] += 1
        per_code[finding.code] += 1
        if per_code[finding.code] > FINDINGS_PER_CODE:
            truncated[finding.code.value] += 1
        else:
            kept.append(finding.to_report())
    return {
        "findings": kept,
        "findings_truncated": dict(truncated),
        "counts": {severity.value: severities[severity.value] for severity in Severity},
    }


def line_set_report(lines: Iterable[int]) -> dict[str, object]:
    """`{count, digest}` of any line set."""
    return LineSet(frozenset(lines)).to_report()


def partition_report(partition: Partition) -> dict[str, object]:
    """The six sets as `{count, digest}`."""
    return partition.to_report()


def _resume_checks(reports: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Verdicts of `compress --verify-resume` and what Claude Code sends in total, before and after."""
    checks = [report["resume_check"] for report in reports if report.get("resume_check")]
    if not checks:
        return None
    sent: dict[str, Counter[str]] = {"original": Counter(), "compacted": Counter()}
    for check in checks:
        sizes = check.get("sent") or {}
        if sizes.get("original") and sizes.get("compacted"):
            for side, totals in sent.items():
                totals.update(sizes[side])
    elapsed = sorted(float(check.get("elapsed_ms") or 0) for check in checks)
    return {
        "by_verdict": dict(sorted(Counter(str(check.get("verdict")) for check in checks).items())),
        "sent_by_claude_code": {side: dict(sorted(values.items())) for side, values in sent.items()},
        "cost_ms": {
            "total": round(sum(elapsed), 1),  # summed over sessions; they ran concurrently under --jobs
            "median": _quantile(elapsed, 0.5),
            "p90": _quantile(elapsed, 0.9),
        },
    }


def _quantile(ordered: list[float], share: float) -> float:
    """Nearest-rank quantile of sorted values (0 for none)."""
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


def summary_report(
    outcomes: Mapping[str, SessionOutcome],
    *,
    command: str,
    options: Mapping[str, Any],
    report_paths: Mapping[str, str],
    elapsed_ms: float,
    roots: Iterable[str],
) -> dict[str, Any]:
    """The fleet summary: totals by status, by strict verdict and by leaf source."""
    labelled = dict(outcomes)
    sessions = list(labelled.values())
    by_status = Counter(outcome.status.value for outcome in sessions)
    strict = Counter(
        str(outcome.report.get("strict_status"))
        for outcome in sessions
        if outcome.report.get("strict_status")
    )
    sources = Counter(
        str((outcome.report.get("leaf") or {}).get("source"))
        for outcome in sessions
        if outcome.report.get("leaf")
    )
    total_bytes = sum(int((outcome.report.get("session") or {}).get("bytes") or 0) for outcome in sessions)
    tokens = sum(int((outcome.report.get("tokens") or {}).get("session") or 0) for outcome in sessions)
    resume = _resume_checks([outcome.report for outcome in sessions])
    return {
        "schema": SUMMARY_SCHEMA,
        "command": command,
        "roots": list(roots),
        "options": dict(options),
        "sessions": len(sessions),
        "failed": sum(outcome.failed for outcome in sessions),
        "by_status": dict(sorted(by_status.items())),
        "by_strict_status": dict(sorted(strict.items())),
        "by_leaf_source": dict(sorted(sources.items())),
        "bytes": total_bytes,
        "seed_tokens": tokens,
        "elapsed_ms": round(elapsed_ms, 1),
        **({"resume_checks": resume} if resume else {}),
        "reports": [
            {"session": label, "status": outcome.status.value, "report": report_paths.get(label)}
            for label, outcome in sorted(labelled.items())
        ],
    }
