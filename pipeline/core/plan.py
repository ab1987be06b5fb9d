"""Planning: where the cut goes, which old turns become the summary and which tail stays raw.

Semantic groups start at each human turn and keep every assistant fragment, tool call and tool
result of that turn together (seed 001). The protected last round of seed 000 (the current
instructions and the two most recent complete tool exchanges; a toolless tail walks back to the
last tool-bearing round) always stays raw. The cut is sized from the target ratio, the token
target and `min_recent_records`, then only ever moves earlier, to a position that splits no
message's fragments, no tool call from its results, no attachment from its tool call, never
lands at or before an existing compact pair (which is folded into the summary instead) and never
keeps an earlier session of a one-way lineage raw (seed 004).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pipeline.core.index import LineIndex
from pipeline.formats.claude_code.decode import DecodedRecord
from pipeline.reasons import PlanNote
from pipeline.vocabulary import PlanOutcome, RecordType, Role

__all__ = [
    "CutOptions",
    "Plan",
    "PlanOutcome",
    "ProtectedRound",
    "SemanticGroup",
    "plan_cut",
    "semantic_groups",
]

SUMMARY_BYTES_PER_CHAR: Final = 3  # seed 004 reserves three bytes of output per summary character
SUMMARY_FIXED_BYTES: Final = 20_000  # and this much for the compact pair's own fields
MIN_RECENT_BUDGET: Final = 4096  # the seed's floor on the raw tail's byte budget
PROTECTED_EXCHANGES: Final = 2  # seed 000: the two most recent complete tool exchanges
LONG_TURN_FACTOR: Final = 2  # a turn keeping more than twice the byte budget raw may be split


@dataclass(frozen=True, slots=True)
class CutOptions:
    """Sizing knobs of the cut."""

    target_ratio: float
    target_estimated_tokens: int | None  # a hard gate when set
    min_recent_records: int
    summary_char_budget: int


@dataclass(frozen=True, slots=True)
class SemanticGroup:
    """Chain positions `[start, end)` of one human turn (or the preamble before the first)."""

    start: int
    end: int
    has_tools: bool


@dataclass(frozen=True, slots=True)
class ProtectedRound:
    """The part of the chain the survival contract protects (seed 000)."""

    start: int  # chain position from which everything must stay raw
    group_start: int  # the round's human turn (its instruction may be summarized inside long tasks)
    user_lines: tuple[int, ...]  # lines of the round's user instructions
    tool_use_ids: tuple[str, ...]
    tool_result_ids: tuple[str, ...]
    assistant_text_lines: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Plan:
    """The cut and everything derived from it, in chain positions and source lines."""

    outcome: PlanOutcome
    cut: int  # chain[:cut] is summarized, chain[cut:] stays raw
    summary_lines: tuple[int, ...]
    raw_lines: tuple[int, ...]
    groups: tuple[SemanticGroup, ...]
    protected: ProtectedRound
    target: int  # where sizing alone put the cut, before safety moved it
    reasons: tuple[PlanNote, ...]  # content-free notes on what moved the cut
    chain_bytes: int
    raw_bytes: int


def _is_turn_start(record: DecodedRecord) -> bool:
    return (
        record.type == RecordType.USER
        and record.is_api
        and record.role == Role.USER
        and not record.compact_summary
        and not record.meta
        and not record.tool_results
        and "T" in record.blocks
    )


def semantic_groups(records: list[DecodedRecord]) -> tuple[SemanticGroup, ...]:
    """Split chain positions at each human turn; records before the first form a preamble."""
    starts = [0] + [i for i, record in enumerate(records) if i > 0 and _is_turn_start(record)]
    bounds = list(zip(starts, [*starts[1:], len(records)], strict=True))
    return tuple(
        SemanticGroup(start, end, any(records[i].tool_uses for i in range(start, end)))
        for start, end in bounds
        if end > start
    )


def _blocked_positions(records: list[DecodedRecord]) -> list[bool]:
    """blocked[p] is True when cutting before position p would split something that belongs together."""
    size = len(records)
    delta = [0] * (size + 2)

    def block(first: int, last: int) -> None:  # positions first+1 .. last may not start the tail
        if last > first:
            delta[first + 1] += 1
            delta[last + 1] -= 1

    message_span: dict[str, list[int]] = {}
    use_at: dict[str, int] = {}
    for position, record in enumerate(records):
        if record.message_id:
            span = message_span.setdefault(record.message_id, [position, position])
            span[1] = position
        for tool_id in record.tool_uses:
            use_at.setdefault(tool_id, position)
    for first, last in message_span.values():
        block(first, last)
    for position, record in enumerate(records):
        for tool_id in record.tool_results:
            if tool_id in use_at:
                block(use_at[tool_id], position)
        if record.attachment_tool_use in use_at:
            block(use_at[record.attachment_tool_use], position)
    blocked, running = [], 0
    for position in range(size):
        running += delta[position]
        blocked.append(running > 0)
    return blocked


def _protected_round(
    records: list[DecodedRecord],
    chain: tuple[int, ...],
    groups: tuple[SemanticGroup, ...],
    blocked: list[bool],
) -> ProtectedRound:
    tool_groups = [g for g in groups if g.has_tools]
    group = tool_groups[-1] if tool_groups else groups[-1]
    exchange_starts = [
        i
        for i in range(group.start, group.end)
        if records[i].tool_uses and not blocked[i] and records[i].type == RecordType.ASSISTANT
    ]
    start = group.start
    if len(exchange_starts) > PROTECTED_EXCHANGES:
        start = exchange_starts[-PROTECTED_EXCHANGES]
    tail = range(start, len(records))
    turn_lines = tuple(
        chain[g.start] for g in groups if g.start >= group.start and _is_turn_start(records[g.start])
    )
    return ProtectedRound(
        start=start,
        group_start=group.start,
        user_lines=turn_lines,
        tool_use_ids=tuple(t for i in tail for t in records[i].tool_uses),
        tool_result_ids=tuple(t for i in tail for t in records[i].tool_results),
        assistant_text_lines=tuple(
            chain[i] for i in tail if records[i].type == RecordType.ASSISTANT and "T" in records[i].blocks
        ),
    )


def _size_target(
    index: LineIndex, chain: tuple[int, ...], options: CutOptions, total_tokens: int
) -> tuple[int, int]:
    """(first raw position the byte budget allows, that budget); the token target narrows the ratio."""
    ratio = options.target_ratio
    if options.target_estimated_tokens and total_tokens > 0:
        ratio = max(0.01, min(ratio, options.target_estimated_tokens / total_tokens))
    line_bytes = [index.lengths[line - 1] + 1 for line in chain]
    summary_reserve = max(
        MIN_RECENT_BUDGET, options.summary_char_budget * SUMMARY_BYTES_PER_CHAR + SUMMARY_FIXED_BYTES
    )
    budget = max(MIN_RECENT_BUDGET, int(sum(line_bytes) * ratio) - summary_reserve)
    used, position = 0, len(chain)
    while position > 0 and used + line_bytes[position - 1] <= budget:
        used += line_bytes[position - 1]
        position -= 1
    return position, budget


def plan_cut(
    index: LineIndex,
    chain: tuple[int, ...],
    options: CutOptions,
    *,
    lineage_start: int = 0,
    keep_protected_turn: bool = False,
) -> Plan:
    """Choose the cut for an active chain (root-to-leaf lines).

    `keep_protected_turn` forbids cutting inside the protected round's turn, for when its
    instruction cannot be carried verbatim by the summary.
    """
    records = [index.record(line) for line in chain]
    assert all(record is not None for record in records)
    recs: list[DecodedRecord] = records  # type: ignore[assignment]
    groups = semantic_groups(recs)
    blocked = _blocked_positions(recs)
    protected = _protected_round(recs, chain, groups, blocked)
    total_tokens = sum(record.tokens for record in recs)
    size_cut, budget = _size_target(index, chain, options, total_tokens)
    chain_bytes = sum(index.lengths[line - 1] + 1 for line in chain)
    reasons: list[PlanNote] = []
    floor = max(lineage_start, 1)
    compact_positions = [i for i, r in enumerate(recs) if r.compact_boundary or r.compact_summary]
    if compact_positions:
        floor = max(floor, compact_positions[-1] + 1)
        reasons.append(PlanNote.PRIOR_COMPACT_PAIR_FOLDED)
    if lineage_start:
        reasons.append(PlanNote.EARLIER_SESSIONS_SUMMARIZED)
    target = min(size_cut, protected.start)
    if len(chain) > options.min_recent_records:
        target = min(target, len(chain) - options.min_recent_records)
    if size_cut == 0 and chain_bytes <= budget:
        return _plan(
            PlanOutcome.FITS, 0, chain, groups, protected, target, (PlanNote.WHOLE_CHAIN_FITS,), chain_bytes
        )
    line_bytes = [index.lengths[line - 1] + 1 for line in chain]
    suffix_bytes = [0] * (len(chain) + 1)
    for position in range(len(chain) - 1, -1, -1):
        suffix_bytes[position] = suffix_bytes[position + 1] + line_bytes[position]
    ceiling = protected.group_start if keep_protected_turn else protected.start
    if keep_protected_turn:
        reasons.append(PlanNote.PROTECTED_TURN_KEPT_WHOLE)
    cut = _choose(recs, groups, blocked, min(target, ceiling), floor, ceiling, suffix_bytes, budget, reasons)
    if cut is None:
        reasons.append(PlanNote.NOTHING_BEFORE_PROTECTED_ROUND)
        return _plan(PlanOutcome.FITS, 0, chain, groups, protected, target, tuple(reasons), chain_bytes)
    return _plan(PlanOutcome.CUT, cut, chain, groups, protected, target, tuple(reasons), chain_bytes)


def _choose(
    records: list[DecodedRecord],
    groups: tuple[SemanticGroup, ...],
    blocked: list[bool],
    target: int,
    floor: int,
    ceiling: int,
    suffix_bytes: list[int],
    budget: int,
    reasons: list[PlanNote],
) -> int | None:
    """The latest safe turn start at or before the target; inside one long task, an exchange start.

    A turn start keeps the semantic group whole (seed 001). When the turn holding the target is
    so long that keeping it whole would keep more than twice the byte budget raw, the cut falls
    between two completed tool exchanges of that turn instead (seed 000: older completed steps of
    a long uninterrupted task may be summarized).
    """
    limit = min(target, ceiling)
    turn_starts = [g.start for g in groups if floor <= g.start <= limit and not blocked[g.start]]
    exchanges = [
        p
        for p in range(floor, limit + 1)
        if not blocked[p] and records[p].is_api and records[p].type == RecordType.ASSISTANT
    ]
    long_turn = not turn_starts or suffix_bytes[turn_starts[-1]] > LONG_TURN_FACTOR * budget
    if exchanges and long_turn and (not turn_starts or exchanges[-1] > turn_starts[-1]):
        reasons.append(PlanNote.CUT_INSIDE_LONG_TURN)
        return exchanges[-1]
    if turn_starts:
        if turn_starts[-1] != target:
            reasons.append(PlanNote.MOVED_TO_TURN_START)
        return turn_starts[-1]
    above = [p for p in range(max(floor, target + 1), ceiling + 1) if not blocked[p] and records[p].is_api]
    if floor > target and above:
        reasons.append(PlanNote.MOVED_AFTER_PRIOR_COMPACT_PAIR)
        return above[0]
    return None


def _plan(
    outcome: PlanOutcome,
    cut: int,
    chain: tuple[int, ...],
    groups: tuple[SemanticGroup, ...],
    protected: ProtectedRound,
    target: int,
    reasons: tuple[PlanNote, ...],
    chain_bytes: int,
) -> Plan:
    summary, raw = (chain[:cut], chain[cut:]) if outcome is PlanOutcome.CUT else ((), chain)
    return Plan(
        outcome,
        cut,
        summary,
        raw,
        groups,
        protected,
        target,
        reasons,
        chain_bytes,
        chain_bytes if outcome is not PlanOutcome.CUT else -1,
    )
