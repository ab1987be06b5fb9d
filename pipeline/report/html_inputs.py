"""What the HTML fleet page reads of a report directory, as typed views decoded from its JSON files.

Each view holds only the fields the page shows (msgspec skips the others), so one page reads the
summaries of `validate` and `compress` (`fleet-summary`), of `tokens` (`tokens-summary`, also
`tokens.json`) and every kind of session report. Pure: bytes in, views out; a file that does
not decode is an `UnreadableInput` naming the file and msgspec's reason, never a traceback.
"""

from __future__ import annotations

from typing import Final, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from pipeline.errors import CompactionError
from pipeline.report.fidelity import ProbeClassSection
from pipeline.report.fleet import SUMMARY_SCHEMA, ModelSpend, ReportEntry, ResumeChecks
from pipeline.report.run_totals import RunTotals
from pipeline.report.sections import Section

__all__ = [
    "TOKENS_SUMMARY_SCHEMA",
    "FamilySlopes",
    "FidelityGlance",
    "FindingGlance",
    "FleetView",
    "SessionGlance",
    "SlopeFigures",
    "TokensGroupView",
    "TokensRowView",
    "TokensView",
    "UnreadableInput",
    "fleet_view",
    "session_glance",
    "summary_schema",
    "tokens_view",
]

# The tokens summary's version, as `jobs/tokens/by_corpus.py` writes it (the report stage may not
# import a job; a test holds the two equal).
TOKENS_SUMMARY_SCHEMA: Final = "session-compaction/tokens-summary/v1"
T = TypeVar("T")


class UnreadableInput(CompactionError):
    """A report directory's file is not the document the page expected."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"{name}: {reason}")
        self.name = name
        self.reason = reason


class FleetView(Section, frozen=True, kw_only=True):
    """A `validate` or `compress` summary.json, as the page shows it."""

    schema: str
    command: str
    roots: list[str]
    sessions: int
    failed: int
    by_status: dict[str, int]
    by_strict_status: dict[str, int] = msgspec.field(default_factory=dict)
    by_leaf_source: dict[str, int] = msgspec.field(default_factory=dict)
    bytes: int
    seed_tokens: int | UnsetType = UNSET
    elapsed_ms: float
    totals: RunTotals | UnsetType = UNSET
    resume_checks: ResumeChecks | UnsetType = UNSET
    model_spend: ModelSpend | UnsetType = UNSET
    unsupported_by_agent: dict[str, int] | UnsetType = UNSET
    reports: list[ReportEntry]


class SlopeFigures(Section, frozen=True, kw_only=True):
    """One estimator's billed slopes over the sessions with usage: median and quartiles."""

    sessions: int
    turns: int
    median_slope: float
    slope_q1: float
    slope_q3: float
    median_relative_rmse: float


class FamilySlope(Section, frozen=True, kw_only=True):
    sessions: int
    median_slope: float
    median_abs_slope_error: float
    abs_slope_error_q1: float | UnsetType = UNSET  # summaries before issue 43 carry no spread
    abs_slope_error_q3: float | UnsetType = UNSET


class FamilyFit(Section, frozen=True, kw_only=True):
    fit_sessions: int
    fitted: bool
    reason: str | UnsetType = UNSET
    borrowed_from: str | UnsetType = UNSET


class FamilySlopes(Section, frozen=True, kw_only=True):
    """One model family: its sessions, each estimator's median slope on them, whose constants `auto` used."""

    sessions: int
    estimators: dict[str, FamilySlope]
    calibration: FamilyFit | UnsetType = UNSET


class TokensGroupView(Section, frozen=True, kw_only=True):
    sessions: int
    measured: int
    failed: int
    bytes: int
    totals: dict[str, dict[str, int]]  # view -> estimator -> tokens; `seed-record` -> view -> tokens
    usage: dict[str, SlopeFigures]
    by_family: dict[str, FamilySlopes]
    need_compaction: int


class _Fit(Section, frozen=True, kw_only=True):
    slope: float


class _Usage(Section, frozen=True, kw_only=True):
    fits: dict[str, _Fit]


class TokensRowView(Section, frozen=True, kw_only=True):
    """One session of a token benchmark: its label, corpus, status and billed slope per estimator."""

    label: str
    corpus: str
    status: str
    usage: _Usage | UnsetType = UNSET

    def slope(self, estimator: str) -> float | None:
        """This session's billed slope by `estimator`, when its usage was fitted."""
        if isinstance(self.usage, UnsetType) or estimator not in self.usage.fits:
            return None
        return self.usage.fits[estimator].slope


class TokensView(Section, frozen=True, kw_only=True):
    """A `tokens` summary (summary.json of its report directory, or tokens.json)."""

    schema: str
    estimators: list[str]
    elapsed_ms: float
    overall: TokensGroupView = msgspec.field(name="all")
    by_format: dict[str, TokensGroupView]
    sessions: list[TokensRowView]


class FindingGlance(Section, frozen=True, kw_only=True):
    code: str
    severity: str


class FidelityGlance(Section, frozen=True, kw_only=True):
    fidelity: float | None
    classes: dict[str, ProbeClassSection]


class _Verdict(Section, frozen=True, kw_only=True):
    verdict: str


class _Head(Section, frozen=True, kw_only=True):
    label: str
    format: str | UnsetType = UNSET


class SessionGlance(Section, frozen=True, kw_only=True):
    """What the page shows of one session report: findings, reasons, verdict, probe recall."""

    session: _Head
    status: str
    findings: list[FindingGlance] = msgspec.field(default_factory=list)
    # code -> findings over the per-code bound, counted only
    findings_truncated: dict[str, int] = msgspec.field(default_factory=dict)
    reasons: list[str] | UnsetType = UNSET
    resume_check: _Verdict | UnsetType = UNSET
    fidelity: FidelityGlance | UnsetType = UNSET

    @property
    def verdict(self) -> str | None:
        return None if isinstance(self.resume_check, UnsetType) else self.resume_check.verdict


class _Schema(Section, frozen=True, kw_only=True):
    schema: str | UnsetType = UNSET


def _decode(data: bytes, kind: type[T], name: str) -> T:
    try:
        return msgspec.json.decode(data, type=kind)
    except msgspec.DecodeError as exc:
        raise UnreadableInput(name, str(exc)) from exc


def summary_schema(data: bytes, name: str) -> str:
    """The `schema` a summary document names ('' when it names none)."""
    found = _decode(data, _Schema, name).schema
    return "" if isinstance(found, UnsetType) else found


def fleet_view(data: bytes, name: str) -> FleetView:
    """A `validate` or `compress` summary.json."""
    view = _decode(data, FleetView, name)
    if view.schema != SUMMARY_SCHEMA:
        raise UnreadableInput(name, f"schema {view.schema!r} is not {SUMMARY_SCHEMA!r}")
    return view


def tokens_view(data: bytes, name: str) -> TokensView:
    """A `tokens` summary (summary.json or tokens.json)."""
    view = _decode(data, TokensView, name)
    if view.schema != TOKENS_SUMMARY_SCHEMA:
        raise UnreadableInput(name, f"schema {view.schema!r} is not {TOKENS_SUMMARY_SCHEMA!r}")
    return view


def session_glance(data: bytes, name: str) -> SessionGlance:
    """A session report, as the page shows it."""
    return _decode(data, SessionGlance, name)
