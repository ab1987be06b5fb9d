"""A token benchmark's summary as CSV rows: every figure of `tokens.json`, one row each
(`CSV_COLUMNS`), overall, per corpus, per agent, per family and client version, and per session."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

import msgspec
from msgspec import UNSET

from pipeline.jobs.tokens.by_corpus import (
    ACTIVE,
    OVERALL,
    SESSION,
    VIEWS,
    ClassTotals,
    Group,
    SessionRow,
    TokensSummary,
)
from pipeline.jobs.tokens.by_family import FamilyFigures, FamilyUsage
from pipeline.jobs.tokens.job import SEED_RECORD

__all__ = ["CSV_COLUMNS", "csv_rows"]

CSV_COLUMNS: Final = ("level", "corpus", "session", "view", "class", "name", "estimator", "figure", "value")


def _figures(prefix: tuple[str, str, str], group: Group) -> Iterator[tuple[Any, ...]]:
    level, corpus, session = prefix
    for view in VIEWS:
        for name, value in group.totals.get(view, {}).items():
            yield level, corpus, session, view, "", "", name, "tokens", value
        for view_name, record in group.totals.get(SEED_RECORD, {}).items():
            if view_name == view:
                yield level, corpus, session, view, "", "", SEED_RECORD, "tokens", record
    for kind, entry in group.classes.items():
        yield from _class_figures(prefix, kind, "", entry)
        for name, named in (entry.names if entry.names is not UNSET else {}).items():
            yield from _class_figures(prefix, kind, name, named)
    for reference, per_estimator in group.errors.items():
        for name, row in per_estimator.items():
            for kind, error in row.items():
                yield level, corpus, session, SESSION, kind, "", name, f"error_vs_{reference}", error
    for name, usage in group.usage.items():
        for figure, value in msgspec.structs.asdict(usage).items():
            yield level, corpus, session, ACTIVE, "", "", name, f"billed_{figure}", value
    yield from _family_rows(prefix, group.by_family)
    yield level, corpus, session, ACTIVE, "", "", SEED_RECORD, "need_compaction", group.need_compaction


def _class_figures(
    prefix: tuple[str, str, str], kind: str, name: str, entry: ClassTotals
) -> Iterator[tuple[Any, ...]]:
    level, corpus, session = prefix
    for view in VIEWS:
        counts = getattr(entry, view)
        for estimator, value in (counts if counts is not UNSET else {}).items():
            yield level, corpus, session, view, kind, name, estimator, "tokens", value
        for figure in ("pieces", "bytes"):
            values = getattr(entry, figure)
            if values is not UNSET and view in values:
                yield level, corpus, session, view, kind, name, "", figure, values[view]


def _session_figures(row: SessionRow) -> Iterator[tuple[Any, ...]]:
    prefix = ("session", row.corpus, row.label)
    if row.session is UNSET or row.active_chain is UNSET or row.classes is UNSET:
        yield *prefix, "", "", "", "", "status", row.status
        return
    for view, values in ((SESSION, row.session), (ACTIVE, row.active_chain)):
        for name, value in values.items():
            yield *prefix, view, "", "", name, "tokens", value
        if row.seed_record is not UNSET and view in row.seed_record:
            yield *prefix, view, "", "", SEED_RECORD, "tokens", row.seed_record[view]
    for kind, views in row.classes.items():
        for view in VIEWS:
            for estimator, value in getattr(views, view).items():
                yield *prefix, view, kind, "", estimator, "tokens", value
    if row.models is not UNSET and row.models.family is not None:
        yield *prefix, ACTIVE, "", row.models.family, "", "family_switches", row.models.switches
    for name, fit in (row.usage.fits if row.usage is not UNSET else {}).items():
        for figure, value in msgspec.structs.asdict(fit).items():
            if figure != "estimator":
                yield *prefix, ACTIVE, "", "", name, f"billed_{figure}", value


def csv_rows(summary: TokensSummary) -> Iterator[tuple[Any, ...]]:
    """Every figure of the summary as one CSV row (see `CSV_COLUMNS`)."""
    yield from _figures(("overall", OVERALL, ""), summary.overall)
    for corpus, group in summary.corpora.items():
        yield from _figures(("corpus", corpus, ""), group)
    for fmt, group in summary.by_format.items():
        yield from _figures(("agent", fmt, ""), group)
    for row in summary.sessions:
        yield from _session_figures(row)


def _family_rows(prefix: tuple[str, str, str], usage: dict[str, FamilyUsage]) -> Iterator[tuple[Any, ...]]:
    """CSV rows of the per-family figures (`name` is the family; per client version, `class` is
    the version)."""
    level, corpus, session = prefix
    for family, entry in usage.items():
        yield level, corpus, session, "active_chain", "", family, "", "family_sessions", entry.sessions
        if entry.calibration is not UNSET:
            fitted, auto = entry.calibration, (level, corpus, session, "active_chain", "", family, "auto")
            yield (*auto, "family_fit_sessions", fitted.fit_sessions)
            yield (*auto, "family_fitted", int(fitted.fitted))
        for name, figures in entry.estimators.items():
            yield from _figure_rows((level, corpus, session, ""), family, name, figures)
        for version, per_estimator in entry.client_versions.items():
            for name, figures in per_estimator.items():
                yield from _figure_rows((level, corpus, session, version), family, name, figures)


def _figure_rows(
    prefix: tuple[str, str, str, str], family: str, name: str, figures: FamilyFigures
) -> Iterator[tuple[Any, ...]]:
    level, corpus, session, version = prefix
    for figure in FamilyFigures.__struct_fields__:
        value = getattr(figures, figure)
        yield level, corpus, session, "active_chain", version, family, name, f"family_billed_{figure}", value
