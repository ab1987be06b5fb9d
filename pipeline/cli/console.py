"""What a person sees: structured logs on stderr, a live progress bar, a short table at the end.

Logs and tables carry statuses, codes, counts and labels only, never transcript text.
"""

from __future__ import annotations

import io
import json
import logging
import sys
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, TextIO

import structlog
from msgspec import UnsetType
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

from pipeline.report.documents import CompressReport, Outcome
from pipeline.report.fleet import ModelSpend, unsupported_by_agent
from pipeline.vocabulary import LogFormat, Severity

__all__ = [
    "JsonLines",
    "configure_logging",
    "model_progress",
    "model_spend_line",
    "model_waits",
    "progress_bar",
    "render_summary",
    "say_failures",
]


_LEVELS: Final = (
    ("compaction: error:", "error"),
    ("compaction: note:", "warning"),
    ("not restored", "error"),
)


class JsonLines(io.TextIOBase):
    """stderr as JSON lines: a line that is a JSON object passes as it is, any other (our notes,
    errors and stop lines, a library's message) becomes `{"level", "event", "timestamp"}`."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._pending = ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            self._stream.write(self._json(line) + "\n")
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    @staticmethod
    def _json(line: str) -> str:
        if line.startswith("{"):
            try:
                json.loads(line)
            except ValueError:
                pass
            else:
                return line
        level = next((name for prefix, name in _LEVELS if line.startswith(prefix)), "info")
        stamp = datetime.now(UTC).isoformat()
        return json.dumps({"level": level, "event": line, "timestamp": stamp}, ensure_ascii=False)


def configure_logging(log_format: LogFormat, *, quiet: bool) -> None:
    """Route structlog to stderr as console lines or JSON; quiet keeps warnings and errors only.

    With JSON, every later stderr line is JSON (`JsonLines`), not only the log's."""
    if log_format is LogFormat.JSON and not isinstance(sys.stderr, JsonLines):
        sys.stderr = JsonLines(sys.stderr)
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
        TextColumn("{task.fields[model]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(file=sys.stderr),
        transient=True,
    ) as progress:
        task = progress.add_task(description, total=total, failed=0, model="")
        failed = retries = pauses = 0

        def advance(outcome: Outcome) -> None:
            nonlocal failed, retries, pauses
            failed += outcome.failed
            more_retries, more_pauses = model_waits(outcome)
            retries, pauses = retries + more_retries, pauses + more_pauses
            progress.update(task, advance=1, failed=failed, model=model_progress(retries, pauses))

        yield advance


def model_waits(outcome: object) -> tuple[int, int]:
    """(retries, rate-limit pauses) of a finished session's model calls, from its report."""
    report = getattr(outcome, "report", None)
    if not isinstance(report, CompressReport):
        return 0, 0
    summary = report.summary
    writer = report.model_failure if isinstance(summary, UnsetType) else summary.writer
    if isinstance(writer, UnsetType):
        return 0, 0
    return writer.retries, writer.rate_limit_pauses


def model_progress(retries: int, pauses: int) -> str:
    """The progress line's model part: retries and rate-limit pauses so far (none: nothing)."""
    if not retries and not pauses:
        return ""
    return f"{retries} retries, {pauses} rate-limit pauses"


def model_spend_line(spend: ModelSpend) -> str:
    """One line of what a model run was billed (the totals `summary.json` holds as `model_spend`)."""
    cost = "not priced" if spend.cost_usd is None else f"${spend.cost_usd:.6f}"
    return (
        f"model: {spend.calls} calls for {spend.sessions} sessions ({spend.retries} retries, "
        f"{spend.rate_limit_pauses} rate-limit pauses, {spend.retry_wait_seconds:.1f}s waited, "
        f"{spend.repairs} repairs); billed {spend.billed_input_tokens:,} input tokens "
        f"({spend.cache_read_tokens:,} cache read, {spend.cache_write_tokens:,} cache write), "
        f"{spend.billed_output_tokens:,} output; cost {cost}"
    )


def render_summary(
    outcomes: Mapping[str, Outcome],
    report_dir: Path | str,
    elapsed_ms: float,
    spend: ModelSpend | None = None,
    achieved: Sequence[str] = (),
) -> None:
    """The end-of-run table: sessions by status, what the run achieved (`achieved`: its totals
    lines), the most frequent finding codes, what a model was billed, where reports are."""
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
    agents = unsupported_by_agent(outcome.report for outcome in outcomes.values())
    if agents:  # other agents' files: named, so a user sees whose sessions were left alone
        console.print("unsupported-format by agent: " + ", ".join(f"{a} {n}" for a, n in agents.items()))
    for line in achieved:
        console.print(line, soft_wrap=True)  # a log keeps it whole, not cut at 80 columns
    if codes:
        top = Table(title="most frequent findings (errors and warnings)", show_edge=False)
        top.add_column("code")
        top.add_column("findings", justify="right")
        for code, count in codes.most_common(8):
            top.add_row(code, str(count))
        console.print(top)
    if spend is not None:
        console.print(model_spend_line(spend))
    console.print(f"reports: {report_dir}")


def say_failures(lines: Sequence[str], counts: Mapping[str, int], achieved: Sequence[str] = ()) -> None:
    """What `--quiet` still prints on stderr: one line per failed session and, when any failed,
    the run's counts and what it achieved (`achieved`: its totals line), so a nightly log sees a
    failing night and how far it got."""
    if not lines:
        return
    for line in lines:
        print(f"compaction: error: {line}", file=sys.stderr)
    total = ", ".join(f"{count} {name}" for name, count in sorted(counts.items()))
    done = f"; {achieved[0]}" if achieved else ""
    print(f"compaction: error: {len(lines)} session(s) failed ({total}){done}", file=sys.stderr)
