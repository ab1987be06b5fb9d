"""A span's state and what its sections quote, read in one pass or reduced in chunks and rounds.

The deterministic summary reads two things from a span (`Partial`): its state (files, commands,
work and todos, identifiers, failures: `evidence/`) and the items its sections quote (every human
message, prior summary, slash command, system error and error whose call is not in the span,
every turn's last assistant text, the assistant's decisions and the user's answers). Tool output
is neither: it is most of a span, and it is read only into the state.

A span of more than `chunk_evidence_items` items is cut into chunks of about that many consecutive
items (never between a call and its result), each read on its own into a partial; the
partials are merged at most `MAX_CHUNKS_PER_ROUND` at a time for at most `MAX_REDUCTION_DEPTH`
rounds, seed 001's bounds, which the model path (`model.reduction`) shares. Should partials be
left after the last round but one, the last round merges all of them at once. A merge
deduplicates the lists (the latest run of a command, a file once with every tool), sums the
counts of a repeated failure, keeps every human message and the latest work state. What a merge
cannot see is what one pass links across a seam: a call and its result in two chunks, a
background shell finished in a later chunk, a failure resolved later by the same call
succeeding (the same command passing and the same file handled again are seen).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import islice
from typing import Final

from pipeline.summarize.checkpoint.appendix import parse_appendix
from pipeline.summarize.checkpoint.bullets import ANSWERING_TOOLS, DECISION_PATTERN, turns
from pipeline.summarize.checkpoint.document import checkpoint_start
from pipeline.summarize.evidence.failures import Resolver, collect_failures, first_passes, merged_failures
from pipeline.summarize.evidence.items import EvidenceItem, EvidenceKind
from pipeline.summarize.evidence.references import collect_references
from pipeline.summarize.evidence.work_state import DeterministicState, collect_state, merged_state

__all__ = [
    "MAX_CHUNKS_PER_ROUND",
    "MAX_REDUCTION_DEPTH",
    "Partial",
    "Reduction",
    "partial_of",
    "reduced",
    "span_state",
]

MAX_CHUNKS_PER_ROUND: Final = 32  # seed 001: bounds the merges (the model path: the calls) of a round
MAX_REDUCTION_DEPTH: Final = 4  # seed 001: bounds the rounds, so a summary's work is bounded

_QUOTED_KINDS = frozenset(
    {EvidenceKind.HUMAN_PROMPT, EvidenceKind.PRIOR_SUMMARY, EvidenceKind.COMMAND, EvidenceKind.SYSTEM_ERROR}
)


@dataclass(frozen=True, slots=True)
class Partial:
    """What the summary reads from a span: its state and the items its sections quote, in line order."""

    state: DeterministicState
    quoted: tuple[EvidenceItem, ...]
    passes: Mapping[Resolver, tuple[int, str]] = field(default_factory=dict)  # `first_passes`, for merges


@dataclass(frozen=True, slots=True)
class Reduction:
    """A span's merged partial, its chunks, and the partials each merge of each round took."""

    partial: Partial
    chunks: int
    rounds: tuple[tuple[int, ...], ...]


def span_state(items: Sequence[EvidenceItem]) -> DeterministicState:
    """The state of `items` read in one pass, after the records their prior summaries carry."""
    priors = [item for item in items if item.kind is EvidenceKind.PRIOR_SUMMARY]
    carried = [parse_appendix(_own_part(p.text), p.line) for p in priors]
    state = collect_state(items, carried)
    references = collect_references(items, [ref for prior in carried for ref in prior.references])
    return replace(state, references=references, failures=collect_failures(items))


def partial_of(items: Sequence[EvidenceItem]) -> Partial:
    """`items` read in one pass."""
    return Partial(span_state(items), _quoted(items))


def reduced(
    items: Sequence[EvidenceItem],
    chunk_items: int,
    per_merge: int = MAX_CHUNKS_PER_ROUND,
    depth: int = MAX_REDUCTION_DEPTH,
) -> Reduction:
    """`items` read chunk by chunk and merged in rounds: `per_merge` partials a merge, `depth`
    rounds, the last taking all that is left. Only one chunk is read at a time."""
    partials: Iterable[Partial] = (_chunk_partial(chunk) for chunk in _chunks(items, chunk_items))
    count = 0

    def counted(stream: Iterable[Partial]) -> Iterator[Partial]:
        nonlocal count
        for partial in stream:
            count += 1
            yield partial

    rounds: list[tuple[int, ...]] = []
    merged = list(_merge_round(counted(partials), per_merge, rounds))  # streamed: chunks read lazily
    while len(merged) > 1:
        width = len(merged) if len(rounds) == depth - 1 else per_merge
        merged = list(_merge_round(merged, width, rounds))
    return Reduction(merged[0], count, tuple(rounds))


def _chunk_partial(items: Sequence[EvidenceItem]) -> Partial:
    return Partial(span_state(items), _quoted(items), first_passes(items))


def _merge_round(partials: Iterable[Partial], width: int, rounds: list[tuple[int, ...]]) -> Iterator[Partial]:
    """One round: each run of `width` consecutive partials merged into one (their sizes noted)."""
    taken: list[int] = []
    stream = iter(partials)
    while batch := list(islice(stream, width)):
        taken.append(len(batch))
        merged = batch[0]
        for later in batch[1:]:
            merged = _merged(merged, later)
        yield merged
    rounds.append(tuple(taken))


def _merged(earlier: Partial, later: Partial) -> Partial:
    state = merged_state(earlier.state, later.state)
    failures = merged_failures(earlier.state.failures, later.state.failures, later.passes)
    references = collect_references((), [*earlier.state.references, *later.state.references])
    state = replace(state, references=references, failures=failures)
    passes = {**later.passes, **earlier.passes}  # the first pass of each command
    return Partial(state, _quoted([*earlier.quoted, *later.quoted]), passes)


def _chunks(items: Sequence[EvidenceItem], size: int) -> Iterator[Sequence[EvidenceItem]]:
    """Runs of at least `size` consecutive items (the last may be shorter), each ended where no call
    of it awaits its result (one that has not come within twice `size` items is let go) and never
    before a tool result: a call and its result are read together."""
    start = 0
    waiting: set[str] = set()
    for end, item in enumerate(items):
        length = end - start
        settled = not waiting or length >= 2 * size
        if length >= size and settled and item.kind is not EvidenceKind.TOOL_RESULT:
            yield items[start:end]
            start, waiting = end, set()
        if item.kind is EvidenceKind.TOOL_CALL and item.tool_id:
            waiting.add(item.tool_id)
        elif item.kind is EvidenceKind.TOOL_RESULT:
            waiting.discard(item.tool_id or "")
    if start < len(items):
        yield items[start:]


def _quoted(items: Sequence[EvidenceItem]) -> tuple[EvidenceItem, ...]:
    """The items a summary's sections quote (`Partial`); the same set read again is itself."""
    calls = frozenset(item.tool_id for item in items if item.kind is EvidenceKind.TOOL_CALL and item.tool_id)
    conclusions, last = turns(items)
    closing = {id(item) for item in (*conclusions, *([] if last is None else [last]))}
    return tuple(item for item in items if _is_quoted(item, id(item) in closing, calls))


def _is_quoted(item: EvidenceItem, closes_turn: bool, calls: frozenset[str | None]) -> bool:
    if item.kind in _QUOTED_KINDS or item.tool_name in ANSWERING_TOOLS:
        return True
    if item.kind is EvidenceKind.TOOL_RESULT:  # an error whose call is not in the span is quoted
        return item.is_error and item.tool_id not in calls
    if item.kind is EvidenceKind.ASSISTANT_TEXT:
        return closes_turn or DECISION_PATTERN.search(item.text.casefold()) is not None
    return False


def _own_part(text: str) -> str:
    start = checkpoint_start(text)
    return "" if start is None else text[start:]
