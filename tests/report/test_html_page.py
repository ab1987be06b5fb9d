"""The HTML page as a pure function of typed views: escaped labels, figures marked with their
source, sections that say why they are empty, and the views' decoding of what the commands write."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import msgspec
import pytest

from pipeline.jobs.tokens.by_corpus import SUMMARY_SCHEMA as WRITTEN_TOKENS_SCHEMA
from pipeline.report.fleet import SUMMARY_SCHEMA, ReportEntry
from pipeline.report.html_charts import Bar, SlopeBox, bar_chart, slope_chart
from pipeline.report.html_inputs import (
    TOKENS_SUMMARY_SCHEMA,
    FleetView,
    UnreadableInput,
    fleet_view,
    session_glance,
    summary_schema,
)
from pipeline.report.html_page import FleetPage, SessionRow, html_page
from pipeline.report.html_sections import Figure

HOSTILE = '<script>alert("x")</script>&amp;'


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)


def _elements(text: str) -> list[str]:
    parser = _Elements()
    parser.feed(text)
    return parser.tags


def _fleet(**changes: object) -> FleetView:
    view = FleetView(
        schema=SUMMARY_SCHEMA,
        command="validate",
        roots=[HOSTILE],
        sessions=2,
        failed=1,
        by_status={"valid": 1, "refused": 1},
        bytes=1234567,
        elapsed_ms=12.5,
        reports=[ReportEntry(session=HOSTILE, status="refused", report=f"{HOSTILE}.report.json")],
    )
    return msgspec.structs.replace(view, **changes)


def _glance(**fields: object) -> SessionRow:
    data = {"session": {"label": HOSTILE, "format": "claude-code"}, "status": "refused", **fields}
    return SessionRow(
        HOSTILE, "refused", "a%20b.report.json", glance=session_glance(json.dumps(data).encode(), "x")
    )


def test_the_tokens_schema_the_page_reads_is_the_one_tokens_writes() -> None:
    assert TOKENS_SUMMARY_SCHEMA == WRITTEN_TOKENS_SCHEMA


def test_report_strings_are_text_never_markup() -> None:
    row = _glance(findings=[{"code": HOSTILE, "severity": "error"}], reasons=[HOSTILE])
    page = html_page(FleetPage(HOSTILE, _fleet(), None, "tokens.json", (row,)))
    assert "script" not in _elements(page)
    assert (
        page.count("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;amp;") >= 4
    )  # title, root, row, code
    chart = bar_chart("t", [Bar(HOSTILE, 1.0, HOSTILE)])
    assert "script" not in _elements(chart)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (1234567, "1,234,567"),
        (0.2128, "0.2128"),
        (0.3, "0.3"),
        (12.0, "12"),
        (None, "-"),
        (4239.55, "4,239.55"),
    ],
)
def test_a_figure_says_its_value_and_where_it_came_from(value: float | None, shown: str) -> None:
    written = Figure("summary.json").value(value, "totals", "by_root", "../a.b/c")
    assert f">{shown}</span>" in written
    path = re.search(r'data-path="([^"]*)"', written)
    assert path is not None
    assert json.loads(path.group(1).replace("&quot;", '"')) == ["totals", "by_root", "../a.b/c"]


def test_empty_sections_say_why() -> None:
    page = html_page(FleetPage("d", _fleet(), None, "tokens.json", ()))
    assert "The resume gate did not run" in page
    assert "No session was probed" in page
    assert "No token benchmark here" in page
    assert "No session report holds a finding" in page


def test_slopes_far_off_the_boxes_are_counted_not_plotted() -> None:
    box = SlopeBox("seed", 0.95, 1.0, 1.05, (0.9, 1.0, 1.1, 250.0))
    chart = slope_chart("slopes", [box])
    assert chart.count("<circle") == 3
    assert "(+1 off axis)" in chart


def test_a_summary_of_another_kind_is_a_precise_error() -> None:
    data = json.dumps({"schema": "session-compaction/repair-summary/v1"}).encode()
    assert summary_schema(data, "summary.json") == "session-compaction/repair-summary/v1"
    with pytest.raises(UnreadableInput, match=r"^summary\.json: "):
        fleet_view(data, "summary.json")
    with pytest.raises(UnreadableInput, match=r"^a\.report\.json: "):
        session_glance(b"{", "a.report.json")
