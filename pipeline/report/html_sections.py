"""The HTML fleet page's sections drawn from the summaries: tokens before and after against the
target, savings per agent and per root, the resume proof's verdicts, the billed slopes; and the
`Figure` and `table` helpers every section writes with. Pure; every string is escaped here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Final

from msgspec import UnsetType

from pipeline.report.html_charts import BarGroup, SlopeBox, grouped_bar_chart, slope_chart
from pipeline.report.html_inputs import FamilyFit, FleetView, TokensView
from pipeline.report.run_totals import GroupTotals

__all__ = [
    "Figure",
    "fleet_tokens",
    "resume_section",
    "savings_section",
    "slopes_section",
    "table",
    "tokens_totals",
]

MISSING: Final = "-"  # a figure the summary holds as null


def _number(value: float | None) -> str:
    if value is None:
        return MISSING
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.4f}".rstrip("0").rstrip(".") if value != int(value) else f"{int(value):,}"


@dataclass(frozen=True, slots=True)
class Figure:
    """Writes figures of one source: a summary file's (with their key path in it) or, `derived`,
    summed by the page from the session reports (with the key it is shown under)."""

    source: str
    derived: bool = False

    def value(self, value: float | None, *keys: str) -> str:
        """`value` as the page shows it, in a span saying where it came from."""
        where = escape(json.dumps(list(keys)), quote=True)
        kind = "data-derived" if self.derived else "data-path"
        return (
            f'<span class="figure" data-source="{escape(self.source, quote=True)}" {kind}="{where}">'
            f"{_number(value)}</span>"
        )


def _cell(index: int, cell: str, first: str) -> str:
    if index == 0:
        return f"<td{first}>{cell}</td>"
    return f'<td class="num">{cell}</td>' if cell.startswith('<span class="figure"') else f"<td>{cell}</td>"


def table(head: Sequence[str], rows: Sequence[Sequence[str]], *, first_is_label: bool = False) -> str:
    """A table of cells already escaped (the head is escaped here); figures are right-aligned."""
    first = ' class="label"' if first_is_label else ""
    header = "".join(f"<th>{escape(name)}</th>" for name in head)
    body = "".join(
        "<tr>" + "".join(_cell(i, cell, first) for i, cell in enumerate(row)) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>"


def _human(value: float) -> str:
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"{value / limit:.2f}{suffix}"
    return f"{value:.0f}"


def _resume_rows(group: GroupTotals, figure: Figure, keys: Sequence[str]) -> list[tuple[str, ...]]:
    resume = {} if isinstance(group.resume_tokens, UnsetType) else group.resume_tokens
    rows = []
    for estimator, tokens in resume.items():
        at = (*keys, "resume_tokens", estimator)
        rows.append(
            (
                escape(estimator),
                *(
                    figure.value(getattr(tokens, name), *at, name)
                    for name in (
                        "sessions",
                        "before",
                        "after",
                        "ratio",
                        "target",
                        "target_ratio",
                        "target_met",
                    )
                ),
            )
        )
    return rows


def _held_rows(group: GroupTotals, figure: Figure, keys: Sequence[str]) -> list[tuple[str, ...]]:
    held = {} if isinstance(group.tokens, UnsetType) else group.tokens
    return [
        (
            escape(estimator),
            *(
                figure.value(getattr(tokens, name), *keys, "tokens", estimator, name)
                for name in ("sessions", "session", "active_chain", "need_compaction")
            ),
        )
        for estimator, tokens in held.items()
    ]


_RESUME_HEAD: Final = (
    "estimator",
    "sessions",
    "before",
    "after",
    "after / before",
    "target",
    "target / before",
    "met target",
)
_HELD_HEAD: Final = ("estimator", "sessions", "whole files", "active chains", "would need compaction")


def _token_chart(by_format: Mapping[str, GroupTotals]) -> str:
    groups = []
    for fmt, group in by_format.items():
        resume = {} if isinstance(group.resume_tokens, UnsetType) else group.resume_tokens
        for estimator, tokens in resume.items():
            values = (float(tokens.before), float(tokens.target), float(tokens.after))
            groups.append(BarGroup(f"{fmt} ({estimator})", values, tuple(_human(v) for v in values)))
    if not groups:
        return ""
    return grouped_bar_chart("Resume-context tokens per agent", ("before", "target", "after"), groups)


def fleet_tokens(fleet: FleetView) -> str:
    """Tokens before and after with the target (compress), or what the sessions hold (validate)."""
    totals = fleet.totals
    if isinstance(totals, UnsetType):
        return ""
    figure, keys = Figure("summary.json"), ("totals", "all")
    parts = ["<h2>Tokens</h2>"]
    resume = _resume_rows(totals.all, figure, keys)
    if resume:
        parts.append(
            "<p class=note>Resume contexts of the compacted sessions, before and after, against the "
            "target each was held to.</p>"
        )
        parts += [_token_chart(totals.by_format), table(_RESUME_HEAD, resume)]
    held = _held_rows(totals.all, figure, keys)
    if held:
        parts.append(
            "<p class=note>What the sessions hold, and how many would need compaction at the current "
            "target.</p>"
        )
        parts.append(table(_HELD_HEAD, held))
    return "".join(parts) if len(parts) > 1 else ""


def _group_row(name: str, group: GroupTotals, figure: Figure, keys: Sequence[str]) -> tuple[str, ...]:
    files = group.files
    before = after = ratio = MISSING
    if not isinstance(files, UnsetType):
        before = figure.value(files.before, *keys, "files", "before")
        after = figure.value(files.after, *keys, "files", "after")
        ratio = figure.value(files.ratio, *keys, "files", "ratio")
    resume = {} if isinstance(group.resume_tokens, UnsetType) else group.resume_tokens
    saved = "<br>".join(
        f"{escape(estimator)}: {figure.value(t.before, *keys, 'resume_tokens', estimator, 'before')} → "
        f"{figure.value(t.after, *keys, 'resume_tokens', estimator, 'after')} "
        f"(saved {_human(t.before - t.after)})"
        for estimator, t in resume.items()
    )
    written = (
        MISSING if isinstance(group.written, UnsetType) else figure.value(group.written, *keys, "written")
    )
    size = MISSING if isinstance(group.bytes, UnsetType) else figure.value(group.bytes, *keys, "bytes")
    return (
        escape(name),
        figure.value(group.sessions, *keys, "sessions"),
        figure.value(group.failed, *keys, "failed"),
        size,
        written,
        saved,
        before,
        after,
        ratio,
    )


_SAVINGS_HEAD: Final = (
    "",
    "sessions",
    "failed",
    "bytes read",
    "written",
    "resume tokens",
    "file bytes before",
    "after",
    "after / before",
)


def savings_section(fleet: FleetView) -> str:
    """Per agent format and per root: sessions, what was written, and the tokens and bytes saved."""
    totals = fleet.totals
    if isinstance(totals, UnsetType):
        return ""
    figure = Figure("summary.json")
    parts = ["<h2>Savings per agent</h2>"]
    for title, groups, key in (("agent", totals.by_format, "by_format"), ("root", totals.by_root, "by_root")):
        rows = [_group_row(name, group, figure, ("totals", key, name)) for name, group in groups.items()]
        rows.append(_group_row("all", totals.all, figure, ("totals", "all")))
        parts.append(table((title, *_SAVINGS_HEAD[1:]), rows))
    return "".join(parts)


def tokens_totals(tokens: TokensView, source: str) -> str:
    """A token benchmark's totals: per view and estimator, overall and per agent format."""
    figure = Figure(source)
    rows = []
    for fmt, group, keys in (
        ("all", tokens.overall, ("all",)),
        *((f, g, ("by_format", f)) for f, g in tokens.by_format.items()),
    ):
        for view, by_estimator in group.totals.items():
            for estimator, value in by_estimator.items():
                rows.append(
                    (
                        escape(fmt),
                        escape(view),
                        escape(estimator),
                        figure.value(value, *keys, "totals", view, estimator),
                    )
                )
    if not rows:
        return ""
    return "<h2>Tokens held (token benchmark)</h2>" + table(("agent", "view", "estimator", "tokens"), rows)


def resume_section(fleet: FleetView, verdicts: Mapping[str, int]) -> str:
    """The resume proof's verdicts (the summary's), what each client sent, and its cost."""
    checks = fleet.resume_checks
    title = "<h2>Resume-proof verdicts</h2>"
    if isinstance(checks, UnsetType):
        return (
            title
            + "<p class=note>The resume gate did not run in this run (validate, or --no-verify-resume).</p>"
        )
    figure = Figure("summary.json")
    rows = [
        (
            escape(v),
            figure.value(n, "resume_checks", "by_verdict", v),
            Figure("reports", derived=True).value(verdicts.get(v, 0), "verdicts", v),
        )
        for v, n in checks.by_verdict.items()
    ]
    parts = [title, table(("verdict", "sessions", "session reports"), rows)]
    sent: list[tuple[str, tuple[str, ...], dict[str, dict[str, int]]]] = [
        ("claude-code", ("sent_by_claude_code",), checks.sent_by_claude_code)
    ]
    if not isinstance(checks.sent_by_format, UnsetType):
        sent += [(fmt, ("sent_by_format", fmt), by) for fmt, by in checks.sent_by_format.items()]
    sent_rows = [
        (
            escape(client),
            escape(side),
            *(
                figure.value(sizes.get(n), "resume_checks", *key, side, n)
                for n in ("messages", "characters", "estimated_tokens")
            ),
        )
        for client, key, sides in sent
        for side, sizes in sides.items()
    ]
    parts.append(table(("client", "resumed", "messages", "characters", "estimated tokens"), sent_rows))
    total, median, p90 = (
        figure.value(getattr(checks.cost_ms, k), "resume_checks", "cost_ms", k)
        for k in ("total", "median", "p90")
    )
    parts.append(f"<p class=note>Proof time: {total} ms in all, median {median} ms, p90 {p90} ms.</p>")
    return "".join(parts)


def _boxes(tokens: TokensView) -> list[SlopeBox]:
    return [
        SlopeBox(
            estimator,
            figures.slope_q1,
            figures.median_slope,
            figures.slope_q3,
            tuple(s for row in tokens.sessions if (s := row.slope(estimator)) is not None),
        )
        for estimator, figures in tokens.overall.usage.items()
    ]


_SPREAD: Final = ("median_abs_slope_error", "abs_slope_error_q1", "abs_slope_error_q3")


def _fit_note(fit: FamilyFit | UnsetType) -> str:
    """Whether `auto`'s constants for a family were fitted on its own sessions, or whose it borrowed."""
    if isinstance(fit, UnsetType):
        return ""
    if isinstance(fit.reason, UnsetType):
        return f"fitted on {fit.fit_sessions} sessions"
    return escape(f"{fit.reason} ({fit.fit_sessions} sessions): {fit.borrowed_from}'s")


def slopes_section(tokens: TokensView | None, source: str) -> str:
    """Billed slopes: per estimator, billed = c + slope x estimate fitted per session (1: right scale)."""
    title = "<h2>Billed slopes</h2>"
    if tokens is None or not tokens.overall.usage:
        return (
            title
            + "<p class=note>No token benchmark here with billed usage (compaction tokens writes one).</p>"
        )
    figure, usage = Figure(source), tokens.overall.usage
    keys = ("sessions", "turns", "median_slope", "slope_q1", "slope_q3", "median_relative_rmse")
    rows = [
        (escape(name), *(figure.value(getattr(f, key), "all", "usage", name, key) for key in keys))
        for name, f in usage.items()
    ]
    parts = [
        title,
        "<p class=note>Per session, billed prompt tokens = c + slope x (estimate + framing); a slope "
        "of 1 is the right scale. Boxes: quartiles and median; dots: sessions.</p>",
        slope_chart("Billed slope per estimator", _boxes(tokens)),
        table(("estimator", "sessions", "turns", "median slope", "q1", "q3", "median relative rmse"), rows),
    ]
    families = [
        (
            escape(family),
            escape(name),
            *(
                ""  # a summary written before the spread was reported
                if isinstance(value := getattr(f, key), UnsetType)
                else figure.value(value, "all", "by_family", family, "estimators", name, key)
                for key in ("sessions", "median_slope", *_SPREAD)
            ),
            _fit_note(entry.calibration) if name == "auto" else "",
        )
        for family, entry in tokens.overall.by_family.items()
        for name, f in entry.estimators.items()
    ]
    if families:
        spread = ("median |slope - 1|", "q1", "q3")
        head = ("family", "estimator", "sessions", "median slope", *spread, "auto's constants")
        parts.append("<h3>Per model family</h3>" + table(head, families))
    return "".join(parts)
