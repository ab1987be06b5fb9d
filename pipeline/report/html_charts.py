"""Inline SVG charts of the HTML fleet page: horizontal bars, grouped bars, billed-slope boxes.

Each chart is one `<svg>` string sized by its content, with a `<title>` and text labels; no
script, no external reference. Every label is escaped here; values are plain numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Final

__all__ = ["Bar", "BarGroup", "SlopeBox", "bar_chart", "grouped_bar_chart", "slope_chart"]

LABEL_WIDTH: Final = 220  # px for the labels left of the bars: an agent, a status, a probe class
PLOT_WIDTH: Final = 440
ROW: Final = 22  # px per bar
LABEL_CHARS: Final = 34  # a longer label is cut (its whole text stays in the tables and tooltips)
SERIES_CLASSES: Final = ("s0", "s1", "s2", "s3")  # the page's CSS colours series by these


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    value: float
    shown: str  # the value as written beside the bar


@dataclass(frozen=True, slots=True)
class BarGroup:
    """One label's bars, one per series (None: the series has no value for it)."""

    label: str
    values: tuple[float | None, ...]
    shown: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SlopeBox:
    """One estimator's billed slopes: its quartiles and every session's slope."""

    label: str
    q1: float
    median: float
    q3: float
    slopes: tuple[float, ...]


def _short(label: str) -> str:
    return label if len(label) <= LABEL_CHARS else "…" + label[-(LABEL_CHARS - 1) :]


def _svg(title: str, height: int, body: list[str]) -> str:
    width = LABEL_WIDTH + PLOT_WIDTH + 90
    return (
        f'<svg class="chart" role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
        f"<title>{escape(title)}</title>{''.join(body)}</svg>"
    )


def _label(y: float, text: str) -> str:
    return (
        f'<text x="{LABEL_WIDTH - 8}" y="{y:.1f}" text-anchor="end" dominant-baseline="middle">'
        f"<title>{escape(text)}</title>{escape(_short(text))}</text>"
    )


def _bar(y: float, value: float, top: float, css: str, shown: str, height: float) -> str:
    length = 0.0 if top <= 0 else PLOT_WIDTH * max(value, 0.0) / top
    return (
        f'<rect class="{css}" x="{LABEL_WIDTH}" y="{y:.1f}" width="{length:.1f}" height="{height:.1f}"/>'
        f'<text class="value" x="{LABEL_WIDTH + length + 4:.1f}" y="{y + height / 2:.1f}" '
        f'dominant-baseline="middle">{escape(shown)}</text>'
    )


def bar_chart(title: str, bars: Sequence[Bar]) -> str:
    """One bar per label, lengths to scale from 0 to the largest value."""
    top = max((bar.value for bar in bars), default=0.0)
    body = []
    for index, bar in enumerate(bars):
        y = 6 + index * ROW
        body.append(_label(y + ROW / 2 - 2, bar.label))
        body.append(_bar(y, bar.value, top, SERIES_CLASSES[0], bar.shown, ROW - 6))
    return _svg(title, 12 + len(bars) * ROW, body)


def grouped_bar_chart(title: str, series: Sequence[str], groups: Sequence[BarGroup]) -> str:
    """Per label, one thin bar per series (a legend names them), all to one scale."""
    top = max((value for g in groups for value in g.values if value is not None), default=0.0)
    band = ROW * max(len(series), 1) * 0.6 + 10
    legend = [
        f'<rect class="{SERIES_CLASSES[i % len(SERIES_CLASSES)]}" x="{LABEL_WIDTH + i * 130}" y="4" '
        f'width="12" height="12"/><text x="{LABEL_WIDTH + i * 130 + 16}" y="14">{escape(name)}</text>'
        for i, name in enumerate(series)
    ]
    body = list(legend)
    for index, group in enumerate(groups):
        y0 = 26 + index * band
        body.append(_label(y0 + band / 2 - 5, group.label))
        for slot, (value, shown) in enumerate(zip(group.values, group.shown, strict=True)):
            if value is not None:
                css = SERIES_CLASSES[slot % len(SERIES_CLASSES)]
                body.append(_bar(y0 + slot * ROW * 0.6, value, top, css, shown, ROW * 0.6 - 2))
    return _svg(title, int(32 + len(groups) * band), body)


def _axis(boxes: Sequence[SlopeBox]) -> tuple[float, float]:
    """The slope range shown: every box and slope 1, and the sessions' slopes unless one is far out."""
    ends = [1.0, *(b.q1 for b in boxes), *(b.q3 for b in boxes)]
    low, high = min(ends), max(ends)
    reach = max(high - low, 0.2)
    dots = [s for b in boxes for s in b.slopes if math.isfinite(s) and low - reach <= s <= high + reach]
    low, high = min([low, *dots]), max([high, *dots])
    margin = max(high - low, 0.1) * 0.05
    return low - margin, high + margin


def slope_chart(title: str, boxes: Sequence[SlopeBox]) -> str:
    """A box (quartiles, median) per estimator over its sessions' billed slopes, each session a dot
    (slopes far outside the boxes are left out of the axis and counted), and the line at slope 1."""
    low, high = _axis(boxes)

    def x(value: float) -> float:
        return LABEL_WIDTH + PLOT_WIDTH * (value - low) / (high - low)

    height = 40 + len(boxes) * ROW * 1.6
    one = x(1.0)
    body = [
        f'<line class="one" x1="{one:.1f}" x2="{one:.1f}" y1="4" y2="{height - 22:.1f}"/>',
        f'<text x="{one:.1f}" y="{height - 6:.1f}" text-anchor="middle">slope 1</text>',
        f'<text x="{LABEL_WIDTH}" y="{height - 6:.1f}">{low:.2f}</text>',
        f'<text x="{LABEL_WIDTH + PLOT_WIDTH}" y="{height - 6:.1f}" text-anchor="end">{high:.2f}</text>',
    ]
    for index, box in enumerate(boxes):
        y = 10 + index * ROW * 1.6
        shown = [s for s in box.slopes if math.isfinite(s) and low <= s <= high]
        outside = len(box.slopes) - len(shown)
        off = f" (+{outside} off axis)" if outside else ""
        body.append(_label(y + ROW / 2, box.label))
        body.append(
            f'<rect class="box" x="{x(box.q1):.1f}" y="{y:.1f}" width="{max(x(box.q3) - x(box.q1), 1):.1f}" '
            f'height="{ROW:.1f}"/><line class="median" x1="{x(box.median):.1f}" x2="{x(box.median):.1f}" '
            f'y1="{y:.1f}" y2="{y + ROW:.1f}"/>'
        )
        body.extend(f'<circle class="dot" cx="{x(s):.1f}" cy="{y + ROW / 2:.1f}" r="2.5"/>' for s in shown)
        body.append(
            f'<text class="value" x="{LABEL_WIDTH + PLOT_WIDTH + 6}" y="{y + ROW / 2:.1f}" '
            f'dominant-baseline="middle">{box.median:.3f}{off}</text>'
        )
    return _svg(title, int(height), body)
