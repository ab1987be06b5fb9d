"""The slope charts: one session with a wild slope does not flatten every box into a line."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.jobs.tokens.charts import ChartData, slope_view, write_charts


def test_outliers_are_counted_at_the_edge_not_given_the_axis() -> None:
    steady = [0.9, 0.95, 1.0, 1.02, 1.05, 1.1, 1.08, 0.97]
    view = slope_view([[*steady, 40.0], [*steady, -12.0, 55.0]])
    assert view.low < 0.9 and 1.1 < view.high < 1.5  # the boxes fill the axis
    assert view.above == (1, 1) and view.below == (0, 1)


def test_the_axis_holds_slope_1_and_a_box_far_from_it() -> None:
    view = slope_view([[3.0, 3.1, 3.2, 3.3]])
    assert view.low < 1.0 and view.high > 3.3
    assert view.above == view.below == (0,)


def test_the_slope_charts_are_drawn_with_an_outlier(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    slopes = {"seed": [0.9, 1.0, 1.1, 1.05, 500.0], "calibrated": [1.0, 1.01, 0.99]}
    data = ChartData(
        sizes={"corpus": [1000, 20000]},
        size_estimator="seed",
        class_errors={"seed": {"text": 0.05}},
        reference=None,
        class_tokens={"seed": {"text": 1000}},
        slopes=slopes,
        family_slopes={"claude": slopes},
    )
    written = write_charts(data, tmp_path)
    assert {path.name for path in written} >= {"billed-slopes.png", "billed-slopes-by-family.png"}
    assert all(path.stat().st_size > 0 for path in written)
