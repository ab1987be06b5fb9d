"""`compaction report DIR [--out FILE]`, and `--html` on the fleet commands: the run's HTML page.

Reads a report directory (summary.json of validate, compress or tokens; tokens.json when there
is one; every session report the summary names), builds the page (`report.html_page`) and
writes it atomically, by default as DIR/report.html, each session linking to its JSON report by
a path relative to the page. A session report that is missing or does not read is a row saying
so (exit 1); a directory with no summary is a usage error (exit 2). Reads and writes go through
the report directory's own paths or URLs, as the fleet commands write them.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final
from urllib.parse import quote

from pipeline.errors import UsageError
from pipeline.execute.session_tasks import Destination, read_at, write_at
from pipeline.read.remote import is_url
from pipeline.report.html_inputs import (
    TOKENS_SUMMARY_SCHEMA,
    FleetView,
    TokensView,
    UnreadableInput,
    fleet_view,
    session_glance,
    summary_schema,
    tokens_view,
)
from pipeline.report.html_page import PAGE_NAME, FleetPage, SessionRow, html_page
from pipeline.vocabulary import ExitCode

__all__ = ["read_page", "report_command", "run_page", "write_page"]

SUMMARY: Final = "summary.json"
TOKENS: Final = "tokens.json"
REPORT_SUFFIX: Final = ".report.json"
TOKENS_REPORTS: Final = "sessions"  # where `tokens --out DIR` puts its reports by default


def _summaries(directory: Destination) -> tuple[FleetView | None, TokensView | None, str]:
    """The run's summary (fleet or tokens) and, beside a fleet summary, a tokens.json."""
    fleet: FleetView | None = None
    tokens: TokensView | None = None
    source = TOKENS
    data = read_at(directory.location(SUMMARY))
    if data is not None:
        if summary_schema(data, SUMMARY) == TOKENS_SUMMARY_SCHEMA:
            tokens, source = tokens_view(data, SUMMARY), SUMMARY
        else:
            fleet = fleet_view(data, SUMMARY)
    if tokens is None:
        extra = read_at(directory.location(TOKENS))
        tokens = tokens_view(extra, TOKENS) if extra is not None else None
    if fleet is None and tokens is None:
        raise UsageError(
            f"{directory.root} holds no {SUMMARY} or {TOKENS}: not a report directory of compaction"
        )
    return fleet, tokens, source


def _listed(fleet: FleetView | None, tokens: TokensView | None) -> list[tuple[str, str, list[str]]]:
    """Each session: its label, status, and where its report may be (relative to the directory)."""
    if fleet is not None:
        return [
            (entry.session, entry.status, [entry.report] if entry.report is not None else [])
            for entry in fleet.reports
        ]
    assert tokens is not None  # `_summaries` returns one of the two
    name = REPORT_SUFFIX
    return [
        (row.label, row.status, [f"{row.label}{name}", f"{TOKENS_REPORTS}/{row.label}{name}"])
        for row in tokens.sessions
    ]


def _row(directory: Destination, label: str, status: str, candidates: Sequence[str], base: str) -> SessionRow:
    """One session's row: its report read (the first candidate that exists), linked from `base`."""
    for relative in candidates:
        data = read_at(directory.location(relative))
        if data is None:
            continue
        href = quote(_relative(directory.location(relative), base))
        try:
            return SessionRow(label, status, href, glance=session_glance(data, relative))
        except UnreadableInput as exc:
            return SessionRow(label, status, href, unreadable=f"report does not read: {exc.reason}")
    return SessionRow(label, status, None, unreadable="no report")


def _relative(location: str, base: str) -> str:
    """A report's link from the page's directory `base` (a URL's stays relative to its directory)."""
    if is_url(location):
        return location[len(base.rstrip("/")) + 1 :] if location.startswith(base) else location
    return os.path.relpath(location, base)


def read_page(directory: str, page_dir: str | None = None) -> FleetPage:
    """The page of a report directory (a path or an fsspec URL), its links relative to `page_dir`
    (default: the directory itself)."""
    where = Destination(directory)
    fleet, tokens, source = _summaries(where)
    base = page_dir if page_dir is not None else directory
    rows = tuple(_row(where, label, status, found, base) for label, status, found in _listed(fleet, tokens))
    return FleetPage(directory=directory, fleet=fleet, tokens=tokens, tokens_source=source, sessions=rows)


def write_page(directory: str, out: str | None = None) -> tuple[str, FleetPage]:
    """Write the page of `directory` to `out` (default: report.html in it); where it went, and the page."""
    target = out if out is not None else Destination(directory).location(PAGE_NAME)
    page_dir = str(Path(target).parent) if not is_url(target) else target.rsplit("/", 1)[0]
    page = read_page(directory, page_dir)
    write_at(target, html_page(page).encode("utf-8"), once=False)
    return target, page


def report_command(args: argparse.Namespace) -> int:
    """`compaction report`: 0 written, 1 written but a session report is missing or unreadable,
    2 not a report directory."""
    directory: Path = args.directory
    if not directory.is_dir():
        print(f"compaction: error: {directory} is not a directory", file=sys.stderr)
        return ExitCode.USAGE
    try:
        target, page = write_page(str(directory), str(args.out) if args.out else None)
    except UsageError as exc:
        print(f"compaction: error: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    except UnreadableInput as exc:
        print(
            f"compaction: error: {directory / exc.name} does not read as compaction's: {exc.reason}",
            file=sys.stderr,
        )
        return ExitCode.USAGE
    print(target)
    missing = [row for row in page.sessions if row.unreadable is not None]
    if missing:
        print(
            f"compaction: warning: {len(missing)} session report(s) missing or unreadable "
            "(listed in the page)",
            file=sys.stderr,
        )
        return ExitCode.FAILED
    return ExitCode.OK


def run_page(destination: str, code: int, *, quiet: bool) -> int:
    """`--html`: the page of the run just finished (its summary written), and the run's exit code
    (1 in place of 0 when the page asked for could not be written)."""
    if code == ExitCode.USAGE:  # the run stopped before writing a summary
        return code
    try:
        target, _ = write_page(destination)
    except (UsageError, UnreadableInput, OSError) as exc:
        print(f"compaction: error: report.html not written: {exc}", file=sys.stderr)
        return code or ExitCode.FAILED
    if not quiet:
        print(f"HTML report: {target}")
    return code
