"""`tokens` of a session read through the seam: every item's tokens by content class, in the file
and in the context its client sends on resume, by the client's own estimate and by the real
tokenizer of its models over the item's visible text; and the billed truth the file records.

The real tokenizer comes from the `tokenizers` extra; without it the report lists it under
`unavailable` with the install hint, and counts with the client's estimate alone.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

import msgspec

from pipeline.agents.protocol import ContextFormat, ContextSession
from pipeline.estimate.families import ModelFamily, family_of
from pipeline.estimate.real import EXTRA_HINT, MissingExtra, load_tokenizer
from pipeline.formats.context_items import ClassTallies, Key, Tally
from pipeline.formats.line_guard import LineLimits
from pipeline.jobs.tokens.options import TokensOptions
from pipeline.jobs.tokens.sent import SentTurn, fit_sent
from pipeline.read.load import SourceBytes
from pipeline.report.documents import ContextTokensReport, Counted, Outcome
from pipeline.report.resume_context import BilledFitSection, ContextClass, ContextTokens
from pipeline.report.sections import Timing, findings_section, peak_rss_mb, session_section, session_status

__all__ = ["tokens_context"]

_LOADED: dict[str, Callable[[str], int]] = {}  # one tokenizer per worker process


def _tokenizers(name: str | None) -> tuple[dict[str, Callable[[str], int]], dict[str, str]]:
    """The real tokenizer when its extra is installed (else why not), counted beside the estimate."""
    if name is None:
        return {}, {}
    try:
        if name not in _LOADED:
            _LOADED[name] = load_tokenizer(name).count
    except MissingExtra:
        return {}, {name: EXTRA_HINT}
    return {name: _LOADED[name]}, {}


def _entry(
    key: Key, file: Mapping[Key, Tally], sent: Mapping[Key, Tally], counters: Sequence[str]
) -> ContextClass:
    held, resumed = file.get(key, Tally()), sent.get(key, Tally())
    return ContextClass(
        items=held.items,
        context_items=resumed.items,
        session={name: held.tokens.get(name, 0) for name in counters},
        context={name: resumed.tokens.get(name, 0) for name in counters},
    )


def _classes(tallies: ClassTallies, counters: Sequence[str], per_class: int) -> dict[str, ContextClass]:
    """Tokens by class (and by tool), over the file and over the context the client sends."""
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


def _billed_fit(
    session: ContextSession, tokenizers: Mapping[str, Callable[[str], int]]
) -> BilledFitSection | None:
    """The real tokenizer's fit against the bills, request by request (`sent.fit_sent`, the fit
    `auto` gets on Claude Code), where the session gives a series."""
    name, count = next(iter(tokenizers.items()), (None, None))
    if name is None or count is None:
        return None
    turns = [
        SentTurn(
            t.line, t.billed, family_of(t.model) or ModelFamily.UNKNOWN, t.estimate, t.items, 0, t.epoch_start
        )
        for t in session.billed_turns(count)
    ]
    fitted = fit_sent(turns, name)
    if fitted is None:
        return None
    family = Counter(turn.family for turn in turns).most_common(1)[0][0]
    return BilledFitSection(
        fit=fitted.usage.to_report(), epochs=fitted.epochs, steps=fitted.steps, family=family.value
    )


def tokens_context(agent: ContextFormat, label: str, source: SourceBytes, options: TokensOptions) -> Outcome:
    """Count one session's tokens and build its report."""
    started = time.perf_counter()
    session = agent.read(source.data, source.path, LineLimits.of(options.sweep))
    tokenizers, unavailable = _tokenizers(agent.tokenizer)
    counters = [agent.estimator, *tokenizers]  # every estimator's name, the client's own first
    tallies = session.class_tallies(agent.estimator, tokenizers)
    classes = _classes(tallies, counters, options.max_names_per_class)
    measure = ContextTokens(
        estimators=list(counters),
        unavailable=unavailable,
        session={name: sum(c.session[name] for c in classes.values()) for name in counters},
        context={name: sum(c.context[name] for c in classes.values()) for name in counters},
        classes=classes,
        billed=session.billed(),
    )
    fitted = _billed_fit(session, tokenizers)
    if fitted is not None:
        measure = msgspec.structs.replace(measure, billed_fit=fitted)
    described = session_section(
        label, source, session.versions, session.line_count, agent.format, session.kind
    )
    report = ContextTokensReport(
        session=described,
        status=session_status(session.findings, refused=False),
        findings=findings_section(session.findings, per_code=options.sweep.findings_per_code),
        context=session.context_section(measure.context[agent.estimator]),
        tokens=measure,
        timing_ms=Timing(
            analyze=round((time.perf_counter() - started) * 1000, 2),
            total=round((time.perf_counter() - started) * 1000, 2),
            worker_peak_rss_mb=peak_rss_mb(),
        ),
    )
    return Counted(label, report)
