"""Whether a family's `auto` constants are its own: read from what the shipped fit recorded."""

from __future__ import annotations

import pytest

from pipeline.estimate import family_calibration
from pipeline.estimate.families import ModelFamily
from pipeline.estimate.family_status import FamilyFitReason, fit_status


def test_the_fallback_family_is_fitted_on_its_own_sessions() -> None:
    status = fit_status(family_calibration.FALLBACK_FAMILY)
    assert status.fitted and status.reason is None and status.borrowed_from is None
    assert status.sessions >= family_calibration.FAMILY_MINIMUMS["framing"]


def test_a_family_the_fit_never_saw_says_whose_constants_it_borrows() -> None:
    status = fit_status(ModelFamily.GLM.value)
    assert (status.sessions, status.fitted) == (0, False)
    assert status.reason is FamilyFitReason.TOO_FEW_SESSIONS
    assert status.borrowed_from == family_calibration.FALLBACK_FAMILY


@pytest.mark.parametrize(
    ("sessions", "fitted", "reason"),
    [
        (2, False, FamilyFitReason.TOO_FEW_SESSIONS),
        (3, True, FamilyFitReason.SCALE_ONLY),
        (9, True, FamilyFitReason.SCALE_ONLY),
        (10, True, None),
    ],
)
def test_the_fit_minimums_decide_between_own_scaled_and_borrowed(
    sessions: int, fitted: bool, reason: FamilyFitReason | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The minimums the fit applied are the ones written beside its constants.
    monkeypatch.setattr(family_calibration, "FAMILY_MINIMUMS", {"framing": 10, "scale": 3})
    monkeypatch.setattr(family_calibration, "FAMILY_SESSIONS", {"deepseek": sessions})
    status = fit_status("deepseek")
    assert (status.fitted, status.reason) == (fitted, reason)
    assert status.borrowed_from == (None if reason is None else family_calibration.FALLBACK_FAMILY)
