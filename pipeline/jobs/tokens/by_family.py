"""Billed slopes per model family: how each estimator fares on the sessions of each family.

A session belongs to the family its report names (`tokens.models.family`, or a session read
through the seam `tokens.billed_fit.family`: that of most billed turns) and to the client version
that wrote its newest lines (the highest `version` its records carry). A session read through the
seam is measured by its `billed_fit` as its `auto`: its family's tokenizer over what its client
sent, framed as its format models what the provider reads (Codex's per item, with the turn's
reasoning). Per family and estimator: how many sessions have a fit, the median slope, the median
|slope - 1| (the acceptance figure of `auto`, whose fit is over what was sent) and its spread
(quartiles and 90th percentile), the same per client version, and, with `auto`, whether the
family's constants were fitted on its own sessions or borrowed (`family_status`).
`ALL_FAMILIES` holds the same over every session that names a family.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from msgspec import UNSET, UnsetType

from pipeline.estimate.estimators import EstimatorName
from pipeline.estimate.family_status import FamilyFitReason, fit_status
from pipeline.report.resume_context import ContextTokens
from pipeline.report.sections import Section
from pipeline.report.tokens import TokensMeasure

__all__ = [
    "ALL_FAMILIES",
    "UNKNOWN_VERSION",
    "FamilyCalibration",
    "FamilyFigures",
    "FamilyUsage",
    "SlopeSample",
    "by_family",
    "family_counts",
    "newest_version",
    "version_key",
]

ALL_FAMILIES: Final = "all"  # not a family name: `ModelFamily` holds no such member
UNKNOWN_VERSION: Final = "unknown"  # a session whose records name no client version
_NUMBERS: Final = re.compile(r"\d+")


class FamilyFigures(Section, frozen=True, kw_only=True):
    """One estimator's billed slopes on a set of sessions: count, median, |slope - 1| and its spread."""

    sessions: int
    median_slope: float
    median_abs_slope_error: float
    abs_slope_error_q1: float
    abs_slope_error_q3: float
    abs_slope_error_p90: float


class FamilyCalibration(Section, frozen=True, kw_only=True):
    """Whether `auto`'s constants for the family are its own: sessions in the fit, and if not, why."""

    fit_sessions: int
    fitted: bool
    reason: FamilyFitReason | UnsetType = UNSET
    borrowed_from: str | UnsetType = UNSET


class FamilyUsage(Section, frozen=True, kw_only=True):
    """One family: its sessions, each estimator's billed slopes on them, and per client version."""

    sessions: int
    estimators: dict[str, FamilyFigures]
    client_versions: dict[str, dict[str, FamilyFigures]]  # client version -> estimator -> figures
    calibration: FamilyCalibration | UnsetType = UNSET  # with `auto`, for a family (not `all`)


def newest_version(versions: Sequence[str]) -> str:
    """The highest client version (compared number by number), `UNKNOWN_VERSION` without one."""
    if not versions:
        return UNKNOWN_VERSION
    return max(versions, key=version_key)


@dataclass(frozen=True, slots=True)
class SlopeSample:
    """One session's billed slopes: its family, the client version of its newest lines, and the
    slope of each estimator fitted against its bills."""

    family: str | None
    version: str
    slopes: Mapping[str, float]
    own_framing: bool = False  # its format fits its own framing (not `auto`'s family constants)

    @classmethod
    def of_chain(cls, tokens: TokensMeasure, version: str) -> SlopeSample:
        """An active-chain session: every estimator's fit."""
        slopes = {name: fit.slope for name, fit in tokens.usage.fits.items()}
        return cls(tokens.models.family, version, slopes)

    @classmethod
    def of_context(cls, tokens: ContextTokens, version: str) -> SlopeSample | None:
        """A session read through the seam: its `billed_fit` as its `auto`; None without one."""
        fitted = tokens.billed_fit
        if isinstance(fitted, UnsetType):
            return None
        return cls(fitted.family, version, {EstimatorName.AUTO.value: fitted.fit.slope}, own_framing=True)


def family_counts(samples: Sequence[SlopeSample]) -> dict[str, int]:
    """Sessions per family (a session naming none is not counted)."""
    counts = Counter(sample.family for sample in samples if sample.family is not None)
    return dict(sorted(counts.items()))


def by_family(samples: Sequence[SlopeSample], names: Sequence[str]) -> dict[str, FamilyUsage]:
    """Per family, per estimator (in `names` order): sessions fitted, median slope, |slope - 1| and
    its spread, overall and per client version."""
    members: dict[str, list[SlopeSample]] = {}
    for sample in samples:
        if sample.family is not None:
            members.setdefault(sample.family, []).append(sample)
    result: dict[str, FamilyUsage] = {}
    if members:
        members[ALL_FAMILIES] = [member for group in members.values() for member in group]
    for family, sessions in sorted(members.items(), key=lambda kv: (kv[0] == ALL_FAMILIES, kv[0])):
        by_version: dict[str, list[SlopeSample]] = {}
        for sample in sessions:
            by_version.setdefault(sample.version, []).append(sample)
        result[family] = FamilyUsage(
            sessions=len(sessions),
            estimators=_figures(sessions, names),
            client_versions={
                version: _figures(group, names)
                for version, group in sorted(by_version.items(), key=lambda kv: version_key(kv[0]))
            },
            calibration=(  # whose constants `auto` used on the family's active-chain sessions
                _calibration(family)
                if EstimatorName.AUTO.value in names and not all(s.own_framing for s in sessions)
                else UNSET
            ),
        )
    return result


def version_key(version: str) -> tuple[tuple[int, ...], str]:
    """Client versions in order, number by number (`2.0.10` after `2.0.9`)."""
    return tuple(int(n) for n in _NUMBERS.findall(version)), version


def _figures(sessions: Sequence[SlopeSample], names: Sequence[str]) -> dict[str, FamilyFigures]:
    figures: dict[str, FamilyFigures] = {}
    for name in names:
        slopes = [s.slopes[name] for s in sessions if name in s.slopes]
        if not slopes:
            continue
        errors = sorted(abs(s - 1) for s in slopes)
        # Deciles need two values; one session is its own spread.
        deciles = statistics.quantiles(errors, n=20, method="inclusive") if len(errors) > 1 else errors * 19
        figures[name] = FamilyFigures(
            sessions=len(slopes),
            median_slope=round(statistics.median(slopes), 4),
            median_abs_slope_error=round(statistics.median(errors), 4),
            abs_slope_error_q1=round(deciles[4], 4),
            abs_slope_error_q3=round(deciles[14], 4),
            abs_slope_error_p90=round(deciles[17], 4),
        )
    return figures


def _calibration(family: str) -> FamilyCalibration | UnsetType:
    if family == ALL_FAMILIES:
        return UNSET
    status = fit_status(family)
    return FamilyCalibration(
        fit_sessions=status.sessions,
        fitted=status.fitted,
        reason=status.reason if status.reason is not None else UNSET,
        borrowed_from=status.borrowed_from if status.borrowed_from is not None else UNSET,
    )
