"""The fleet view of a token benchmark: per corpus and overall, from the typed session reports.

Class totals are summed, each estimator's error is measured against every real tokenizer that
ran, billed-usage slopes are summarized by their median and quartiles (`summary_csv` flattens every
figure into CSV rows). Nothing here reads transcript text or re-parses a report.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final

import msgspec
from msgspec import UNSET, UnsetType

from pipeline.estimate.estimators import EstimatorName
from pipeline.formats.content_pieces import ContentClass
from pipeline.jobs.tokens.by_family import (
    FamilyUsage,
    SlopeSample,
    by_family,
    family_counts,
    newest_version,
)
from pipeline.jobs.tokens.job import SEED_RECORD
from pipeline.report.documents import ContextTokensReport, Outcome, TokensReport
from pipeline.report.fleet import Interrupted, unsupported_by_agent
from pipeline.report.resume_context import ContextClass, ContextTokens
from pipeline.report.run_totals import UNKNOWN_FORMAT
from pipeline.report.sections import Section
from pipeline.report.tokens import ClassEntry, FitEntry, ModelsSection, TokensMeasure, UsageSection
from pipeline.vocabulary import SessionKind

__all__ = [
    "ACTIVE",
    "OVERALL",
    "SESSION",
    "SUMMARY_SCHEMA",
    "VIEWS",
    "ClassTotals",
    "Group",
    "SessionRow",
    "TokensSummary",
    "reference_of",
    "summarize",
]

SUMMARY_SCHEMA: Final = "session-compaction/tokens-summary/v1"
OVERALL: Final = "all"
SESSION, ACTIVE = "session", "active_chain"  # the two views every figure has
VIEWS: Final = (SESSION, ACTIVE)
# The tokenizer errors are charted against: the legacy Claude one first (same family as billing).
_REFERENCE_ORDER: Final = (
    EstimatorName.CLAUDE_LEGACY,
    EstimatorName.O200K,
    EstimatorName.CL100K,
    EstimatorName.DEEPSEEK,
    EstimatorName.QWEN,
)


class ClassTotals(Section, frozen=True, kw_only=True):
    """A content class summed over sessions (empty when no session held it)."""

    pieces: dict[str, int] | UnsetType = UNSET
    bytes: dict[str, int] | UnsetType = UNSET
    session: dict[str, int] | UnsetType = UNSET
    active_chain: dict[str, int] | UnsetType = UNSET
    names: dict[str, ClassTotals] | UnsetType = UNSET


class UsageFigures(Section, frozen=True, kw_only=True):
    sessions: int
    turns: int
    median_slope: float
    slope_q1: float
    slope_q3: float
    median_relative_rmse: float


class Group(Section, frozen=True, kw_only=True):
    """One corpus (or all of them): sessions, totals per view and class, errors, billed slopes."""

    sessions: int
    measured: int
    failed: int
    bytes: int
    totals: dict[str, dict[str, int]]  # view -> estimator -> tokens; `seed-record` -> view -> tokens
    images: dict[str, int]
    classes: dict[str, ClassTotals]
    errors: dict[str, dict[str, dict[str, float]]]  # reference -> estimator -> class -> error
    usage: dict[str, UsageFigures]
    sizes: list[int]  # active-chain size of every measured session, ascending
    families: dict[str, int]  # model family -> sessions
    by_family: dict[str, FamilyUsage]  # model family -> each estimator's billed slopes
    need_compaction: int  # main sessions whose active chain (seed) compress would compact at its target


class ClassViews(Section, frozen=True, kw_only=True):
    session: dict[str, int]
    active_chain: dict[str, int]


class UsageFits(Section, frozen=True, kw_only=True):
    fits: dict[str, FitEntry]


class SessionRow(Section, frozen=True, kw_only=True):
    label: str
    corpus: str
    status: str
    bytes: int | None
    session: dict[str, int] | UnsetType = UNSET
    active_chain: dict[str, int] | UnsetType = UNSET
    seed_record: dict[str, int] | UnsetType = msgspec.field(default=UNSET, name="seed-record")
    classes: dict[str, ClassViews] | UnsetType = UNSET
    usage: UsageSection | UnsetType = UNSET
    models: ModelsSection | UnsetType = UNSET
    client_version: str | UnsetType = UNSET  # the newest client version its records name


class TokensSummary(Section, frozen=True, kw_only=True):
    schema: str = SUMMARY_SCHEMA
    estimators: list[str]
    reference: str | None
    size_estimator: str
    calibration_version: str
    elapsed_ms: float
    overall: Group = msgspec.field(name=OVERALL)
    corpora: dict[str, Group]
    by_format: dict[str, Group]  # agent format -> its sessions' group
    sessions: list[SessionRow]
    interrupted: Interrupted | UnsetType = UNSET  # a run a signal stopped: what it left not done
    # Files of agents this tool recognizes but does not process yet, per agent (format id).
    unsupported_by_agent: dict[str, int] | UnsetType = UNSET


def reference_of(estimators: Sequence[str]) -> str | None:
    """The real tokenizer errors are shown against, when one ran."""
    return next((name.value for name in _REFERENCE_ORDER if name.value in estimators), None)


def _add(into: dict[str, int], values: Mapping[str, int]) -> None:
    for key, value in values.items():
        into[key] = into.get(key, 0) + value


class _ClassSum:
    """Running totals of one content class (and of each of its names)."""

    def __init__(self) -> None:
        self.seen = False
        self.views: dict[str, dict[str, int]] = {"pieces": {}, "bytes": {}, SESSION: {}, ACTIVE: {}}
        self.names: dict[str, _ClassSum] = {}

    def add(self, entry: ClassEntry) -> None:
        self.seen = True
        _add(self.views["pieces"], {SESSION: entry.pieces.session, ACTIVE: entry.pieces.active_chain})
        _add(self.views["bytes"], {SESSION: entry.bytes.session, ACTIVE: entry.bytes.active_chain})
        _add(self.views[SESSION], entry.session)
        _add(self.views[ACTIVE], entry.active_chain)
        for name, named in (entry.names if entry.names is not UNSET else {}).items():
            self.names.setdefault(name, _ClassSum()).add(named)

    def add_context(self, entry: ContextClass) -> None:
        """A class of a session read through the seam: its items, and its tokens in the file and
        in what the client sends (the seam's view of the active chain); bytes are not counted."""
        self.seen = True
        _add(self.views["pieces"], {SESSION: entry.items, ACTIVE: entry.context_items})
        _add(self.views[SESSION], entry.session)
        _add(self.views[ACTIVE], entry.context)
        for name, named in (entry.names if entry.names is not UNSET else {}).items():
            self.names.setdefault(name, _ClassSum()).add_context(named)

    def frozen(self) -> ClassTotals:
        if not self.seen:
            return ClassTotals()
        names = {name: total.frozen() for name, total in self.names.items()} if self.names else UNSET
        views = self.views
        return ClassTotals(
            pieces=views["pieces"],
            bytes=views["bytes"],
            session=views[SESSION],
            active_chain=views[ACTIVE],
            names=names,
        )


def _errors(
    classes: Mapping[str, ClassTotals], totals: Mapping[str, Mapping[str, int]], estimators: Sequence[str]
) -> dict[str, dict[str, dict[str, float]]]:
    """Relative error of every estimator against every real tokenizer, per class and overall."""
    errors: dict[str, dict[str, dict[str, float]]] = {}
    for reference in (name for name in estimators if EstimatorName(name).is_real):
        per_estimator: dict[str, dict[str, float]] = {}
        for name in (n for n in estimators if n != reference):
            row = {}
            for kind, entry in classes.items():
                whole = entry.session if entry.session is not UNSET else {}
                if whole.get(reference, 0):
                    row[kind] = round(whole.get(name, 0) / whole[reference] - 1, 4)
            truth = totals.get(SESSION, {}).get(reference, 0)
            if truth:
                row["all"] = round(totals[SESSION].get(name, 0) / truth - 1, 4)
            per_estimator[name] = row
        errors[reference] = per_estimator
    return errors


def _usage(fits: Iterable[Mapping[str, FitEntry]], estimators: Sequence[str]) -> dict[str, UsageFigures]:
    slopes: dict[str, list[float]] = {}
    residuals: dict[str, list[float]] = {}
    turns: Counter[str] = Counter()
    for session_fits in fits:
        for name, fit in session_fits.items():
            slopes.setdefault(name, []).append(fit.slope)
            residuals.setdefault(name, []).append(fit.relative_rmse)
            turns[name] += fit.turns
    usage = {}
    for name in (*estimators, SEED_RECORD):
        values = sorted(slopes.get(name, ()))
        if not values:
            continue
        quartiles = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
        usage[name] = UsageFigures(
            sessions=len(values),
            turns=turns[name],
            median_slope=round(statistics.median(values), 4),
            slope_q1=round(quartiles[0], 4),
            slope_q3=round(quartiles[2], 4),
            median_relative_rmse=round(statistics.median(residuals[name]), 4),
        )
    return usage


def _measure(outcome: Outcome) -> TokensMeasure | None:
    return outcome.report.tokens if isinstance(outcome.report, TokensReport) else None


def _context_measure(outcome: Outcome) -> ContextTokens | None:
    return outcome.report.tokens if isinstance(outcome.report, ContextTokensReport) else None


def _needs(outcome: Outcome, needs: Callable[[int], bool]) -> bool:
    """Whether compress would compact this session, by the estimator its plan uses (the seed's
    for Claude Code, the client's own for a session read through the seam, listed first); a
    subagent's transcript it skips."""
    report = outcome.report
    if report.session.kind is SessionKind.SUBAGENT:
        return False
    if isinstance(report, ContextTokensReport):
        context = report.tokens.context.get(report.tokens.estimators[0])
        return context is not None and needs(context)
    tokens = _measure(outcome)
    return tokens is not None and needs(tokens.seed_record.active_chain)


def _group(
    members: Sequence[tuple[str, Outcome]],
    estimators: Sequence[str],
    size_estimator: str,
    needs: Callable[[int], bool],
) -> Group:
    measured = [tokens for _, outcome in members if (tokens := _measure(outcome)) is not None]
    totals: dict[str, dict[str, int]] = {}
    images: dict[str, int] = {}
    classes = {kind.value: _ClassSum() for kind in ContentClass}
    for tokens in measured:
        _add(totals.setdefault(SESSION, {}), tokens.session)
        _add(totals.setdefault(ACTIVE, {}), tokens.active_chain)
        _add(
            totals.setdefault(SEED_RECORD, {}),
            {SESSION: tokens.seed_record.session, ACTIVE: tokens.seed_record.active_chain},
        )
        _add(images, {SESSION: tokens.images.session, ACTIVE: tokens.images.active_chain})
        for kind, entry in tokens.classes.items():
            classes.setdefault(kind, _ClassSum()).add(entry)
    contexts = [read for _, outcome in members if (read := _context_measure(outcome)) is not None]
    for context in contexts:  # sessions read through the seam: the context sent is their active chain
        _add(totals.setdefault(SESSION, {}), context.session)
        _add(totals.setdefault(ACTIVE, {}), context.context)
        for kind, centry in context.classes.items():
            classes.setdefault(kind, _ClassSum()).add_context(centry)
    frozen = {kind: total.frozen() for kind, total in classes.items()}
    return Group(
        sessions=len(members),
        measured=len(measured) + len(contexts),
        failed=sum(outcome.failed for _, outcome in members),
        bytes=sum(o.report.session.bytes for _, o in members if o.report.session.bytes is not UNSET),
        totals=totals,
        images=images,
        classes=frozen,
        errors=_errors(frozen, totals, estimators),
        usage=_usage((tokens.usage.fits for tokens in measured), estimators),
        sizes=sorted(
            [tokens.active_chain.get(size_estimator, 0) for tokens in measured]
            + [context.context.get(context.estimators[0], 0) for context in contexts]
        ),
        families=family_counts(samples := _slope_samples(members)),
        by_family=by_family(samples, [*estimators, SEED_RECORD]),
        need_compaction=sum(_needs(outcome, needs) for _, outcome in members),
    )


def _format(outcome: Outcome) -> str:
    fmt = outcome.report.session.format
    return UNKNOWN_FORMAT if isinstance(fmt, UnsetType) else fmt.value


def _slope_samples(members: Sequence[tuple[str, Outcome]]) -> list[SlopeSample]:
    """Each measured session's billed slopes, with its family and client version."""
    samples: list[SlopeSample] = []
    for _, outcome in members:
        version = _client_version(outcome)
        if (tokens := _measure(outcome)) is not None:
            samples.append(SlopeSample.of_chain(tokens, version))
        elif (context := _context_measure(outcome)) is not None:
            sample = SlopeSample.of_context(context, version)
            samples += [sample] if sample is not None else []
    return samples


def _client_version(outcome: Outcome) -> str:
    """The client version that wrote the session's newest lines (see `newest_version`)."""
    versions = outcome.report.session.client_versions
    return newest_version(versions if versions is not UNSET else [])


def _session_row(label: str, corpus: str, outcome: Outcome) -> SessionRow:
    size = outcome.report.session.bytes
    row = SessionRow(
        label=label, corpus=corpus, status=outcome.status.value, bytes=size if size is not UNSET else None
    )
    tokens = _measure(outcome)
    context = _context_measure(outcome)
    if context is not None:
        return msgspec.structs.replace(
            row,
            session=context.session,
            active_chain=context.context,
            classes={
                kind: ClassViews(session=e.session, active_chain=e.context)
                for kind, e in context.classes.items()
            },
        )
    if tokens is None:
        return row
    return msgspec.structs.replace(
        row,
        session=tokens.session,
        active_chain=tokens.active_chain,
        seed_record={SESSION: tokens.seed_record.session, ACTIVE: tokens.seed_record.active_chain},
        classes={
            kind: ClassViews(session=e.session, active_chain=e.active_chain)
            for kind, e in tokens.classes.items()
        },
        usage=tokens.usage,
        models=tokens.models,
        client_version=_client_version(outcome),
    )


def summarize(
    outcomes: Mapping[str, Outcome],
    corpora: Mapping[str, str],
    estimators: Sequence[str],
    *,
    calibration_version: str,
    elapsed_ms: float,
    needs: Callable[[int], bool],
) -> TokensSummary:
    """The whole benchmark: overall, per corpus (by root label), per agent format and per session.

    `outcomes` are keyed by report label, `corpora` maps each report label to its root label;
    `needs` says whether an active chain of so many seed tokens would be compacted.
    """
    size_estimator = (
        EstimatorName.CALIBRATED.value if EstimatorName.CALIBRATED.value in estimators else estimators[0]
    )
    members = sorted(outcomes.items())
    by_corpus: dict[str, list[tuple[str, Outcome]]] = {}
    by_format: dict[str, list[tuple[str, Outcome]]] = {}
    for label, outcome in members:
        by_corpus.setdefault(corpora[label], []).append((label, outcome))
        by_format.setdefault(_format(outcome), []).append((label, outcome))
    return TokensSummary(
        estimators=list(estimators),
        reference=reference_of(estimators),
        size_estimator=size_estimator,
        calibration_version=calibration_version,
        elapsed_ms=round(elapsed_ms, 1),
        overall=_group(members, estimators, size_estimator, needs),
        corpora={
            corpus: _group(group, estimators, size_estimator, needs)
            for corpus, group in sorted(by_corpus.items())
        },
        by_format={
            fmt: _group(group, estimators, size_estimator, needs) for fmt, group in sorted(by_format.items())
        },
        sessions=[_session_row(label, corpora[label], outcome) for label, outcome in members],
        unsupported_by_agent=unsupported_by_agent(outcome.report for _, outcome in members),
    )
