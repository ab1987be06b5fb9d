"""The HTML fleet page: one self-contained static page per run, from its report directory's views.

Pure: `html_page` turns a `FleetPage` (the summary's view, a token benchmark's, and every
session's glance) into one HTML string with inline CSS and inline SVG charts; no script, no
font, image or style sheet from elsewhere. Every string a report holds (labels are paths users
control) is escaped. A figure copied from a summary carries where it came from
(`data-source`, and `data-path` as a JSON list of keys), so a reader, or a test, can check the
page against the file; a figure summed here from the session reports carries `data-derived`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Final

from msgspec import UnsetType

from pipeline.report.html_charts import Bar, bar_chart
from pipeline.report.html_inputs import FleetView, SessionGlance, TokensView
from pipeline.report.html_sections import (
    Figure,
    fleet_tokens,
    resume_section,
    savings_section,
    slopes_section,
    table,
    tokens_totals,
)

__all__ = ["PAGE_NAME", "FleetPage", "SessionRow", "html_page"]

PAGE_NAME: Final = "report.html"
ERROR_SEVERITY: Final = "error"

_STYLE: Final = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#1d2330;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d7dce5}
table{border-collapse:collapse;margin:6px 0 12px}td,th{padding:3px 10px;border-bottom:1px solid #eceff4;
text-align:left;vertical-align:top}th{background:#f3f5f9}td.num{text-align:right}
td.label{text-align:left;font-family:ui-monospace,monospace;font-size:12px;word-break:break-all}
.meta{color:#566074}.bad{color:#b42318;font-weight:600}.note{color:#566074;font-size:13px}
svg.chart{display:block;margin:6px 0 14px;font-size:11px}svg text{fill:#1d2330}
rect.s0{fill:#4c78a8}rect.s1{fill:#f2a541}rect.s2{fill:#54a24b}rect.s3{fill:#b279a2}
rect.box{fill:#c9d7ea;stroke:#4c78a8}line.median{stroke:#1d2330;stroke-width:2}
line.one{stroke:#b42318;stroke-dasharray:4 3}circle.dot{fill:#4c78a8;fill-opacity:.45}
"""


@dataclass(frozen=True, slots=True)
class SessionRow:
    """One session of the run: its status, where its report is (relative to the page), and what
    the page read of it (None with `unreadable`: why its report could not be read)."""

    label: str
    status: str
    href: str | None
    glance: SessionGlance | None = None
    unreadable: str | None = None


@dataclass(frozen=True, slots=True)
class FleetPage:
    """Everything the page shows, read from one report directory."""

    directory: str
    fleet: FleetView | None
    tokens: TokensView | None
    tokens_source: str  # the file the token view was read from (summary.json or tokens.json)
    sessions: tuple[SessionRow, ...]


def _header(page: FleetPage) -> str:
    lines = [f"<h1>compaction report: {escape(page.directory)}</h1>"]
    fleet, tokens = page.fleet, page.tokens
    if fleet is not None:
        figure = Figure("summary.json")
        roots = ", ".join(escape(root) for root in fleet.roots)
        lines.append(
            f'<p class="meta">command <b>{escape(fleet.command)}</b> over {roots}: '
            f"{figure.value(fleet.sessions, 'sessions')} sessions, "
            f"{figure.value(fleet.failed, 'failed')} failed, {figure.value(fleet.bytes, 'bytes')} bytes "
            f"read in {figure.value(fleet.elapsed_ms, 'elapsed_ms')} ms "
            f"<span class=note>({escape(fleet.schema)})</span></p>"
        )
    if tokens is not None:
        figure = Figure(page.tokens_source)
        lines.append(
            f'<p class="meta">token benchmark ({escape(page.tokens_source)}): '
            f"{figure.value(tokens.overall.sessions, 'all', 'sessions')} sessions, "
            f"{figure.value(tokens.overall.need_compaction, 'all', 'need_compaction')} would need "
            f"compaction; estimators {escape(', '.join(tokens.estimators))}</p>"
        )
    return "".join(lines)


def _statuses(page: FleetPage) -> str:
    key: tuple[str, ...]
    if page.fleet is not None:
        counts, figure, key = page.fleet.by_status, Figure("summary.json"), ("by_status",)
    elif page.tokens is not None:
        statuses = Counter(row.status for row in page.tokens.sessions)
        counts, figure, key = (
            dict(sorted(statuses.items())),
            Figure(page.tokens_source, derived=True),
            ("by_status",),
        )
    else:
        return ""
    rows = [(escape(status), figure.value(count, *key, status)) for status, count in counts.items()]
    chart = bar_chart("Sessions by status", [Bar(s, c, f"{c:,}") for s, c in counts.items()])
    parts = ["<h2>Statuses</h2>", chart, table(("status", "sessions"), rows)]
    fleet = page.fleet
    if fleet is not None:
        for name, field in (("strict status", "by_strict_status"), ("leaf source", "by_leaf_source")):
            values: dict[str, int] = getattr(fleet, field)
            if values:
                parts.append(
                    table(
                        (name, "sessions"),
                        [(escape(k), figure.value(v, field, k)) for k, v in values.items()],
                    )
                )
    return "".join(parts) + _reasons(page.sessions)


def _why(glance: SessionGlance) -> list[str]:
    """A session's reasons: its report's, else the codes of its error findings (as --quiet says)."""
    given = [] if isinstance(glance.reasons, UnsetType) else list(glance.reasons)
    return given or sorted({f.code for f in glance.findings if f.severity == ERROR_SEVERITY})


def _reasons(sessions: Sequence[SessionRow]) -> str:
    by_reason: dict[str, Counter[str]] = {}
    for row in sessions:
        if row.glance is not None:
            for reason in _why(row.glance):
                by_reason.setdefault(reason, Counter())[row.status] += 1
    if not by_reason:
        return '<p class="note">No session gave a reason or an error finding.</p>'
    ordered = sorted(by_reason.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))
    figure = Figure("reports", derived=True)
    rows = [
        (
            escape(reason),
            figure.value(sum(statuses.values()), "reasons", reason),
            escape(", ".join(f"{status} {n}" for status, n in sorted(statuses.items()))),
        )
        for reason, statuses in ordered
    ]
    return "<h3>Reasons</h3>" + table(("reason (else error finding codes)", "sessions", "statuses"), rows)


def _findings(sessions: Sequence[SessionRow]) -> str:
    """Per code: its findings (listed and counted only), the sessions holding it, its severities."""
    found: Counter[str] = Counter()
    holders: Counter[str] = Counter()
    severities: dict[str, set[str]] = {}
    for glance in (row.glance for row in sessions if row.glance is not None):
        for entry in glance.findings:
            severities.setdefault(entry.code, set()).add(entry.severity)
        per_code = Counter(f.code for f in glance.findings) + Counter(glance.findings_truncated)
        found.update(per_code)
        holders.update(per_code.keys())
    if not found:
        return "<h2>Findings by code</h2><p class=note>No session report holds a finding.</p>"
    figure = Figure("reports", derived=True)
    rows = [
        (
            escape(code),
            escape(", ".join(sorted(severities.get(code, ())))),
            figure.value(n, "findings", code),
            figure.value(holders[code], "sessions", code),
        )
        for code, n in sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    return "<h2>Findings by code</h2>" + table(("code", "severity", "findings", "sessions"), rows)


def _recall(sessions: Sequence[SessionRow]) -> str:
    probes: Counter[str] = Counter()
    kept: Counter[str] = Counter()
    measured = 0
    for glance in (row.glance for row in sessions if row.glance is not None):
        if isinstance(glance.fidelity, UnsetType):
            continue
        measured += 1
        for name, entry in glance.fidelity.classes.items():
            probes[name] += entry.probes
            kept[name] += entry.kept
    title = "<h2>Probe recall per class</h2>"
    if not measured:
        return (
            title
            + "<p class=note>No session was probed (fidelity is measured by compress's resume gate).</p>"
        )
    figure = Figure("reports", derived=True)
    recall = {name: (kept[name] / probes[name] if probes[name] else None) for name in sorted(probes)}
    rows = [
        (
            escape(name),
            figure.value(probes[name], "probes", name),
            figure.value(kept[name], "kept", name),
            figure.value(None if r is None else round(r, 4), "recall", name),
        )
        for name, r in recall.items()
    ]
    chart = bar_chart(
        "Recall per probe class", [Bar(n, r, f"{r:.3f}") for n, r in recall.items() if r is not None]
    )
    probed = figure.value(measured, "probed")
    note = f"<p class=note>Pooled over the {probed} probed sessions: kept / probes.</p>"
    return title + note + chart + table(("class", "probes", "kept", "recall"), rows)


_STATUS_ORDER: Final = ("internal-error", "unreadable", "refused", "invalid")


def _session_cells(row: SessionRow) -> tuple[str, ...]:
    link = escape(row.label) if row.href is None else f'<a href="{escape(row.href)}">{escape(row.label)}</a>'
    glance = row.glance
    if glance is None:
        why = escape(row.unreadable or "")
        return (link, escape(row.status), "", why, "", "")
    fidelity = glance.fidelity
    shown = "" if isinstance(fidelity, UnsetType) or fidelity.fidelity is None else f"{fidelity.fidelity:.3f}"
    agent = "" if isinstance(glance.session.format, UnsetType) else glance.session.format
    return (
        link,
        escape(row.status),
        escape(agent),
        escape(", ".join(_why(glance))),
        escape(glance.verdict or ""),
        shown,
    )


def _sessions(sessions: Sequence[SessionRow]) -> str:
    def rank(row: SessionRow) -> tuple[int, str]:
        order = _STATUS_ORDER.index(row.status) if row.status in _STATUS_ORDER else len(_STATUS_ORDER)
        return order, row.label

    rows = []
    for row in sorted(sessions, key=rank):
        cells = _session_cells(row)
        rows.append((f'<span class="label">{cells[0]}</span>', *cells[1:]))
    head = ("session (its JSON report)", "status", "agent", "reasons", "resume proof", "fidelity")
    return f"<h2>Sessions ({len(sessions):,})</h2>" + table(head, rows, first_is_label=True)


def html_page(page: FleetPage) -> str:
    """The whole page, one HTML document."""
    parts = [_header(page), _statuses(page)]
    fleet, tokens = page.fleet, page.tokens
    if fleet is not None:
        parts.append(fleet_tokens(fleet))
        parts.append(savings_section(fleet))
    if tokens is not None:
        parts.append(tokens_totals(tokens, page.tokens_source))
    parts.append(_findings(page.sessions))
    if fleet is not None:
        verdicts = Counter(row.glance.verdict for row in page.sessions if row.glance and row.glance.verdict)
        parts.append(resume_section(fleet, verdicts))
    parts.append(_recall(page.sessions))
    parts.append(slopes_section(tokens, page.tokens_source))
    parts.append(_sessions(page.sessions))
    title = escape(f"compaction report: {page.directory}")
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width,initial-scale=1"><title>{title}</title>'
        f"<style>{_STYLE}</style></head><body>{''.join(parts)}"
        f'<p class="note">Written by compaction from the JSON files of this directory; no script, '
        f"nothing fetched. Figures marked data-path are summary.json's own.</p></body></html>\n"
    )
