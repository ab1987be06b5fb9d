"""What a run achieved, as fleet totals: sessions by status, the bytes read, and what the run
wrote (resume-context tokens and bytes on disk, before and after; in place, the backups' bytes);
overall, per agent format and per root.

One fold (`fold_totals`) over per-session figures (`SessionFigures`), each taken from a session's
typed report (`report_figures`) and, in place, its receipt; no command sums its own. Pure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Final

import msgspec
from msgspec import UNSET, UnsetType

from pipeline.report.documents import (
    BriefReport,
    CompressReport,
    ContextCompressReport,
    ContextValidateReport,
    Outcome,
    Report,
    ValidateReport,
)
from pipeline.report.sections import Section
from pipeline.vocabulary import SessionKind, SessionStatus, SourceFormat

__all__ = [
    "UNKNOWN_FORMAT",
    "BackupBytes",
    "BackupFigure",
    "ChainTokens",
    "Change",
    "GroupTotals",
    "HeldTokens",
    "ResumeTokens",
    "RunTotals",
    "SessionFigures",
    "TokenChange",
    "TotalsOf",
    "fold_totals",
    "outcome_totals",
    "repair_figures",
    "report_figures",
]

UNKNOWN_FORMAT: Final = "unknown"  # a session no reader identified (a crash report names none)
RATIO_DIGITS: Final = 4


class TotalsOf(StrEnum):
    """Which figures a run's totals hold: what it read, what it wrote, what it wrote in place."""

    SWEEP = "sweep"  # validate: the tokens sessions hold, and how many would need compaction
    WRITTEN = "written"  # compress --out, repair --out: files written beside the originals
    IN_PLACE = "in-place"  # files replaced, each original kept as a backup


@dataclass(frozen=True, slots=True)
class TokenChange:
    """A compacted session's resume context, by the estimator its plan used."""

    estimator: str
    before: int  # the source's resume context (Claude Code's active chain, Codex's rebuilt items)
    after: int  # the candidate's
    target: int  # the most the candidate was to hold
    met: bool


@dataclass(frozen=True, slots=True)
class ChainTokens:
    """What a session holds by one estimator (validate), and whether it would need compaction."""

    estimator: str
    session: int
    active_chain: int
    needs_compaction: bool


@dataclass(frozen=True, slots=True)
class BackupFigure:
    """The backup an in-place replacement kept of its original."""

    original: int  # the original's bytes
    stored: int  # as stored (compressed or not)
    compression: str  # how it is stored (none, gzip, zstd)
    reused: bool  # an earlier verified backup of the same bytes: nothing new was stored


@dataclass(frozen=True, slots=True)
class SessionFigures:
    """One session's figures, as its report (and, in place, its receipt) gives them."""

    format: str
    root: str
    status: str
    failed: bool
    bytes: int | None  # the file as read (0: never read; None: not measured, as by `repair`)
    ms: float  # the session's own time
    written: tuple[int, int] | None = None  # bytes of the file before and of what was written
    tokens: TokenChange | None = None  # a written compaction's resume context
    backup: BackupFigure | None = None  # in place: the original's backup
    held: ChainTokens | None = None


class Change(Section, frozen=True, kw_only=True):
    """Bytes of the files a run wrote: before, after, and after / before (None: nothing written)."""

    before: int
    after: int
    ratio: float | None


class ResumeTokens(Section, frozen=True, kw_only=True):
    """The resume contexts of the compacted sessions by one estimator: before, after, their ratio,
    and the targets they were held to (summed, and as a share of before)."""

    sessions: int
    before: int
    after: int
    ratio: float | None
    target: int
    target_ratio: float | None
    target_met: int  # sessions whose candidate holds at most its target


class BackupBytes(Section, frozen=True, kw_only=True):
    """The backups an in-place run made: how many, the originals' bytes, as stored, and how (an
    earlier backup of the same bytes that was reused stores nothing new: only counted)."""

    backups: int
    original_bytes: int
    stored_bytes: int
    ratio: float | None  # stored / original
    by_compression: dict[str, int]  # none, gzip, zstd -> new backups
    reused: int


class HeldTokens(Section, frozen=True, kw_only=True):
    """What the sessions hold by one estimator, and how many would need compaction at the target."""

    sessions: int
    session: int
    active_chain: int
    need_compaction: int


class GroupTotals(Section, frozen=True, kw_only=True):
    """One group's totals (the whole run, one agent format, one root)."""

    sessions: int
    failed: int
    by_status: dict[str, int]
    bytes: int | UnsetType  # every session file as read (unset: the command does not measure them)
    session_ms: float  # each session's own time, summed (they ran concurrently under --jobs)
    tokens: dict[str, HeldTokens] | UnsetType = UNSET  # validate: estimator -> what sessions hold
    written: int | UnsetType = UNSET  # sessions whose file was written (candidate, or replaced)
    files: Change | UnsetType = UNSET  # those files' bytes, before and after
    resume_tokens: dict[str, ResumeTokens] | UnsetType = UNSET  # estimator -> compacted contexts
    backups: BackupBytes | UnsetType = UNSET  # in place


class RunTotals(Section, frozen=True, kw_only=True):
    """What a run achieved: over every session, per agent format, per root (as the user named it).
    The run's own time is the summary's `elapsed_ms`; each group's is its sessions' `session_ms`."""

    all: GroupTotals
    by_format: dict[str, GroupTotals]
    by_root: dict[str, GroupTotals]


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, RATIO_DIGITS) if whole else None


def _resume(changes: Sequence[TokenChange]) -> dict[str, ResumeTokens]:
    by_estimator: dict[str, list[TokenChange]] = {}
    for change in changes:
        by_estimator.setdefault(change.estimator, []).append(change)
    totals: dict[str, ResumeTokens] = {}
    for estimator, group in sorted(by_estimator.items()):
        before, after = sum(c.before for c in group), sum(c.after for c in group)
        target = sum(c.target for c in group)
        totals[estimator] = ResumeTokens(
            sessions=len(group),
            before=before,
            after=after,
            ratio=_ratio(after, before),
            target=target,
            target_ratio=_ratio(target, before),
            target_met=sum(c.met for c in group),
        )
    return totals


def _held(measures: Sequence[ChainTokens]) -> dict[str, HeldTokens]:
    by_estimator: dict[str, list[ChainTokens]] = {}
    for measure in measures:
        by_estimator.setdefault(measure.estimator, []).append(measure)
    return {
        estimator: HeldTokens(
            sessions=len(group),
            session=sum(m.session for m in group),
            active_chain=sum(m.active_chain for m in group),
            need_compaction=sum(m.needs_compaction for m in group),
        )
        for estimator, group in sorted(by_estimator.items())
    }


def _backups(figures: Sequence[SessionFigures]) -> BackupBytes:
    kept = [f.backup for f in figures if f.backup is not None]
    made = [backup for backup in kept if not backup.reused]
    original, stored = sum(b.original for b in made), sum(b.stored for b in made)
    return BackupBytes(
        backups=len(made),
        original_bytes=original,
        stored_bytes=stored,
        ratio=_ratio(stored, original),
        by_compression=dict(sorted(Counter(b.compression for b in made).items())),
        reused=len(kept) - len(made),
    )


def _group(figures: Sequence[SessionFigures], of: TotalsOf) -> GroupTotals:
    sizes = [f.bytes for f in figures]
    base = GroupTotals(
        sessions=len(figures),
        failed=sum(f.failed for f in figures),
        by_status=dict(sorted(Counter(f.status for f in figures).items())),
        bytes=UNSET if None in sizes else sum(size for size in sizes if size is not None),
        session_ms=round(sum(f.ms for f in figures), 1),
    )
    if of is TotalsOf.SWEEP:
        return msgspec.structs.replace(base, tokens=_held([f.held for f in figures if f.held is not None]))
    written = [f.written for f in figures if f.written is not None]
    before, after = sum(w[0] for w in written), sum(w[1] for w in written)
    return msgspec.structs.replace(
        base,
        written=len(written),
        files=Change(before=before, after=after, ratio=_ratio(after, before)),
        resume_tokens=_resume([f.tokens for f in figures if f.tokens is not None]),
        backups=_backups(figures) if of is TotalsOf.IN_PLACE else UNSET,
    )


def _by(
    figures: Sequence[SessionFigures], key: Callable[[SessionFigures], str], of: TotalsOf
) -> dict[str, GroupTotals]:
    groups: dict[str, list[SessionFigures]] = {}
    for figure in figures:
        groups.setdefault(key(figure), []).append(figure)
    return {name: _group(members, of) for name, members in sorted(groups.items())}


def fold_totals(figures: Iterable[SessionFigures], of: TotalsOf) -> RunTotals:
    """The run's totals: over every session, per agent format and per root."""
    every = list(figures)
    return RunTotals(
        all=_group(every, of),
        by_format=_by(every, lambda f: f.format, of),
        by_root=_by(every, lambda f: f.root, of),
    )


def _token_change(report: CompressReport | ContextCompressReport) -> TokenChange | None:
    tokens = report.tokens
    if isinstance(tokens.output, UnsetType) or isinstance(tokens.target, UnsetType):
        return None
    return TokenChange(
        estimator=tokens.estimator,
        before=tokens.active_chain,
        after=tokens.output,
        target=tokens.target,
        met=tokens.output <= tokens.target,
    )


def _written(report: Report) -> tuple[tuple[int, int], TokenChange | None] | None:
    """A candidate written (`compress --out`): the source's bytes and the candidate's, its tokens."""
    if not isinstance(report, CompressReport | ContextCompressReport):
        return None
    output, size = report.output, report.session.bytes
    if report.status is not SessionStatus.COMPRESSED or isinstance(output, UnsetType):
        return None
    return ((0 if isinstance(size, UnsetType) else size), output.bytes), _token_change(report)


def _held_of(report: Report, needs: Callable[[int], bool]) -> ChainTokens | None:
    if not isinstance(report, ValidateReport | ContextValidateReport):
        return None
    tokens = report.tokens
    subagent = report.session.kind is SessionKind.SUBAGENT  # compress skips those (Claude Code resumes none)
    return ChainTokens(
        estimator=tokens.estimator,
        session=tokens.session,
        active_chain=tokens.active_chain,
        needs_compaction=not subagent and needs(tokens.active_chain),
    )


def report_figures(
    report: Report, root: str, *, needs: Callable[[int], bool] | None = None
) -> SessionFigures:
    """A session's figures from its report: its file, status and time; a candidate written, with
    its resume context; with `needs` (validate), the tokens it holds and whether it would need
    compaction (`needs(active-chain tokens)`)."""
    session = report.session
    fmt = session.format.value if not isinstance(session.format, UnsetType) else UNKNOWN_FORMAT
    size = session.bytes if not isinstance(session.bytes, UnsetType) else 0
    figures = SessionFigures(
        format=fmt,
        root=root,
        status=report.status.value,
        failed=report.status.is_failure,
        bytes=size,
        ms=0.0 if isinstance(report, BriefReport) else report.timing_ms.total,
    )
    written = _written(report)
    if written is not None:
        figures = replace(figures, written=written[0], tokens=written[1])
    if needs is not None:
        figures = replace(figures, held=_held_of(report, needs))
    return figures


def outcome_totals(
    outcomes: Mapping[str, Outcome],
    root_of: Mapping[str, str],
    of: TotalsOf,
    *,
    needs: Callable[[int], bool] | None = None,
) -> RunTotals:
    """The totals of a fleet run's outcomes (keyed by report label; `root_of` maps a label to its
    root as the user named it)."""
    figures = (
        report_figures(outcome.report, root_of.get(label, ""), needs=needs)
        for label, outcome in sorted(outcomes.items())
    )
    return fold_totals(figures, of)


def repair_figures(
    status: str,
    root: str,
    *,
    source_format: SourceFormat,
    failed: bool,
    before: int | UnsetType,
    after: int | UnsetType,
) -> SessionFigures:
    """A repair's figures (`repair`, `repair-read-pages`, a rewrite): its status, and the file it
    wrote, with the original's size and the written one's when it wrote one (`source_format`: the
    repaired session's, which the command knows from the registry or the session's own report)."""
    written = None if isinstance(before, UnsetType) or isinstance(after, UnsetType) else (before, after)
    return SessionFigures(
        format=source_format.value,
        root=root,
        status=status,
        failed=failed,
        bytes=None,  # a session left as it was is not measured
        ms=0.0,
        written=written,
    )
