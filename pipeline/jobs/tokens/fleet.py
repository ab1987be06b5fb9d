"""The fleet view of a token benchmark: per corpus and overall, from the per-session reports.

Pure functions over `SessionOutcome` reports: class totals are summed, each estimator's error is
measured against every real tokenizer that ran, billed-usage slopes are summarized by their
median and quartiles, and every figure is also flattened into CSV rows. Nothing here reads
transcript text; the inputs are the content-free session reports.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

from pipeline.estimate.estimators import EstimatorName
from pipeline.formats.claude_code.pieces import ContentClass
from pipeline.jobs.tokens.job import SEED_RECORD, Scope
from pipeline.report.sessions import SessionOutcome

__all__ = [
    "CSV_COLUMNS",
    "OVERALL",
    "SUMMARY_SCHEMA",
    "csv_rows",
    "reference_of",
    "summarize",
]

SUMMARY_SCHEMA: Final = "session-compaction/tokens-summary/v1"
OVERALL: Final = "all"
CSV_COLUMNS: Final = ("level", "corpus", "session", "view", "class", "name", "estimator", "figure", "value")
# The tokenizer errors are charted against: the legacy Claude one first (same family as billing).
_REFERENCE_ORDER: Final = (
    EstimatorName.CLAUDE_LEGACY,
    EstimatorName.O200K,
    EstimatorName.CL100K,
    EstimatorName.DEEPSEEK,
    EstimatorName.QWEN,
)
_VIEWS: Final = (Scope.SESSION, Scope.ACTIVE)


def reference_of(estimators: Sequence[str]) -> str | None:
    """The real tokenizer errors are shown against, when one ran."""
    return next((name.value for name in _REFERENCE_ORDER if name.value in estimators), None)


def _add(into: dict[str, Any], values: Mapping[str, Any]) -> None:
    """Sum nested mappings of numbers into `into`."""
    for key, value in values.items():
        if isinstance(value, Mapping):
            _add(into.setdefault(key, {}), value)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            into[key] = into.get(key, 0) + value


def _errors(
    classes: Mapping[str, Any], totals: Mapping[str, Any], estimators: Sequence[str]
) -> dict[str, Any]:
    """Relative error of every estimator against every real tokenizer, per class and overall."""
    errors: dict[str, Any] = {}
    for reference in (name for name in estimators if EstimatorName(name).is_real):
        per_estimator: dict[str, dict[str, float]] = {}
        for name in (n for n in estimators if n != reference):
            row = {}
            for kind, entry in classes.items():
                truth = entry.get(Scope.SESSION, {}).get(reference, 0)
                if truth:
                    row[kind] = round(entry[Scope.SESSION].get(name, 0) / truth - 1, 4)
            truth = totals.get(Scope.SESSION, {}).get(reference, 0)
            if truth:
                row["all"] = round(totals[Scope.SESSION].get(name, 0) / truth - 1, 4)
            per_estimator[name] = row
        errors[reference] = per_estimator
    return errors


def _usage(fits: Iterable[Mapping[str, Any]], estimators: Sequence[str]) -> dict[str, Any]:
    slopes: dict[str, list[float]] = {}
    residuals: dict[str, list[float]] = {}
    turns: dict[str, int] = {}
    for session_fits in fits:
        for name, fit in session_fits.items():
            slopes.setdefault(name, []).append(fit["slope"])
            residuals.setdefault(name, []).append(fit["relative_rmse"])
            turns[name] = turns.get(name, 0) + fit["turns"]
    usage = {}
    for name in (*estimators, SEED_RECORD):
        values = sorted(slopes.get(name, ()))
        if not values:
            continue
        quartiles = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
        usage[name] = {
            "sessions": len(values),
            "turns": turns[name],
            "median_slope": round(statistics.median(values), 4),
            "slope_q1": round(quartiles[0], 4),
            "slope_q3": round(quartiles[2], 4),
            "median_relative_rmse": round(statistics.median(residuals[name]), 4),
        }
    return usage


def _group(
    members: Sequence[tuple[str, SessionOutcome]], estimators: Sequence[str], size_estimator: str
) -> dict[str, Any]:
    measured = [(label, outcome.report["tokens"]) for label, outcome in members if "tokens" in outcome.report]
    totals: dict[str, Any] = {}
    classes: dict[str, Any] = {kind.value: {} for kind in ContentClass}
    images: dict[str, Any] = {}
    for _, tokens in measured:
        _add(totals, {view: tokens[view] for view in _VIEWS})
        _add(totals, {SEED_RECORD: tokens[SEED_RECORD]})
        _add(images, tokens["images"])
        for kind, entry in tokens["classes"].items():
            _add(classes.setdefault(kind, {}), entry)
    return {
        "sessions": len(members),
        "measured": len(measured),
        "failed": sum(outcome.failed for _, outcome in members),
        "bytes": sum(int((outcome.report.get("session") or {}).get("bytes") or 0) for _, outcome in members),
        "totals": totals,
        "images": images,
        "classes": classes,
        "errors": _errors(classes, totals, estimators),
        "usage": _usage((tokens["usage"]["fits"] for _, tokens in measured), estimators),
        "sizes": sorted(tokens[Scope.ACTIVE].get(size_estimator, 0) for _, tokens in measured),
    }


def _session_row(label: str, corpus: str, outcome: SessionOutcome) -> dict[str, Any]:
    tokens = outcome.report.get("tokens")
    row: dict[str, Any] = {
        "label": label,
        "corpus": corpus,
        "status": outcome.status.value,
        "bytes": (outcome.report.get("session") or {}).get("bytes"),
    }
    if tokens is not None:
        row.update(
            {
                Scope.SESSION: tokens[Scope.SESSION],
                Scope.ACTIVE: tokens[Scope.ACTIVE],
                SEED_RECORD: tokens[SEED_RECORD],
                "classes": {
                    kind: {view: entry[view] for view in _VIEWS} for kind, entry in tokens["classes"].items()
                },
                "usage": tokens["usage"],
            }
        )
    return row


def summarize(
    outcomes: Mapping[str, SessionOutcome],
    corpora: Mapping[str, str],
    estimators: Sequence[str],
    *,
    calibration_version: str,
    elapsed_ms: float,
) -> dict[str, Any]:
    """The whole benchmark: overall, per corpus (by root label) and per session.

    `outcomes` are keyed by report label, `corpora` maps each report label to its root label.
    """
    size_estimator = (
        EstimatorName.CALIBRATED.value if EstimatorName.CALIBRATED.value in estimators else estimators[0]
    )
    members = sorted(outcomes.items())
    by_corpus: dict[str, list[tuple[str, SessionOutcome]]] = {}
    for label, outcome in members:
        by_corpus.setdefault(corpora[label], []).append((label, outcome))
    return {
        "schema": SUMMARY_SCHEMA,
        "estimators": list(estimators),
        "reference": reference_of(estimators),
        "size_estimator": size_estimator,
        "calibration_version": calibration_version,
        "elapsed_ms": round(elapsed_ms, 1),
        OVERALL: _group(members, estimators, size_estimator),
        "corpora": {
            corpus: _group(group, estimators, size_estimator) for corpus, group in sorted(by_corpus.items())
        },
        "sessions": [_session_row(label, corpora[label], outcome) for label, outcome in members],
    }


def _figures(prefix: tuple[str, str, str], group: Mapping[str, Any]) -> Iterator[tuple[Any, ...]]:
    level, corpus, session = prefix
    for view in _VIEWS:
        for name, value in (group.get("totals") or {}).get(view, {}).items():
            yield level, corpus, session, view, "", "", name, "tokens", value
        for view_name, value in ((group.get("totals") or {}).get(SEED_RECORD) or {}).items():
            if view_name == view:
                yield level, corpus, session, view, "", "", SEED_RECORD, "tokens", value
    for kind, entry in (group.get("classes") or {}).items():
        yield from _class_figures(prefix, kind, "", entry)
        for name, named in (entry.get("names") or {}).items():
            yield from _class_figures(prefix, kind, name, named)
    for reference, per_estimator in (group.get("errors") or {}).items():
        for name, row in per_estimator.items():
            for kind, value in row.items():
                yield level, corpus, session, Scope.SESSION, kind, "", name, f"error_vs_{reference}", value
    for name, usage in (group.get("usage") or {}).items():
        for figure, value in usage.items():
            if figure == "estimator":
                continue
            yield level, corpus, session, Scope.ACTIVE, "", "", name, f"billed_{figure}", value


def _class_figures(
    prefix: tuple[str, str, str], kind: str, name: str, entry: Mapping[str, Any]
) -> Iterator[tuple[Any, ...]]:
    level, corpus, session = prefix
    for view in _VIEWS:
        for estimator, value in (entry.get(view) or {}).items():
            yield level, corpus, session, view, kind, name, estimator, "tokens", value
        for figure in ("pieces", "bytes"):
            value = (entry.get(figure) or {}).get(view)
            if value is not None:
                yield level, corpus, session, view, kind, name, "", figure, value


def csv_rows(summary: Mapping[str, Any]) -> Iterator[tuple[Any, ...]]:
    """Every figure of the summary as one CSV row (see `CSV_COLUMNS`)."""
    yield from _figures(("overall", OVERALL, ""), summary[OVERALL])
    for corpus, group in summary["corpora"].items():
        yield from _figures(("corpus", corpus, ""), group)
    for row in summary["sessions"]:
        if Scope.SESSION not in row:
            yield "session", row["corpus"], row["label"], "", "", "", "", "status", row["status"]
            continue
        group = {
            "totals": {view: row[view] for view in _VIEWS} | {SEED_RECORD: row[SEED_RECORD]},
            "classes": row["classes"],
            "usage": {name: fit for name, fit in row["usage"]["fits"].items()},
        }
        yield from _figures(("session", row["corpus"], row["label"]), group)
