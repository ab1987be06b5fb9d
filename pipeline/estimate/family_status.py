"""Whether `auto`'s constants for a model family were fitted on its own sessions, or borrowed.

`scripts/fit-calibration --families` writes, beside the constants, how many sessions of each
family the fit held and the minimums it applied (`family_calibration.FAMILY_SESSIONS`,
`FAMILY_MINIMUMS`). A family with enough sessions has its own framing; one with fewer has only
a scale fitted over the fallback family's framing; one with fewer still (or none) takes the
fallback's constants unscaled. Reports say which, so a figure is never read as fitted when it
was borrowed.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.estimate import family_calibration
from pipeline.reasons import ReasonCode

__all__ = ["FamilyFitReason", "FamilyFitStatus", "fit_status"]


class FamilyFitReason(ReasonCode):
    """Why a model family's `auto` constants are not (all) its own."""

    SCALE_ONLY = "scale-only"  # enough sessions for a scale, too few for a framing: the fallback's, scaled
    TOO_FEW_SESSIONS = "too-few-sessions"  # too few even for a scale: the fallback's constants, unscaled


@dataclass(frozen=True, slots=True)
class FamilyFitStatus:
    """How a family's constants came about: sessions in the fit, fitted or borrowed, and from whom."""

    family: str
    sessions: int
    fitted: bool  # some constant (framing or scale) was fitted on the family's own sessions
    reason: FamilyFitReason | None  # why not everything is its own; None when it is
    borrowed_from: str | None  # the family whose framing it takes


def fit_status(family: str) -> FamilyFitStatus:
    """The status of `family` in the shipped fit (a family the fit never saw held 0 sessions)."""
    sessions = family_calibration.FAMILY_SESSIONS.get(family, 0)
    minimums = family_calibration.FAMILY_MINIMUMS
    fallback = family_calibration.FALLBACK_FAMILY
    if family == fallback or sessions >= minimums["framing"]:
        return FamilyFitStatus(family, sessions, fitted=True, reason=None, borrowed_from=None)
    if sessions >= minimums["scale"]:
        return FamilyFitStatus(family, sessions, True, FamilyFitReason.SCALE_ONLY, fallback)
    return FamilyFitStatus(family, sessions, False, FamilyFitReason.TOO_FEW_SESSIONS, fallback)
