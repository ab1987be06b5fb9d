"""`tokens` of a Codex rollout: every item's tokens by content class, in the file and in the context
Codex sends on resume, by Codex's own estimate (an item's JSON bytes / 4) and by o200k, its models'
real tokenizer, over the item's visible text; and the billed truth Codex itself wrote
(`token_count` events).

o200k comes from the `tokenizers` extra; without it the report lists it under `unavailable` with
the install hint, and counts with Codex's estimate alone.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import msgspec
import orjson

from pipeline.estimate.real import EXTRA_HINT, MissingExtra, load_tokenizer
from pipeline.formats.claude_code.line_guard import LineLimits
from pipeline.formats.codex.analysis import RolloutAnalysis, analyze_rollout, approx_tokens
from pipeline.formats.codex.item_classes import item_class, visible_text
from pipeline.formats.codex.reconstruct import API_TYPES, CALL_TYPES
from pipeline.formats.codex.rollout_decode import RolloutKind
from pipeline.formats.codex.rollout_items import payload_of, sent_items
from pipeline.jobs.rollout_validate import ESTIMATOR, context_section
from pipeline.read.load import SourceBytes
from pipeline.report.documents import Counted, Outcome, RolloutTokensReport
from pipeline.report.resume_context import BilledSection, RolloutClass, RolloutTokens
from pipeline.report.sections import Timing, findings_section, peak_rss_mb, session_section, session_status
from pipeline.vocabulary import SessionKind, SourceFormat

if TYPE_CHECKING:
    from pipeline.jobs.tokens.job import TokensOptions

__all__ = ["tokens_rollout"]

REAL: Final = "o200k"  # the tokenizer of the models Codex runs
_LOADED: dict[str, Callable[[str], int]] = {}  # one tokenizer per worker process
Counter = Callable[[Mapping[str, Any]], int]


def _counters() -> tuple[dict[str, Counter], dict[str, str]]:
    """Codex's estimate, and o200k when its extra is installed (else why not)."""
    counters: dict[str, Counter] = {ESTIMATOR: lambda item: approx_tokens(len(orjson.dumps(item)))}
    try:
        if REAL not in _LOADED:
            _LOADED[REAL] = load_tokenizer(REAL).count
    except MissingExtra:
        return counters, {REAL: EXTRA_HINT}
    count = _LOADED[REAL]
    counters[REAL] = lambda item: count(visible_text(item))
    return counters, {}


def _file_items(analysis: RolloutAnalysis) -> Iterator[Mapping[str, Any]]:
    """Every response item the file holds, as written (replacement histories' items included)."""
    rollout = analysis.rollout
    for number, entry in enumerate(rollout.entries, 1):
        if entry is not None and entry.is_item and entry.item in API_TYPES:
            yield payload_of(rollout, analysis.data, number)
        elif entry is not None and entry.kind is RolloutKind.COMPACTED and entry.replacement:
            history = payload_of(rollout, analysis.data, number).get("replacement_history")
            yield from (item for item in history or () if isinstance(item, dict))


Key = tuple[str, str | None]  # a class, and a tool name within it


@dataclass(slots=True)
class _Tally:
    items: int = 0
    tokens: dict[str, int] = field(default_factory=lambda: defaultdict(int))


def _tally(
    items: Iterable[Mapping[str, Any]], tools: Mapping[str, str], counters: dict[str, Counter]
) -> dict[Key, _Tally]:
    table: dict[Key, _Tally] = defaultdict(_Tally)
    for item in items:
        kind, name = item_class(item, tools)
        counts = {estimator: count(item) for estimator, count in counters.items()}
        for key in ((kind, None), (kind, name)) if name else ((kind, None),):
            tally = table[key]
            tally.items += 1
            for estimator, value in counts.items():
                tally.tokens[estimator] += value
    return table


def _entry(
    key: Key, file: dict[Key, _Tally], sent: dict[Key, _Tally], counters: dict[str, Counter]
) -> RolloutClass:
    held, resumed = file.get(key, _Tally()), sent.get(key, _Tally())
    return RolloutClass(
        items=held.items,
        context_items=resumed.items,
        session={name: held.tokens.get(name, 0) for name in counters},
        context={name: resumed.tokens.get(name, 0) for name in counters},
    )


def _classes(
    analysis: RolloutAnalysis, counters: dict[str, Counter], per_class: int
) -> dict[str, RolloutClass]:
    """Tokens by class (and by tool), over the file and over the context Codex sends."""
    file_items = list(_file_items(analysis))
    tools = {
        str(i.get("call_id")): str(i.get("name") or i.get("type"))
        for i in file_items
        if i.get("type") in CALL_TYPES
    }
    file = _tally(file_items, tools, counters)
    sent = _tally(sent_items(analysis.rollout, analysis.data, analysis.rebuilt), tools, counters)
    classes = {}
    for kind in sorted({k for k, name in (*file, *sent) if name is None}):
        names = sorted((n for k, n in file if k == kind and n), key=lambda n: -file[(kind, n)].items)[
            :per_class
        ]
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
    counters, unavailable = _counters()
    classes = _classes(analysis, counters, options.max_names_per_class)
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
