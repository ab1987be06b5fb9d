"""PNG charts of a token benchmark: session sizes, estimator error by class, billed slopes.

matplotlib is an optional extra (`charts`), imported only here and only when charts are asked
for, with the non-interactive Agg backend. Every chart has a title, labelled axes and a log
scale where values span orders of magnitude. Inputs are plain numbers from the summary.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from pipeline.errors import CompactionError

__all__ = ["CHARTS_HINT", "ChartData", "ChartsUnavailable", "SlopeView", "slope_view", "write_charts"]

CHARTS_HINT: Final = "pip install 'session-compaction[charts]'"
DPI: Final = 120
SIZE: Final = (10.0, 5.6)  # inches: readable on a laptop screen and in a pull request
MAX_BINS: Final = 40
_EDGE_TEXT: Final = {"ha": "center", "fontsize": 8}
WHISKER: Final = 1.5  # Tukey's whiskers, matplotlib's default: beyond them a slope is an outlier


class ChartsUnavailable(CompactionError):
    """matplotlib is not installed; the message is the one-line hint."""

    def __init__(self) -> None:
        super().__init__(f"charts need matplotlib: {CHARTS_HINT}")


@dataclass(frozen=True, slots=True)
class ChartData:
    """What the charts show, already aggregated."""

    sizes: Mapping[str, Sequence[int]]  # corpus -> active-chain tokens per session
    size_estimator: str
    class_errors: Mapping[str, Mapping[str, float]]  # estimator -> class -> relative error
    reference: str | None  # the tokenizer errors are measured against, if any
    class_tokens: Mapping[str, Mapping[str, int]]  # estimator -> class -> tokens (whole sessions)
    slopes: Mapping[str, Sequence[float]]  # estimator -> billed slope per session
    family_slopes: Mapping[str, Mapping[str, Sequence[float]]]  # family -> estimator -> slopes
    # client version -> slopes of the estimator the family chart shows (`auto` when it ran)
    version_slopes: Mapping[str, Sequence[float]] = field(default_factory=dict)
    borrowed: Mapping[str, str] = field(default_factory=dict)  # family -> whose constants it borrows


@dataclass(frozen=True, slots=True)
class SlopeView:
    """The slope axis a box chart shows: the whiskers of every box (and slope 1), not the outliers,
    which are counted at the edge they lie beyond instead of flattening the boxes."""

    low: float
    high: float
    below: tuple[int, ...]  # outliers under `low`, per box
    above: tuple[int, ...]  # outliers over `high`, per box


def _quartile(ordered: Sequence[float], fraction: float) -> float:
    position = fraction * (len(ordered) - 1)
    lower = math.floor(position)
    upper = min(lower + 1, len(ordered) - 1)
    return ordered[lower] + (ordered[upper] - ordered[lower]) * (position - lower)


def _whiskers(values: Sequence[float]) -> tuple[float, float]:
    ordered = sorted(value for value in values if math.isfinite(value)) or [1.0]
    first, third = _quartile(ordered, 0.25), _quartile(ordered, 0.75)
    reach = WHISKER * (third - first)
    inside = [value for value in ordered if first - reach <= value <= third + reach]
    return inside[0], inside[-1]


def slope_view(boxes: Sequence[Sequence[float]]) -> SlopeView:
    """The axis range that holds every box's whiskers and slope 1, with a margin."""
    ends = [_whiskers(values) for values in boxes if values]
    low = min([1.0, *(end[0] for end in ends)])
    high = max([1.0, *(end[1] for end in ends)])
    margin = max(high - low, 0.1) * 0.08
    low, high = low - margin, high + margin
    return SlopeView(
        low,
        high,
        tuple(sum(value < low for value in values) for values in boxes),
        tuple(sum(value > high for value in values) for values in boxes),
    )


def _slope_boxes(
    axes: Any, labels: Sequence[str], boxes: Sequence[Sequence[float]], *, rotated: bool
) -> None:
    """Boxes of per-session slopes on an axis their outliers do not flatten (counted at the edge)."""
    view = slope_view(boxes)
    axes.boxplot(list(boxes), showfliers=True, whis=WHISKER)
    axes.set_ylim(view.low, view.high)
    axes.set_xticks(range(1, len(boxes) + 1))
    axes.set_xticklabels(list(labels), rotation=30 if rotated else 0, ha="right" if rotated else "center")
    for position, (below, above) in enumerate(zip(view.below, view.above, strict=True), start=1):
        if above:
            axes.annotate(f"{above} outlier(s) above", (position, view.high), **_EDGE_TEXT, va="top")
        if below:
            axes.annotate(f"{below} outlier(s) below", (position, view.low), **_EDGE_TEXT, va="bottom")
    axes.axhline(1.0, color="grey", linestyle="--", linewidth=0.8, label="slope 1: estimator = billed")
    axes.legend()


def _pyplot() -> Any:
    try:
        import matplotlib  # noqa: PLC0415 - an optional extra, imported only when charts are asked for
    except ImportError as exc:
        raise ChartsUnavailable from exc
    matplotlib.use("Agg", force=True)  # no display: files only
    import matplotlib.pyplot as plt  # noqa: PLC0415 - after the backend is chosen

    return plt


def _session_sizes(plt: Any, data: ChartData, path: Path) -> None:
    figure, axes = plt.subplots(figsize=SIZE)
    values = [value for sizes in data.sizes.values() for value in sizes if value > 0]
    if values:
        low, high = math.log10(min(values)), math.log10(max(values))
        count = max(5, min(MAX_BINS, int((high - low) * 8) + 1))
        edges = [10 ** (low + (high - low + 1e-9) * i / count) for i in range(count + 1)]
        series = {corpus: [v for v in sizes if v > 0] for corpus, sizes in data.sizes.items()}
        axes.hist(list(series.values()), bins=edges, stacked=True, label=list(series), edgecolor="white")
        axes.set_xscale("log")
        axes.legend(title="corpus")
    else:
        axes.text(0.5, 0.5, "no session holds an active chain", ha="center", transform=axes.transAxes)
    axes.set_title(f"Distribution of session sizes (active chain, {data.size_estimator} tokens)")
    axes.set_xlabel(f"active-chain tokens per session ({data.size_estimator}, log scale)")
    axes.set_ylabel("sessions")
    axes.grid(axis="y", alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=DPI)
    plt.close(figure)


def _grouped_bars(axes: Any, groups: Sequence[str], series: Mapping[str, Sequence[float]]) -> None:
    width = 0.8 / max(1, len(series))
    for position, (label, values) in enumerate(series.items()):
        offsets = [i - 0.4 + width * (position + 0.5) for i in range(len(groups))]
        axes.bar(offsets, values, width=width, label=label)
    axes.set_xticks(range(len(groups)))
    axes.set_xticklabels(groups, rotation=30, ha="right")
    axes.legend(title="estimator")


def _class_errors(plt: Any, data: ChartData, path: Path) -> None:
    figure, axes = plt.subplots(figsize=SIZE)
    if data.reference and data.class_errors:
        classes = sorted({kind for errors in data.class_errors.values() for kind in errors})
        series = {
            name: [100 * errors.get(kind, 0.0) for kind in classes]
            for name, errors in data.class_errors.items()
        }
        _grouped_bars(axes, classes, series)
        axes.axhline(0, color="black", linewidth=0.8)
        axes.set_title(f"Estimator error by content class, against the {data.reference} tokenizer")
        axes.set_ylabel(f"error vs {data.reference} (%; below 0 = undercount)")
    else:
        classes = sorted({kind for tokens in data.class_tokens.values() for kind in tokens})
        series = {
            name: [max(1, tokens.get(kind, 0)) for kind in classes]
            for name, tokens in data.class_tokens.items()
        }
        _grouped_bars(axes, classes, series)
        axes.set_yscale("log")
        axes.set_title(
            "Tokens by content class (no real tokenizer run: add --estimators o200k,claude-legacy)"
        )
        axes.set_ylabel("tokens (log scale)")
    axes.set_xlabel("content class")
    axes.grid(axis="y", alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=DPI)
    plt.close(figure)


def _billed_slopes(plt: Any, data: ChartData, path: Path) -> None:
    figure, axes = plt.subplots(figsize=SIZE)
    series = {name: values for name, values in data.slopes.items() if values}
    if series:
        _slope_boxes(axes, list(series), list(series.values()), rotated=False)
    else:
        axes.text(0.5, 0.5, "no session carries billed usage", ha="center", transform=axes.transAxes)
    axes.set_title("Billed prompt tokens per estimated token (per-session slope)")
    axes.set_xlabel("estimator")
    axes.set_ylabel("slope of billed = c + slope x estimate")
    axes.grid(axis="y", alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=DPI)
    plt.close(figure)


def _family_slopes(plt: Any, data: ChartData, path: Path) -> None:
    boxes = [
        (_family_label(family, name if len(estimators) > 1 else None, len(values), data.borrowed), values)
        for family, estimators in data.family_slopes.items()
        for name, values in estimators.items()
        if values
    ]
    names = sorted({name for estimators in data.family_slopes.values() for name in estimators})
    shown = names[0] if len(names) == 1 else "estimator"
    title = f"Billed prompt tokens per {shown} token, per model family (per-session slope)"
    xlabel = "model family" if len(names) == 1 else "model family and estimator"
    _slope_chart(plt, path, boxes, title, xlabel)


def _slope_chart(
    plt: Any, path: Path, boxes: Sequence[tuple[str, Sequence[float]]], title: str, xlabel: str
) -> None:
    """One figure of per-session slope boxes (labelled), or a note when no session has a bill."""
    figure, axes = plt.subplots(figsize=SIZE)
    if boxes:
        _slope_boxes(axes, [label for label, _ in boxes], [values for _, values in boxes], rotated=True)
    else:
        axes.text(0.5, 0.5, "no session carries billed usage", ha="center", transform=axes.transAxes)
    axes.set_title(title)
    axes.set_xlabel(xlabel)
    axes.set_ylabel("slope of billed = c + slope x estimate")
    axes.grid(axis="y", alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=DPI)
    plt.close(figure)


def _family_label(family: str, estimator: str | None, sessions: int, borrowed: Mapping[str, str]) -> str:
    """A box's label: family (and estimator), its session count, and whose constants it borrows."""
    lines = [family, *([estimator] if estimator else []), f"n={sessions}"]
    if family in borrowed:
        lines.append(f"({borrowed[family]}'s fit)")
    return "\n".join(lines)


def _version_slopes(plt: Any, data: ChartData, path: Path) -> None:
    boxes = [
        (f"{version}\nn={len(values)}", values) for version, values in data.version_slopes.items() if values
    ]
    names = sorted({name for estimators in data.family_slopes.values() for name in estimators})
    shown = names[0] if len(names) == 1 else "estimated"
    title = f"Billed prompt tokens per {shown} token, per client version (per-session slope)"
    _slope_chart(plt, path, boxes, title, "client version (the newest a session's records name)")


def write_charts(data: ChartData, directory: Path) -> tuple[Path, ...]:
    """Write the PNG charts into `directory`; raises `ChartsUnavailable` without matplotlib."""
    plt = _pyplot()
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, draw in (
        ("session-sizes.png", _session_sizes),
        ("class-error.png", _class_errors),
        ("billed-slopes.png", _billed_slopes),
        ("billed-slopes-by-family.png", _family_slopes),
        ("billed-slopes-by-client-version.png", _version_slopes),
    ):
        path = directory / name
        draw(plt, data, path)
        written.append(path)
    return tuple(written)
