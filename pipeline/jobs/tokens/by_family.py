"""Billed slopes per model family: how each estimator fares on the sessions of each family.

A session belongs to the family its report names (`tokens.models.family`: that of most billed
turns). Per family and estimator: how many sessions have a fit, the median slope and the median
|slope - 1| (the acceptance figure of `auto`, whose fit is over what was sent); `ALL_FAMILIES`
holds the same over every session that names a family.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any, Final

from pipeline.report.sections import Section
from pipeline.report.tokens import TokensMeasure

__all__ = ["ALL_FAMILIES", "FamilyFigures", "FamilyUsage", "by_family", "family_counts", "family_rows"]

ALL_FAMILIES: Final = "all"  # not a family name: `ModelFamily` holds no such member


class FamilyFigures(Section, frozen=True, kw_only=True):
    sessions: int
    median_slope: float
    median_abs_slope_error: float


class FamilyUsage(Section, frozen=True, kw_only=True):
    """One family: its sessions, and each estimator's billed slopes on them."""

    sessions: int
    estimators: dict[str, FamilyFigures]


def family_counts(measured: Sequence[TokensMeasure]) -> dict[str, int]:
    """Sessions per family (a session naming none is not counted)."""
    counts = Counter(tokens.models.family for tokens in measured if tokens.models.family is not None)
    return dict(sorted(counts.items()))


def by_family(measured: Sequence[TokensMeasure], names: Sequence[str]) -> dict[str, FamilyUsage]:
    """Per family, per estimator (in `names` order): sessions fitted, median slope and |slope - 1|."""
    members: dict[str, list[TokensMeasure]] = {}
    for tokens in measured:
        if tokens.models.family is not None:
            members.setdefault(tokens.models.family, []).append(tokens)
    result: dict[str, FamilyUsage] = {}
    if members:
        members[ALL_FAMILIES] = [tokens for group in members.values() for tokens in group]
    for family, sessions in sorted(members.items(), key=lambda kv: (kv[0] == ALL_FAMILIES, kv[0])):
        figures: dict[str, FamilyFigures] = {}
        for name in names:
            slopes = [t.usage.fits[name].slope for t in sessions if name in t.usage.fits]
            if slopes:
                figures[name] = FamilyFigures(
                    sessions=len(slopes),
                    median_slope=round(statistics.median(slopes), 4),
                    median_abs_slope_error=round(statistics.median(abs(s - 1) for s in slopes), 4),
                )
        result[family] = FamilyUsage(sessions=len(sessions), estimators=figures)
    return result


def family_rows(prefix: tuple[str, str, str], usage: dict[str, FamilyUsage]) -> Iterator[tuple[Any, ...]]:
    """CSV rows of the per-family figures (`name` is the family)."""
    level, corpus, session = prefix
    for family, entry in usage.items():
        yield level, corpus, session, "active_chain", "", family, "", "family_sessions", entry.sessions
        for name, figures in entry.estimators.items():
            for figure in ("sessions", "median_slope", "median_abs_slope_error"):
                value = getattr(figures, figure)
                yield (
                    level,
                    corpus,
                    session,
                    "active_chain",
                    "",
                    family,
                    name,
                    f"family_billed_{figure}",
                    value,
                )
