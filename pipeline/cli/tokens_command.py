"""`compaction tokens`: how many tokens sessions hold, and how far each estimator is from the truth.

`tokens_command` describes the run to the fleet loop: every session goes through `tokens_session`
in worker processes (one report per session as for the other jobs); the reports are summed per
corpus (one per root) and overall; the tables are printed and, with `--out`, tokens.json,
tokens.csv and PNG charts written. Real tokenizers are optional: a missing extra stops the
command before any work with the one-line install hint.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from msgspec import UNSET
from rich.console import Console
from rich.table import Table

from pipeline.cli.fleet_command import FleetCommand, default_report_dir
from pipeline.cli.validate_command import needs_compaction
from pipeline.errors import UsageError
from pipeline.estimate import calibration
from pipeline.estimate.estimators import EstimatorName, UnknownEstimator, parse_estimators
from pipeline.estimate.real import MissingExtra, check_available
from pipeline.execute.seam import RunResult
from pipeline.execute.session_tasks import BoundJob
from pipeline.jobs.tokens.auto import auto_tokenizers
from pipeline.jobs.tokens.by_corpus import ACTIVE, SESSION, Group, TokensSummary, summarize
from pipeline.jobs.tokens.by_family import FamilyUsage, version_key
from pipeline.jobs.tokens.charts import ChartData, ChartsUnavailable, write_charts
from pipeline.jobs.tokens.job import SEED_RECORD, tokens_session
from pipeline.jobs.tokens.options import TokensOptions
from pipeline.jobs.tokens.summary_csv import CSV_COLUMNS, csv_rows
from pipeline.publish.files import write_bytes_atomic
from pipeline.read.discover import SessionFile
from pipeline.report.render import json_bytes
from pipeline.settings import Settings

__all__ = ["tokens_command"]

JSON_NAME: Final = "tokens.json"
CSV_NAME: Final = "tokens.csv"
TABLE_WIDTH: Final = 160  # columns of the tables when stdout is not a terminal


def _human(value: float) -> str:
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"{value / limit:.2f}{suffix}"
    return f"{value:.0f}"


def _percent(value: float | None) -> str:
    return "" if value is None else f"{value * 100:+.1f}%"


def _corpus_table(summary: TokensSummary) -> Table:
    table = Table(title="Tokens per corpus: whole sessions / active chains", show_edge=False)
    for column in ("corpus", "sessions", "MB"):
        table.add_column(column, justify="left" if column == "corpus" else "right")
    for name in (*summary.estimators, SEED_RECORD):
        table.add_column(name, justify="right")
    for corpus, group in [*summary.corpora.items(), ("all", summary.overall)]:
        whole, active = group.totals.get(SESSION, {}), group.totals.get(ACTIVE, {})
        cells = [
            f"{_human(whole.get(name, 0))} / {_human(active.get(name, 0))}" for name in summary.estimators
        ]
        record = group.totals.get(SEED_RECORD, {})
        cells.append(f"{_human(record.get(SESSION, 0))} / {_human(record.get(ACTIVE, 0))}")
        table.add_row(corpus, str(group.sessions), f"{group.bytes / 1e6:.1f}", *cells)
    return table


def _agents_line(summary: TokensSummary) -> str:
    """Sessions per agent format, and how many compress would compact at the current target."""
    agents = ", ".join(
        f"{fmt} {group.sessions} ({group.need_compaction} would need compaction)"
        for fmt, group in summary.by_format.items()
    )
    overall = summary.overall
    return (
        f"{overall.need_compaction} of {overall.sessions} sessions would need compaction at the current "
        f"target; by agent: {agents}"
    )


def _whole(entry: object) -> dict[str, int]:
    values = getattr(entry, SESSION)
    return values if values is not UNSET else {}


def _class_table(summary: TokensSummary) -> Table:
    overall, reference, estimators = summary.overall, summary.reference, summary.estimators
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
    errors = overall.errors.get(reference, {}) if reference else {}
    rows = sorted(overall.classes.items(), key=lambda kv: -max(_whole(kv[1]).values(), default=0))
    for kind, entry in rows:
        pieces = entry.pieces.get(SESSION, 0) if entry.pieces is not UNSET else 0
        if not pieces:
            continue
        cells = [_human(_whole(entry).get(name, 0)) for name in estimators]
        cells += [_percent(errors.get(name, {}).get(kind)) for name in others]
        table.add_row(kind, str(pieces), *cells)
    if others:
        table.add_row(
            "all", "", *[""] * len(estimators), *[_percent(errors.get(n, {}).get("all")) for n in others]
        )
    return table


def _usage_table(group: Group) -> Table | None:
    if not group.usage:
        return None
    table = Table(
        title="Against billed usage: billed = c + slope x (estimate + framing) per session (1: right scale)",
        show_edge=False,
    )
    for column in ("estimator", "sessions", "turns", "median slope", "slope IQR", "median residual"):
        table.add_column(column, justify="left" if column == "estimator" else "right")
    for name, figures in group.usage.items():
        table.add_row(
            name,
            str(figures.sessions),
            str(figures.turns),
            f"{figures.median_slope:.3f}",
            f"{figures.slope_q1:.2f}-{figures.slope_q3:.2f}",
            f"{figures.median_relative_rmse * 100:.2f}%",
        )
    return table


def _family_table(summary: TokensSummary) -> Table | None:
    usage = summary.overall.by_family
    if not any(entry.estimators for entry in usage.values()):
        return None
    names = [
        name
        for name in (*summary.estimators, SEED_RECORD)
        if any(name in e.estimators for e in usage.values())
    ]
    table = Table(
        title="Billed slope per model family: median slope / median |slope - 1| (its quartiles)",
        show_edge=False,
    )
    table.add_column("family")
    table.add_column("sessions", justify="right")
    for name in names:
        table.add_column(name, justify="right")
    fitted = any(entry.calibration is not UNSET for entry in usage.values())
    if fitted:
        table.add_column("auto's constants")
    for family, entry in usage.items():
        cells = []
        for name in names:
            figures = entry.estimators.get(name)
            cells.append(
                ""
                if figures is None
                else f"{figures.median_slope:.3f} / {figures.median_abs_slope_error:.3f}"
                f" ({figures.abs_slope_error_q1:.3f}-{figures.abs_slope_error_q3:.3f})"
            )
        table.add_row(family, str(entry.sessions), *cells, *([_fit_cell(entry)] if fitted else []))
    return table


def _fit_cell(entry: FamilyUsage) -> str:
    """Whose constants `auto` used for a family, and on how many of its sessions they were fitted."""
    fit = entry.calibration
    if fit is UNSET:
        return ""
    if fit.reason is UNSET:
        return f"fitted on {fit.fit_sessions}"
    return f"{fit.reason} ({fit.fit_sessions}): {fit.borrowed_from}'s"


def render_tables(summary: TokensSummary, report_dir: Path, out: Path | None) -> None:
    """The end-of-run tables on stdout."""
    console = Console(file=sys.stdout, highlight=False)
    if not console.is_terminal:  # logs and CI: wide enough that no figure wraps
        console = Console(file=sys.stdout, highlight=False, width=TABLE_WIDTH)
    console.print(_corpus_table(summary))
    console.print(_agents_line(summary), soft_wrap=True)
    console.print(_class_table(summary))
    for table in (_usage_table(summary.overall), _family_table(summary)):
        if table is not None:
            console.print(table)
    console.print(
        f"calibration {summary.calibration_version}; session reports: {report_dir}"
        + (f"; figures and charts: {out}" if out else "")
    )


def _csv_bytes(summary: TokensSummary) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    writer.writerows(csv_rows(summary))
    return buffer.getvalue().encode("utf-8")


def _chart_data(summary: TokensSummary) -> ChartData:
    overall, reference, estimators = summary.overall, summary.reference, summary.estimators
    errors = overall.errors.get(reference, {}) if reference else {}
    fits = [row.usage.fits for row in summary.sessions if row.usage is not UNSET]
    return ChartData(
        sizes={corpus: group.sizes for corpus, group in summary.corpora.items()},
        size_estimator=summary.size_estimator,
        class_errors={name: {k: v for k, v in row.items() if k != "all"} for name, row in errors.items()},
        reference=reference,
        class_tokens={
            name: {kind: _whole(entry).get(name, 0) for kind, entry in overall.classes.items()}
            for name in estimators
        },
        slopes={name: [f[name].slope for f in fits if name in f] for name in (*estimators, SEED_RECORD)},
        family_slopes=_family_slopes(summary),
        version_slopes=_version_slopes(summary),
        borrowed={
            family: entry.calibration.borrowed_from
            for family, entry in summary.overall.by_family.items()
            if entry.calibration is not UNSET
            and entry.calibration.borrowed_from is not UNSET
            and not entry.calibration.fitted
        },
    )


def _version_slopes(summary: TokensSummary) -> dict[str, list[float]]:
    """Client version -> per-session slopes of the estimator the family chart shows."""
    shown = (
        EstimatorName.AUTO.value if EstimatorName.AUTO.value in summary.estimators else summary.estimators[0]
    )
    slopes: dict[str, list[float]] = {}
    for row in summary.sessions:
        if row.usage is UNSET or row.client_version is UNSET or shown not in row.usage.fits:
            continue
        slopes.setdefault(row.client_version, []).append(row.usage.fits[shown].slope)
    return {version: slopes[version] for version in sorted(slopes, key=version_key)}


def _family_slopes(summary: TokensSummary) -> dict[str, dict[str, list[float]]]:
    """Family -> estimator -> per-session slopes (`auto` alone when it ran: the family's own fit)."""
    shown = (
        [EstimatorName.AUTO.value] if EstimatorName.AUTO.value in summary.estimators else summary.estimators
    )
    slopes: dict[str, dict[str, list[float]]] = {}
    for row in summary.sessions:
        if row.usage is UNSET or row.models is UNSET or row.models.family is None:
            continue
        for name in shown:
            if name in row.usage.fits:
                slopes.setdefault(row.models.family, {}).setdefault(name, []).append(
                    row.usage.fits[name].slope
                )
    return dict(sorted(slopes.items()))


def write_outputs(summary: TokensSummary, out: Path) -> tuple[Path, ...]:
    """tokens.json, tokens.csv and the charts (charts are skipped, with the hint, without matplotlib)."""
    write_bytes_atomic(out / JSON_NAME, json_bytes(summary))
    write_bytes_atomic(out / CSV_NAME, _csv_bytes(summary))
    written = [out / JSON_NAME, out / CSV_NAME]
    try:
        written.extend(write_charts(_chart_data(summary), out))
    except ChartsUnavailable as exc:
        print(f"compaction: {exc}", file=sys.stderr)
    return tuple(written)


def _estimators(given: str) -> tuple[EstimatorName, ...]:
    """The estimators named, each one available here (a missing extra is a usage error)."""
    try:
        estimators = parse_estimators(given.split(","))
        if not estimators:
            raise UnknownEstimator(given)
        for name in estimators:
            if name.is_real:
                check_available(name.value)
            if name is EstimatorName.AUTO:  # any session may need any family's tokenizer
                for needed in auto_tokenizers():
                    check_available(needed.value)
    except (UnknownEstimator, MissingExtra) as exc:
        raise UsageError(str(exc)) from exc
    return tuple(estimators)


def tokens_command(args: argparse.Namespace, settings: Settings) -> FleetCommand[TokensSummary]:
    """The `tokens` run: its options, where its reports go, how its outcomes are summed and shown."""
    options = TokensOptions(
        settings.sweep, _estimators(settings.tokens.estimators), settings.tokens.max_names_per_class
    )
    work = BoundJob(tokens_session, options)
    needs = needs_compaction(settings.compress)
    out = args.out.resolve() if args.out else None
    if isinstance(args.report_dir, str):
        raise UsageError("tokens writes its reports to a local directory: --report-dir must not be a URL")
    if args.report_dir:
        report_dir = args.report_dir.resolve()
    else:
        report_dir = (out / "sessions") if out else default_report_dir("tokens")

    def summary(result: RunResult, sessions: Sequence[SessionFile]) -> TokensSummary:
        corpora = {session.report_label: session.root_label for session in sessions}
        names = [name.value for name in options.estimators]
        version = calibration.CALIBRATION_VERSION
        return summarize(
            result.outcomes,
            corpora,
            names,
            calibration_version=version,
            elapsed_ms=result.elapsed_ms,
            needs=needs,
        )

    def finish(summary: TokensSummary) -> None:
        if out is not None:
            write_outputs(summary, out)

    return FleetCommand(
        name="tokens",
        work_for=lambda session: work,
        destination=str(report_dir),
        per_code=settings.sweep.findings_per_code,
        resume=settings.sweep.resume,
        summarize=summary,
        present=lambda summary, result: render_tables(summary, report_dir, out),
        finish=finish,
    )
