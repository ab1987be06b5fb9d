"""Whether a family's `auto` constants are its own: read from what the shipped fit recorded."""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path

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


def test_the_fit_writes_each_familys_sessions_and_its_minimums_beside_the_constants(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("_fit_families", root / "scripts" / "_fit_families.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    figures = {
        "claude_sessions": 12.0,
        "claude_abs_slope_error": 0.04,
        "deepseek_sessions": 2.0,
        "all_sessions": 14.0,
    }
    source = script.render({"claude": (2, 90)}, {"claude": 1.0}, figures, 14)
    written = types.ModuleType("written")
    exec(compile(source, "family_calibration.py", "exec"), written.__dict__)
    assert dict(written.FAMILY_SESSIONS) == {"claude": 12, "deepseek": 2}
    assert dict(written.FAMILY_MINIMUMS) == {
        "framing": script.MIN_FRAMING_SESSIONS,
        "scale": script.MIN_SCALE_SESSIONS,
    }
    # Read back, the family below the minimums says it borrowed Claude's constants.
    for name in ("FAMILY_SESSIONS", "FAMILY_MINIMUMS", "FALLBACK_FAMILY"):
        monkeypatch.setattr(family_calibration, name, getattr(written, name))
    status = fit_status("deepseek")
    assert (status.sessions, status.fitted, status.reason) == (2, False, FamilyFitReason.TOO_FEW_SESSIONS)
