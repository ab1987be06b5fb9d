"""`tokens` of a Codex rollout: every item's tokens by content class, in the file and in the context
Codex sends on resume, by Codex's own estimate (an item's JSON bytes / 4) and by o200k, its models'
real tokenizer, over the item's visible text; and the billed truth Codex itself wrote
(`token_count` events).

o200k comes from the `tokenizers` extra; without it the report lists it under `unavailable` with
the install hint, and counts with Codex's estimate alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Final

import msgspec

from pipeline.estimate.real import EXTRA_HINT, MissingExtra, load_tokenizer
from pipeline.formats.claude_code.line_guard import LineLimits
from pipeline.formats.codex.analysis import RolloutAnalysis, analyze_rollout
from pipeline.formats.codex.item_classes import Key, Tally, class_tallies
from pipeline.jobs.rollout_validate import ESTIMATOR, context_section
from pipeline.jobs.tokens.options import TokensOptions
from pipeline.read.load import SourceBytes
from pipeline.report.documents import Counted, Outcome, RolloutTokensReport
from pipeline.report.resume_context import BilledSection, RolloutClass, RolloutTokens
from pipeline.report.sections import Timing, findings_section, peak_rss_mb, session_section, session_status
from pipeline.vocabulary import SessionKind, SourceFormat

__all__ = ["tokens_rollout"]

REAL: Final = "o200k"  # the tokenizer of the models Codex runs
_LOADED: dict[str, Callable[[str], int]] = {}  # one tokenizer per worker process


def _tokenizers() -> tuple[dict[str, Callable[[str], int]], dict[str, str]]:
    """o200k when its extra is installed (else why not), counted beside Codex's estimate."""
    try:
        if REAL not in _LOADED:
            _LOADED[REAL] = load_tokenizer(REAL).count
    except MissingExtra:
        return {}, {REAL: EXTRA_HINT}
    return {REAL: _LOADED[REAL]}, {}


def _entry(key: Key, file: dict[Key, Tally], sent: dict[Key, Tally], counters: Sequence[str]) -> RolloutClass:
    held, resumed = file.get(key, Tally()), sent.get(key, Tally())
    return RolloutClass(
        items=held.items,
        context_items=resumed.items,
        session={name: held.tokens.get(name, 0) for name in counters},
        context={name: resumed.tokens.get(name, 0) for name in counters},
    )


def _classes(
    analysis: RolloutAnalysis, tokenizers: Mapping[str, Callable[[str], int]], per_class: int
) -> dict[str, RolloutClass]:
    """Tokens by class (and by tool), over the file and over the context Codex sends."""
    tallies = class_tallies(analysis.rollout, analysis.data, analysis.rebuilt, ESTIMATOR, tokenizers)
    counters = [ESTIMATOR, *tokenizers]
    file, sent = tallies.file, tallies.sent
    classes = {}
    for kind in sorted({k for k, name in (*file, *sent) if name is None}):
        by_size = sorted((n for k, n in file if k == kind and n), key=lambda n: -file[(kind, n)].items)
        names = by_size[:per_class]
        entry = _entry((kind, None), file, sent, counters)
        if names:
            entry = msgspec.structs.replace(
                entry, names={n: _entry((kind, n), file, sent, counters) for n in names}
            )
        classes[kind] = entry
    return classes


def _billed(analysis: RolloutAnalysis) -> BilledSection:
    """Codex's own figures: its running totals at the last token_count, and the last request's input."""
    events = [e for e in analysis.rollout.entries if e is not None and (e.usage or e.total_usage)]
    total = next((e.total_usage for e in reversed(events) if e.total_usage), None) or (0, 0, 0, 0)
    last = next((e.usage for e in reversed(events) if e.usage), None)
    return BilledSection(
        events=len(events),
        input=total[0],
        cached_input=total[1],
        output=total[2],
        reasoning_output=total[3],
        last_input=last[0] if last else None,
    )


def tokens_rollout(label: str, source: SourceBytes, options: TokensOptions) -> Outcome:
    """Count one rollout's tokens and build its report."""
    started = time.perf_counter()
    analysis = analyze_rollout(source.data, LineLimits.of(options.sweep))
    tokenizers, unavailable = _tokenizers()
    classes = _classes(analysis, tokenizers, options.max_names_per_class)
    counters = [ESTIMATOR, *tokenizers]  # every estimator's name, Codex's own first
    measure = RolloutTokens(
        estimators=list(counters),
        unavailable=unavailable,
        session={name: sum(c.session[name] for c in classes.values()) for name in counters},
        context={name: sum(c.context[name] for c in classes.values()) for name in counters},
        classes=classes,
        billed=_billed(analysis),
    )
    report = RolloutTokensReport(
        session=session_section(
            label, source, analysis.versions, len(analysis.rollout), SourceFormat.CODEX, SessionKind.MAIN
        ),
        status=session_status(analysis.findings, refused=False),
        findings=findings_section(analysis.findings, per_code=options.sweep.findings_per_code),
        context=context_section(analysis, measure.context[ESTIMATOR]),
        tokens=measure,
        timing_ms=Timing(
            analyze=round((time.perf_counter() - started) * 1000, 2),
            total=round((time.perf_counter() - started) * 1000, 2),
            worker_peak_rss_mb=peak_rss_mb(),
        ),
    )
    return Counted(label, report)
