"""One session's token benchmark: every estimator on every piece, per class, plus the usage fit.

`tokens_session` is the unit of work a worker process runs for `compaction tokens`. It reads and
indexes the file like every job (`analyze`), splits each content line into class pieces, counts
each piece with each requested estimator, and returns a report of counts only: per class and
name (tool, attachment type, system subtype), for the whole file and for the active chain, with
the billed-usage fit of every estimator. No text of the transcript enters the report.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import add
from pathlib import Path
from typing import Final

import msgspec
from msgspec import UNSET, UnsetType

from pipeline.core.index import LineIndex
from pipeline.core.validate.checks import read_findings
from pipeline.estimate import calibration, family_calibration
from pipeline.estimate.calibrated import measure
from pipeline.estimate.estimators import SEED_AND_CALIBRATED, EstimatorName
from pipeline.estimate.families import FAMILY_ESTIMATOR, ModelFamily, family_of
from pipeline.estimate.real import RealTokenizer, load_tokenizer
from pipeline.findings import Finding
from pipeline.formats.content_pieces import NAME_OTHER, ContentClass, LinePieces, Piece
from pipeline.formats.line_guard import LineLimits
from pipeline.formats.registry import content_pieces
from pipeline.jobs.context_tokens import tokens_context
from pipeline.jobs.front import Analysis, open_session, topology_options
from pipeline.jobs.tokens.auto import AutoRun, ModelTally, auto_run, auto_sent_turns
from pipeline.jobs.tokens.options import TokensOptions
from pipeline.jobs.tokens.sent import (
    SentFit,
    SentTurn,
    UsageConvention,
    collect_sent_turns,
    family_framing,
    fit_sent,
    sent_billed,
)
from pipeline.jobs.tokens.usage import Framing, collect_turns, fit_usage, usage_segments
from pipeline.report.chain import leaf_section
from pipeline.report.documents import Counted, Outcome, TokensReport
from pipeline.report.sections import Timing, findings_section, peak_rss_mb, session_status
from pipeline.report.tokens import ClassEntry, ScopePair, SentSection, TokensMeasure, UsageSection
from pipeline.report.tokens import Framing as FramingSection
from pipeline.vocabulary import FindingCode, RecordType, Severity

__all__ = ["SEED_RECORD", "piece_counter", "sent_turns", "tokens_session"]

SEED_RECORD: Final = "seed-record"
"""The seed's own per-record figure (JSON payload + 12), what `validate` and `compress` budget with."""

# Real tokenizers take about a second each to build. A worker process runs many sessions, so
# each one is built once per process and kept here for the life of the worker. This is the only
# module-level mutable state of the job, and it holds no session data: only loaded tokenizers.
_TOKENIZERS: dict[str, RealTokenizer] = {}
_TOOL_BLOCKS: Final = frozenset({ContentClass.TOOL_USE, ContentClass.TOOL_RESULT})


def _tokenizer(name: str) -> RealTokenizer:
    tokenizer = _TOKENIZERS.get(name)
    if tokenizer is None:
        tokenizer = _TOKENIZERS[name] = load_tokenizer(name)
    return tokenizer


def _tokenizer_count(name: str) -> Callable[[str], int]:
    return _tokenizer(name).count


def sent_turns(analysis: Analysis) -> tuple[SentTurn, ...]:
    """`auto`'s billed turns over what was sent, on their own (the fit script and tests use it)."""
    return auto_sent_turns(analysis, _tokenizer_count)


PieceCounts = Callable[[Piece], tuple[int, ...]]


def piece_counter(names: Sequence[EstimatorName]) -> PieceCounts:
    """A function giving one piece's count per estimator, in `names` order."""
    real = [(position, _tokenizer(name.value).count) for position, name in enumerate(names) if name.is_real]
    seed_at = names.index(EstimatorName.SEED) if EstimatorName.SEED in names else -1
    calibrated_at = names.index(EstimatorName.CALIBRATED) if EstimatorName.CALIBRATED in names else -1
    width = len(names)
    scales = calibration.CLASS_SCALE
    if tuple(names) == SEED_AND_CALIBRATED:  # the common run: `measure` already answers in this order

        def seed_and_calibrated(piece: Piece) -> tuple[int, ...]:
            return measure(piece.raw, scale=scales.get(piece.kind, 1.0))

        return seed_and_calibrated

    def counts(piece: Piece) -> tuple[int, ...]:
        values = [0] * width
        if seed_at >= 0 or calibrated_at >= 0:
            seed, calibrated = measure(piece.raw, scale=scales.get(piece.kind, 1.0))
            if seed_at >= 0:
                values[seed_at] = seed
            if calibrated_at >= 0:
                values[calibrated_at] = calibrated
        if real and piece.raw:
            text = piece.text()
            for position, count in real:
                values[position] = count(text)
        return tuple(values)

    return counts


class _Tally:
    """Running sums per (class, name): pieces, bytes, and per estimator the session and active counts."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.rows: dict[tuple[ContentClass, str], list[int]] = {}

    def add(self, piece: Piece, counts: tuple[int, ...], active: bool) -> None:
        key = (piece.kind, piece.name)
        row = self.rows.get(key)
        if row is None:
            row = self.rows[key] = [0] * (4 + 2 * self.width)
        size = len(piece.raw)
        row[0] += 1
        row[1] += size
        position = 4
        for value in counts:
            row[position] += value
            position += 1
        if active:
            row[2] += 1
            row[3] += size
            for value in counts:
                row[position] += value
                position += 1


def _sum(rows: Iterable[list[int]], width: int) -> list[int]:
    total = [0] * width
    for row in rows:
        total = [a + b for a, b in zip(total, row, strict=True)]
    return total


def _class_report(tally: _Tally, names: Sequence[str], max_names: int) -> dict[str, ClassEntry]:
    """Per class: totals in both scopes, and the largest names (the rest folded under `other`)."""
    width = len(names)
    report: dict[str, ClassEntry] = {}
    for kind in ContentClass:
        rows = {name: row for (cls, name), row in tally.rows.items() if cls is kind}
        entry = _row_report(_sum(rows.values(), 4 + 2 * width), names)
        named = sorted((name for name in rows if name), key=lambda n: (-rows[n][4], n))
        if named:
            kept = named[:max_names]
            folded = [rows[name] for name in named[max_names:]]
            by_name = {name: _row_report(rows[name], names) for name in kept if name != NAME_OTHER}
            rest = folded + ([rows[NAME_OTHER]] if NAME_OTHER in rows else [])
            if rest:
                by_name[NAME_OTHER] = _row_report(_sum(rest, 4 + 2 * width), names)
            entry = msgspec.structs.replace(entry, names=by_name)
        report[kind.value] = entry
    return report


def _row_report(row: list[int], names: Sequence[str]) -> ClassEntry:
    width = len(names)
    return ClassEntry(
        pieces=ScopePair(session=row[0], active_chain=row[2]),
        bytes=ScopePair(session=row[1], active_chain=row[3]),
        session=dict(zip(names, row[4 : 4 + width], strict=True)),
        active_chain=dict(zip(names, row[4 + width :], strict=True)),
    )


def _usage_report(
    analysis: Analysis, lines: _Lines, names: Sequence[str], auto: AutoRun | None
) -> UsageSection:
    """Fits of every estimator, framed alike; the last name, the seed's record figure, unframed;
    `auto`'s over what was sent (`sent.py`)."""
    index, topology = analysis.index, analysis.topology
    segments = usage_segments(index, analysis.graph, topology.chain) if topology.chain else ()
    framing = Framing(calibration.FRAMING_MESSAGE, calibration.FRAMING_TOOL_BLOCK)
    billed = lines.billed
    turns = collect_turns(
        index,
        segments,
        lines.estimates,
        billed,
        len(names),
        tool_blocks=lines.tool_blocks,
        framing=framing,
        framed=len(names) - 1,
    )
    fits = {fit.estimator: fit.to_report() for fit in fit_usage(turns, names)}
    sent: SentSection | UnsetType = UNSET
    if auto is not None:
        sent_prompts, conventions = sent_billed(auto.prompt_parts, auto.turn_families)
        sent_turns = collect_sent_turns(index, segments, auto.lines, sent_prompts, auto.turn_families)
        fitted = fit_sent(sent_turns, EstimatorName.AUTO.value)
        fits.pop(EstimatorName.AUTO.value, None)
        if fitted is not None:
            fits[EstimatorName.AUTO.value] = fitted.usage.to_report()
        fits = {name: fits[name] for name in names if name in fits}
        sent = _sent_section(sent_turns, fitted, conventions)
    return UsageSection(
        assistant_lines_with_usage=len(billed),
        turns=len(turns),
        segments=len(segments),
        billed_first=turns[0].billed if turns else None,
        billed_last=turns[-1].billed if turns else None,
        framing=FramingSection(message=framing.message, tool_block=framing.tool_block),
        fits=fits,
        sent=sent,
    )


def _sent_section(
    turns: Sequence[SentTurn], fitted: SentFit | None, conventions: Mapping[ModelFamily, UsageConvention]
) -> SentSection:
    families = sorted({turn.family for turn in turns})
    framing = {family.value: family_framing(family) for family in families}
    return SentSection(
        family_calibration_version=family_calibration.FAMILY_CALIBRATION_VERSION,
        turns=len(turns),
        epochs=fitted.epochs if fitted is not None else 0,
        steps=fitted.steps if fitted is not None else 0,
        framing={name: FramingSection(message=m, tool_block=b) for name, (m, b) in framing.items()},
        scale={f.value: family_calibration.FAMILY_SCALE.get(f.value, 1.0) for f in families},
        usage_convention={f.value: conventions[f].value for f in families if f in conventions},
    )


def _chain_families(
    analysis: Analysis, line_family: Mapping[int, ModelFamily], billed: Mapping[int, int]
) -> tuple[list[ModelFamily], list[ModelFamily]]:
    """Families of the billed turns and of every assistant message along the chain, in order."""
    turns: list[ModelFamily] = []
    chain: list[ModelFamily] = []
    seen: set[str] = set()
    for line in analysis.topology.chain:
        family = line_family.get(line)
        record = analysis.index.record(line)
        if family is None or record is None:
            continue
        if record.message_id:
            if record.message_id in seen:
                continue
            seen.add(record.message_id)
        chain.append(family)
        if line in billed:
            turns.append(family)
    return turns, chain


class _Lines:
    """What the usage fits need of each line: estimates, tool blocks, billed prompts, families."""

    def __init__(self, index: LineIndex, auto: AutoRun | None) -> None:
        self.index, self.auto = index, auto
        self.models = ModelTally()
        self.family: dict[int, ModelFamily] = {}
        self.estimates: dict[int, tuple[int, ...]] = {}
        self.billed: dict[int, int] = {}
        self.tool_blocks: dict[int, int] = {}

    def add(self, line: LinePieces, total: tuple[int, ...], auto_tokens: int) -> None:
        if line.billed_prompt:
            self.billed[line.line] = line.billed_prompt
        if self.auto is not None and line.prompt_parts is not None:
            self.auto.prompt_parts[line.line] = line.prompt_parts
        if not line.api:
            return
        record = self.index.record(line.line)
        if record is not None and record.type == RecordType.ASSISTANT:
            self.models.add(record.message_id, line.model)
            named = family_of(line.model)
            if named is not None:
                self.family[line.line] = named
        self.estimates[line.line] = (*total, record.tokens if record is not None else 0)
        blocks = sum(1 for piece in line.pieces if piece.kind in _TOOL_BLOCKS)
        if blocks:
            self.tool_blocks[line.line] = blocks
        if self.auto is not None:
            self.auto.add_line(line, auto_tokens)


def _measure(analysis: Analysis, names: tuple[EstimatorName, ...], max_names: int) -> TokensMeasure:
    index = analysis.index
    active = frozenset(analysis.topology.chain)
    auto = (
        auto_run(analysis.index, analysis.source.data, _tokenizer_count, analysis.format)
        if EstimatorName.AUTO in names
        else None
    )
    base = tuple(name for name in names if name is not EstimatorName.AUTO)
    counts = piece_counter(base)
    width = len(names)
    tally = _Tally(width)
    lines = _Lines(index, auto)
    images = [0, 0]
    zero = (0,) * width
    for line in content_pieces(analysis.format)(index.record_lines(analysis.source.data)):
        in_chain = line.line in active
        line_total: tuple[int, ...] = zero
        family = auto.counter.family_at(line.line) if auto is not None else None
        reuse = base.index(FAMILY_ESTIMATOR[family]) if family and FAMILY_ESTIMATOR[family] in base else -1
        auto_tokens = 0
        for piece in line.pieces:
            piece_counts = counts(piece)
            if auto is not None and family is not None:
                value = auto.counter.count(piece, family, piece_counts[reuse] if reuse >= 0 else None)
                auto_tokens += value
                piece_counts = (*piece_counts, value)
            tally.add(piece, piece_counts, in_chain)
            line_total = piece_counts if line_total is zero else tuple(map(add, line_total, piece_counts))
        if line.images:
            images[0] += line.images
            images[1] += line.images if in_chain else 0
        lines.add(line, line_total, auto_tokens)
    labels = [name.value for name in names]
    classes = _class_report(tally, labels, max_names)
    turn_families, chain_families = _chain_families(analysis, lines.family, lines.billed)
    usage = _usage_report(analysis, lines, [*labels, SEED_RECORD], auto)
    return TokensMeasure(
        estimators=labels,
        calibration_version=calibration.CALIBRATION_VERSION,
        session={name: sum(c.session[name] for c in classes.values()) for name in labels},
        active_chain={name: sum(c.active_chain[name] for c in classes.values()) for name in labels},
        seed_record=ScopePair(
            session=sum(r.tokens for r in index.records if r is not None),
            active_chain=analysis.tokens_of(tuple(active)),
        ),
        images=ScopePair(session=images[0], active_chain=images[1]),
        classes=classes,
        usage=usage,
        models=lines.models.section(turn_families, chain_families),
    )


def tokens_session(path: Path, label: str, options: TokensOptions) -> Outcome:
    """Count one session's tokens with every requested estimator and build its report."""
    started = time.perf_counter()
    per_code = options.sweep.findings_per_code
    opened = open_session(
        path,
        label,
        topology_options(options.sweep, None),
        command="tokens",
        per_code=per_code,
        limits=LineLimits.of(options.sweep),
        contexts=lambda agent, context_label, source: tokens_context(agent, context_label, source, options),
    )
    if not isinstance(opened, Analysis):
        return opened
    analyzed = time.perf_counter()
    topology = opened.topology
    # Lines that are not records are counted by no estimator: say where they are, as validate does.
    findings: list[Finding] = [*read_findings(opened.index), *topology.findings]
    if not opened.graph.uuid_lines:
        findings.append(Finding(FindingCode.NO_ACTIVE_CHAIN, Severity.WARNING))
    report = TokensReport(
        session=opened.session(),
        status=session_status(findings, refused=topology.refused and bool(opened.graph.uuid_lines)),
        leaf=leaf_section(topology),
        findings=findings_section(findings, per_code=per_code),
        tokens=_measure(opened, options.estimators, options.max_names_per_class),
        timing_ms=Timing(
            analyze=round((analyzed - started) * 1000, 2),
            total=round((time.perf_counter() - started) * 1000, 2),
            worker_peak_rss_mb=peak_rss_mb(),
        ),
    )
    return Counted(label, report)
