"""What a person sees: structured logs on stderr, a live progress bar, a short table at the end.

Logs and tables carry statuses, codes, counts and labels only, never transcript text.
"""

from __future__ import annotations

import logging
import sys
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import structlog
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from structlog.typing import Processor

from pipeline.report.documents import Outcome
from pipeline.vocabulary import LogFormat, Severity

__all__ = ["configure_logging", "progress_bar", "render_summary"]


def configure_logging(log_format: LogFormat, *, quiet: bool) -> None:
    """Route structlog to stderr as console lines or JSON; quiet keeps warnings and errors only."""
    level = logging.WARNING if quiet else logging.INFO
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if log_format is LogFormat.JSON
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    stamps: list[Processor] = [
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    # Libraries log through the standard library (asyncio's child watcher warns about worker
    # processes it did not start): their lines get the same format, so JSON logs stay JSON.
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
            foreign_pre_chain=stamps,
        )
    )
    logging.basicConfig(handlers=[handler], level=level, force=True)
    structlog.configure(
        processors=[*stamps, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        # Resolved per logger, not once: whoever replaced sys.stderr since (a test, a host
        # program embedding the CLI) gets the lines, and a closed stream is never written to.
        logger_factory=lambda *args: structlog.PrintLogger(sys.stderr),
        cache_logger_on_first_use=False,
    )


@contextmanager
def progress_bar(total: int, *, enabled: bool, description: str) -> Iterator[Any]:
    """A live bar on an interactive stderr; otherwise a no-op callback."""
    if not enabled or not sys.stderr.isatty():
        yield lambda outcome: None
        return
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[failed]} failed"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(file=sys.stderr),
        transient=True,
    ) as progress:
        task = progress.add_task(description, total=total, failed=0)
        failed = 0

        def advance(outcome: Outcome) -> None:
            nonlocal failed
            failed += outcome.failed
            progress.update(task, advance=1, failed=failed)

        yield advance


def render_summary(outcomes: Mapping[str, Outcome], report_dir: Path | str, elapsed_ms: float) -> None:
    """The end-of-run table: sessions by status, the most frequent finding codes, where reports are."""
    console = Console(file=sys.stdout, highlight=False)
    statuses = Counter(outcome.status.value for outcome in outcomes.values())
    codes: Counter[str] = Counter()
    for outcome in outcomes.values():
        for finding in outcome.report.findings.findings:
            if finding.severity is not Severity.INFO:
                codes[finding.code.value] += 1
    table = Table(title=f"{len(outcomes)} sessions in {elapsed_ms / 1000:.1f}s", show_edge=False)
    table.add_column("status")
    table.add_column("sessions", justify="right")
    for status, count in sorted(statuses.items()):
        table.add_row(status, str(count))
    console.print(table)
    if codes:
        top = Table(title="most frequent findings (errors and warnings)", show_edge=False)
        top.add_column("code")
        top.add_column("findings", justify="right")
        for code, count in codes.most_common(8):
            top.add_row(code, str(count))
        console.print(top)
    console.print(f"reports: {report_dir}")
