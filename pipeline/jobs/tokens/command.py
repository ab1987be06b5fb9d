"""`compaction tokens`: how many tokens sessions hold, and how far each estimator is from the truth.

`add_arguments` declares the subcommand's flags; `run` sends every session through
`tokens_session` in worker processes (`runner.run_sessions`, one report per session as for the
other jobs), sums the reports per corpus (one per root) and overall, prints the tables and,
with `--out`, writes tokens.json, tokens.csv and PNG charts. Real tokenizers are optional: a
missing extra stops the command before any work with the one-line install hint.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from rich.console import Console
from rich.table import Table

from pipeline.estimate import calibration
from pipeline.estimate.estimators import DEFAULT_ESTIMATORS, EstimatorName, UnknownEstimator, parse_estimators
from pipeline.estimate.real import MissingExtra, check_available
from pipeline.jobs.tokens.charts import ChartData, ChartsUnavailable, write_charts
from pipeline.jobs.tokens.fleet import CSV_COLUMNS, OVERALL, csv_rows, summarize
from pipeline.jobs.tokens.job import MAX_NAMES_PER_CLASS, SEED_RECORD, Scope, TokensOptions, tokens_session
from pipeline.publish import write_bytes_atomic, write_json_atomic
from pipeline.read.discover import SessionFile
from pipeline.run.console import progress_bar
from pipeline.run.runner import RunResult, run_sessions_blocking
from pipeline.vocabulary import LeafPolicy

__all__ = ["add_arguments", "run"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
JSON_NAME: Final = "tokens.json"
CSV_NAME: Final = "tokens.csv"
TABLE_WIDTH: Final = 160  # columns of the tables when stdout is not a terminal


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `tokens` subcommand's own flags (the CLI adds the ones every command shares)."""
    parser.add_argument("--out", type=Path, help="write tokens.json, tokens.csv and PNG charts here")
    parser.add_argument(
        "--estimators",
        metavar="NAMES",
        help="comma-separated: "
        + ", ".join(name.value for name in EstimatorName)
        + " (default: seed,calibrated; real tokenizers need the tokenizers extra)",
    )
    parser.add_argument(
        "--leaf-policy",
        choices=[p.value for p in LeafPolicy],
        help="how the active chain is chosen (default: auto)",
    )


def _human(value: float) -> str:
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"{value / limit:.2f}{suffix}"
    return f"{value:.0f}"


def _percent(value: float | None) -> str:
    return "" if value is None else f"{value * 100:+.1f}%"


def _corpus_table(summary: Mapping[str, Any], estimators: Sequence[str]) -> Table:
    table = Table(title="Tokens per corpus: whole sessions / active chains", show_edge=False)
    for column in ("corpus", "sessions", "MB"):
        table.add_column(column, justify="left" if column == "corpus" else "right")
    for name in (*estimators, SEED_RECORD):
        table.add_column(name, justify="right")
    groups = [*summary["corpora"].items(), (OVERALL, summary[OVERALL])]
    for corpus, group in groups:
        totals = group["totals"]
        whole, active = totals.get(Scope.SESSION, {}), totals.get(Scope.ACTIVE, {})
        cells = [f"{_human(whole.get(name, 0))} / {_human(active.get(name, 0))}" for name in estimators]
        record = totals.get(SEED_RECORD, {})
        cells.append(f"{_human(record.get(Scope.SESSION, 0))} / {_human(record.get(Scope.ACTIVE, 0))}")
        table.add_row(corpus, str(group["sessions"]), f"{group['bytes'] / 1e6:.1f}", *cells)
    return table


def _class_table(summary: Mapping[str, Any], estimators: Sequence[str]) -> Table:
    overall = summary[OVERALL]
    reference = summary["reference"]
    table = Table(
        title="Tokens by content class, whole sessions (all corpora)"
        + (f"; error against {reference}" if reference else ""),
        show_edge=False,
    )
    table.add_column("class")
    table.add_column("pieces", justify="right")
    for name in estimators:
        table.add_column(name, justify="right")
    others = [name for name in estimators if name != reference] if reference else []
    for name in others:
        table.add_column(f"{name} err", justify="right")
    errors = overall["errors"].get(reference, {}) if reference else {}
    rows = sorted(
        overall["classes"].items(), key=lambda kv: -max(kv[1].get(Scope.SESSION, {}).values(), default=0)
    )
    for kind, entry in rows:
        pieces = (entry.get("pieces") or {}).get(Scope.SESSION, 0)
        if not pieces:
            continue
        cells = [_human(entry.get(Scope.SESSION, {}).get(name, 0)) for name in estimators]
        cells += [_percent(errors.get(name, {}).get(kind)) for name in others]
        table.add_row(kind, str(pieces), *cells)
    if others:
        table.add_row(
            "all", "", *[""] * len(estimators), *[_percent(errors.get(n, {}).get("all")) for n in others]
        )
    return table


def _usage_table(summary: Mapping[str, Any]) -> Table | None:
    usage = summary[OVERALL]["usage"]
    if not usage:
        return None
    table = Table(
        title="Against billed usage: billed = c + slope x (estimate + framing) per session (1: right scale)",
        show_edge=False,
    )
    for column in ("estimator", "sessions", "turns", "median slope", "slope IQR", "median residual"):
        table.add_column(column, justify="left" if column == "estimator" else "right")
    for name, figures in usage.items():
        table.add_row(
            name,
            str(figures["sessions"]),
            str(figures["turns"]),
            f"{figures['median_slope']:.3f}",
            f"{figures['slope_q1']:.2f}-{figures['slope_q3']:.2f}",
            f"{figures['median_relative_rmse'] * 100:.2f}%",
        )
    return table


def render_tables(summary: Mapping[str, Any], report_dir: Path, out: Path | None) -> None:
    """The end-of-run tables on stdout."""
    console = Console(file=sys.stdout, highlight=False)
    if not console.is_terminal:  # logs and CI: wide enough that no figure wraps
        console = Console(file=sys.stdout, highlight=False, width=TABLE_WIDTH)
    estimators = summary["estimators"]
    console.print(_corpus_table(summary, estimators))
    console.print(_class_table(summary, estimators))
    usage = _usage_table(summary)
    if usage is not None:
        console.print(usage)
    console.print(
        f"calibration {summary['calibration_version']}; session reports: {report_dir}"
        + (f"; figures and charts: {out}" if out else "")
    )


def _csv_bytes(summary: Mapping[str, Any]) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    writer.writerows(csv_rows(summary))
    return buffer.getvalue().encode("utf-8")


def _chart_data(summary: Mapping[str, Any]) -> ChartData:
    overall = summary[OVERALL]
    reference = summary["reference"]
    estimators = summary["estimators"]
    errors = overall["errors"].get(reference, {}) if reference else {}
    return ChartData(
        sizes={corpus: group["sizes"] for corpus, group in summary["corpora"].items()},
        size_estimator=summary["size_estimator"],
        class_errors={name: {k: v for k, v in row.items() if k != "all"} for name, row in errors.items()},
        reference=reference,
        class_tokens={
            name: {
                kind: entry.get(Scope.SESSION, {}).get(name, 0) for kind, entry in overall["classes"].items()
            }
            for name in estimators
        },
        slopes={
            name: [
                row["usage"]["fits"][name]["slope"]
                for row in summary["sessions"]
                if name in (row.get("usage") or {}).get("fits", {})
            ]
            for name in (*estimators, SEED_RECORD)
        },
    )


def write_outputs(summary: Mapping[str, Any], out: Path) -> tuple[Path, ...]:
    """tokens.json, tokens.csv and the charts (charts are skipped, with the hint, without matplotlib)."""
    write_json_atomic(out / JSON_NAME, dict(summary))
    write_bytes_atomic(out / CSV_NAME, _csv_bytes(summary))
    written = [out / JSON_NAME, out / CSV_NAME]
    try:
        written.extend(write_charts(_chart_data(summary), out))
    except ChartsUnavailable as exc:
        print(f"compaction: {exc}", file=sys.stderr)
    return tuple(written)


def _options(args: argparse.Namespace) -> TokensOptions:
    """Options from the parsed flags (the CLI fills in configured defaults for absent ones)."""
    given = getattr(args, "estimators", None) or ",".join(name.value for name in DEFAULT_ESTIMATORS)
    estimators = parse_estimators(given.split(","))
    if not estimators:
        raise UnknownEstimator(given)
    for name in estimators:
        if name.is_real:
            check_available(name.value)
    return TokensOptions(
        estimators=tuple(name.value for name in estimators),
        leaf_policy=getattr(args, "leaf_policy", None) or LeafPolicy.AUTO.value,
        max_names=getattr(args, "max_names", None) or MAX_NAMES_PER_CLASS,
    )


def run(args: argparse.Namespace, sessions: Sequence[SessionFile], jobs: int, report_dir: Path) -> int:
    """Run the benchmark over `sessions` and report it; the exit code follows the other commands."""
    try:
        options = _options(args)
    except (UnknownEstimator, MissingExtra) as exc:
        print(f"compaction: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    per_session = {session.report_label: (options,) for session in sessions}
    with progress_bar(len(sessions), enabled=not args.quiet, description="tokens") as advance:
        result: RunResult = run_sessions_blocking(
            sessions, tokens_session, per_session, jobs=jobs, report_dir=report_dir, on_outcome=advance
        )
    corpora = {session.report_label: session.root_label for session in sessions}
    summary = summarize(
        result.outcomes,
        corpora,
        options.estimators,
        calibration_version=calibration.CALIBRATION_VERSION,
        elapsed_ms=result.elapsed_ms,
    )
    write_json_atomic(report_dir / "summary.json", summary)
    out = args.out.resolve() if args.out else None
    if out is not None:
        write_outputs(summary, out)
    if not args.quiet:
        render_tables(summary, report_dir, out)
    return EXIT_FAILED if result.failed else EXIT_OK
