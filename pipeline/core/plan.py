"""Planning: where the cut goes, which old turns become the summary and which tail stays raw.

Planning is by tokens. The candidate must hold at most the goal: the smaller of `target_ratio` of
the source chain's tokens and the window ceiling (`context_window` x `max_window_share`, so a
resumed session leaves room to work), or `target_estimated_tokens` when set (then a hard gate).
The kept tail is measured as it will be written (tool outputs bounded), and the summary's tokens
are reserved. The kept tail is the longest one that fits, cut where nothing is split: semantic
groups start at each human turn and keep every assistant fragment, tool call and tool result of
that turn together (seed 001); inside one long turn a cut may fall between completed exchanges
(seed 000). The protected last round of seed 000 (the current instructions and the two most
recent complete tool exchanges; a toolless tail walks back to the last tool-bearing round) always
stays raw, except that the instruction opening a long task may be summarized with the older
exchanges after it: the summary then restates it verbatim (`jobs.compress.planning`), so it is
kept whole only when it holds an image or a document, which no summary text can restate. No cut
splits a message's fragments, a tool call from its results or an attachment from its call, lands
at or before an existing compact pair (folded into the summary instead) or keeps an earlier
session of a one-way lineage raw (seed 004). When no such cut fits the goal, the plan cuts as far
as those rules allow and names the rule that stopped it (`target-missed`). `min_recent_records`
is a preference, kept only while the goal allows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from pipeline.core.index import LineIndex
from pipeline.estimate.seed import RECORD_ALLOWANCE
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
    "protected_round_of",
    "semantic_groups",
]

PROTECTED_EXCHANGES: Final = 2  # seed 000: the two most recent complete tool exchanges


@dataclass(frozen=True, slots=True)
class CutOptions:
    """Sizing knobs of the cut."""

    target_ratio: float
    target_estimated_tokens: int | None  # a hard gate when set
    context_window: int
    max_window_share: float
    min_recent_records: int  # a preference: kept raw while the goal allows

    def goal(self, chain_tokens: int) -> int:
        """The most tokens the candidate may hold."""
        if self.target_estimated_tokens:
            return self.target_estimated_tokens
        return min(round(self.target_ratio * chain_tokens), int(self.context_window * self.max_window_share))


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
    user_lines: tuple[int, ...]  # lines of the round's instructions: each prompt and its expansions
    tool_use_ids: tuple[str, ...]
    tool_result_ids: tuple[str, ...]
    assistant_text_lines: tuple[int, ...]
    opening_media: bool = False  # the instruction opening the round holds an image or a document
    # The prior summary whose restated instructions a round no human opened goes on with.
    carried_line: int | None = None


@dataclass(frozen=True, slots=True)
class Plan:
    """The cut and everything derived from it, in chain positions and source lines."""

    outcome: PlanOutcome
    cut: int  # chain[:cut] is summarized, chain[cut:] stays raw
    summary_lines: tuple[int, ...]
    raw_lines: tuple[int, ...]
    groups: tuple[SemanticGroup, ...]
    protected: ProtectedRound
    target: int  # the first position whose tail fits the goal, before safety chose the cut
    reasons: tuple[PlanNote, ...]  # content-free notes on what moved or stopped the cut
    chain_tokens: int  # the source chain, as it is
    goal_tokens: int  # the most the candidate may hold
    planned_tokens: int  # the kept tail (as written) plus the summary reserved and the new pair

    @property
    def target_missed(self) -> bool:
        """Whether the rules stopped the cut before the tail fit the goal."""
        return self.outcome is PlanOutcome.CUT and self.planned_tokens > self.goal_tokens


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


def _expands_instruction(record: DecodedRecord) -> bool:
    """A client text right after a prompt (a slash command's expansion, a prompt hook's context)."""
    return (
        record.type == RecordType.USER
        and record.is_api
        and record.meta
        and not record.compact_summary
        and not record.tool_results
        and "T" in record.blocks
    )


def _instruction(records: list[DecodedRecord], start: int) -> list[int]:
    """Positions of the instruction opening at `start`: the prompt and the client texts after it."""
    positions = [start]
    for position in range(start + 1, len(records)):
        record = records[position]
        if not record.is_api:
            continue  # progress, attachments and system lines are not sent
        if not _expands_instruction(record):
            break
        positions.append(position)
    return positions


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
    calling = {r.message_id for r in records[group.start : group.end] if r.tool_uses and r.message_id}
    # An exchange starts where an assistant message that calls a tool starts (its first fragment
    # may be thinking or text; the tool_use fragments after it cannot start anything).
    exchange_starts = [
        i
        for i in range(group.start, group.end)
        if not blocked[i]
        and records[i].type == RecordType.ASSISTANT
        and (records[i].tool_uses or records[i].message_id in calling)
    ]
    start = group.start
    if len(exchange_starts) > PROTECTED_EXCHANGES:
        start = exchange_starts[-PROTECTED_EXCHANGES]
    tail = range(start, len(records))
    opened = _is_turn_start(records[group.start])
    opening = _instruction(records, group.start) if opened else []
    instructions = [
        position
        for g in groups
        if g.start >= group.start and _is_turn_start(records[g.start])
        for position in _instruction(records, g.start)
    ]
    # A round no human opened (the preamble after a compact pair) goes on with the task of the
    # latest summary before it.
    summaries = [] if opened else [i for i in range(group.start, group.end) if records[i].compact_summary]
    return ProtectedRound(
        start=start,
        group_start=group.start,
        user_lines=tuple(chain[i] for i in instructions),
        tool_use_ids=tuple(t for i in tail for t in records[i].tool_uses),
        tool_result_ids=tuple(t for i in tail for t in records[i].tool_results),
        assistant_text_lines=tuple(
            chain[i] for i in tail if records[i].type == RecordType.ASSISTANT and "T" in records[i].blocks
        ),
        opening_media=any(set(records[i].blocks) - {"T"} for i in opening),
        carried_line=chain[summaries[-1]] if summaries else None,
    )


def protected_round_of(index: LineIndex, chain: tuple[int, ...]) -> ProtectedRound:
    """The protected round of an active chain (what `plan_cut` keeps raw whatever the target)."""
    recs = [index.entry(line) for line in chain]
    groups = semantic_groups(recs)
    return _protected_round(recs, chain, groups, _blocked_positions(recs))


@dataclass(frozen=True, slots=True)
class _Bounds:
    """Where a cut may go: not before `floor` (compact pairs, lineage), not after `ceiling`."""

    floor: int
    ceiling: int
    fit: int  # the first position whose tail fits the goal (len(chain) when none does)
    round_fits: bool  # what the rules keep from `ceiling` on fits the goal, the summary aside


def _fit_position(kept_tokens: Sequence[int], budget: int) -> int:
    """The smallest position whose kept tail holds at most `budget` tokens."""
    used, position = 0, len(kept_tokens)
    while position > 0 and used + kept_tokens[position - 1] <= budget:
        used += kept_tokens[position - 1]
        position -= 1
    return position


def _floor(recs: list[DecodedRecord], lineage_start: int, reasons: list[PlanNote]) -> int:
    floor = max(lineage_start, 1)
    compact_positions = [i for i, r in enumerate(recs) if r.compact_boundary or r.compact_summary]
    if compact_positions:
        floor = max(floor, compact_positions[-1] + 1)
        reasons.append(PlanNote.PRIOR_COMPACT_PAIR_FOLDED)
    if lineage_start:
        reasons.append(PlanNote.EARLIER_SESSIONS_SUMMARIZED)
    return floor


def plan_cut(
    index: LineIndex,
    chain: tuple[int, ...],
    options: CutOptions,
    *,
    kept_tokens: Sequence[int] | None = None,
    summary_tokens: int,
    lineage_start: int = 0,
    keep_protected_turn: bool = False,
    restated_tokens: int = 0,
) -> Plan:
    """Choose the cut for an active chain (root-to-leaf lines).

    `kept_tokens` is each chain record's tokens as the candidate would hold it (its tool outputs
    bounded); without it, the record's own tokens. `summary_tokens` is reserved for the summary,
    `restated_tokens` of them for the protected instructions it restates (part of the protected
    round). `keep_protected_turn` forbids cutting inside the protected round's turn, for when its
    instruction cannot be carried verbatim by the summary; an instruction holding an image or a
    document forbids it too.
    """
    recs = [index.entry(line) for line in chain]
    costs = list(kept_tokens) if kept_tokens is not None else [r.tokens for r in recs]
    groups = semantic_groups(recs)
    blocked = _blocked_positions(recs)
    protected = _protected_round(recs, chain, groups, blocked)
    chain_tokens = sum(record.tokens for record in recs)
    goal = options.goal(chain_tokens)
    reasons: list[PlanNote] = []
    sizes = (chain_tokens, goal, summary_tokens + 2 * RECORD_ALLOWANCE)
    if chain_tokens <= goal:
        return _plan(
            PlanOutcome.FITS, 0, chain, groups, protected, 0, (PlanNote.WHOLE_CHAIN_FITS,), sizes, costs
        )
    floor = _floor(recs, lineage_start, reasons)
    ceiling = _ceiling(protected, keep_protected_turn, reasons)
    fit = _fit_position(costs, max(0, goal - sizes[2]))
    round_tokens = sum(costs[ceiling:]) + restated_tokens + 2 * RECORD_ALLOWANCE
    cut = _choose(recs, groups, blocked, _Bounds(floor, ceiling, fit, round_tokens <= goal), reasons)
    if cut is None:
        # Said only when nothing older than the protected round exists, not when it is kept whole.
        if not _older_exists(recs, groups, blocked, floor, protected.start):
            reasons.append(PlanNote.NOTHING_BEFORE_PROTECTED_ROUND)
        return _plan(PlanOutcome.NO_CUT, 0, chain, groups, protected, fit, tuple(reasons), sizes, costs)
    # `min_recent_records` is a preference: the longest tail that fits keeps them when it can.
    if len(chain) - cut < min(options.min_recent_records, len(chain)):
        reasons.append(PlanNote.FEWER_RECENT_RECORDS_THAN_PREFERRED)
    return _plan(PlanOutcome.CUT, cut, chain, groups, protected, fit, tuple(reasons), sizes, costs)


def _ceiling(protected: ProtectedRound, keep_protected_turn: bool, reasons: list[PlanNote]) -> int:
    """The last position a cut may take: the protected round's start, or its turn's when kept whole."""
    if protected.start == protected.group_start or not (keep_protected_turn or protected.opening_media):
        return protected.start
    reasons.append(PlanNote.PROTECTED_TURN_KEPT_WHOLE)
    if protected.opening_media:
        reasons.append(PlanNote.PROTECTED_INSTRUCTION_HOLDS_MEDIA)
    return protected.group_start


def _cut_positions(
    recs: list[DecodedRecord], groups: tuple[SemanticGroup, ...], blocked: list[bool], floor: int, high: int
) -> tuple[list[int], list[int]]:
    """The turn starts and the exchange starts in `[floor, high]` where a cut splits nothing."""
    turns = [g.start for g in groups if floor <= g.start <= high and not blocked[g.start]]
    exchanges = [p for p in range(floor, high + 1) if _safe(recs, blocked, p)]
    return turns, exchanges


def _older_exists(
    recs: list[DecodedRecord], groups: tuple[SemanticGroup, ...], blocked: list[bool], floor: int, start: int
) -> bool:
    """Whether any cut before the protected round would split nothing (the round itself aside)."""
    turns, exchanges = _cut_positions(recs, groups, blocked, floor, start)
    return bool(turns or exchanges)


def _safe(recs: list[DecodedRecord], blocked: list[bool], position: int) -> bool:
    """An exchange start: an API assistant record no message, call or attachment spans across."""
    return not blocked[position] and recs[position].is_api and recs[position].type == RecordType.ASSISTANT


def _choose(
    recs: list[DecodedRecord],
    groups: tuple[SemanticGroup, ...],
    blocked: list[bool],
    bounds: _Bounds,
    reasons: list[PlanNote],
) -> int | None:
    """The safe position keeping the longest tail that fits; else the one keeping the least.

    A turn start keeps the semantic group whole (seed 001) and is preferred; inside one long turn
    the cut may fall between two completed exchanges (seed 000).
    """
    low, high = max(bounds.floor, bounds.fit), bounds.ceiling
    turns, exchanges = _cut_positions(recs, groups, blocked, bounds.floor, high)
    fitting_turns = [p for p in turns if p >= low]
    if fitting_turns:
        return fitting_turns[0]
    fitting_exchanges = [p for p in exchanges if p >= low]
    if fitting_exchanges:
        reasons.append(PlanNote.CUT_INSIDE_LONG_TURN)
        return fitting_exchanges[0]
    anywhere = sorted({*turns, *exchanges})
    if not anywhere:
        return None
    reasons.append(PlanNote.TARGET_MISSED)
    if bounds.fit <= high:
        reasons.append(PlanNote.NO_SAFE_CUT_WITHIN_TARGET)
    elif bounds.round_fits:
        reasons.append(PlanNote.NO_ROOM_FOR_SUMMARY)  # the round fits; with the summary reserved it does not
    else:
        reasons.append(PlanNote.PROTECTED_ROUND_EXCEEDS_TARGET)
    if anywhere[-1] not in turns:
        reasons.append(PlanNote.CUT_INSIDE_LONG_TURN)
    return anywhere[-1]


def _plan(
    outcome: PlanOutcome,
    cut: int,
    chain: tuple[int, ...],
    groups: tuple[SemanticGroup, ...],
    protected: ProtectedRound,
    target: int,
    reasons: tuple[PlanNote, ...],
    sizes: tuple[int, int, int],
    costs: Sequence[int],
) -> Plan:
    chain_tokens, goal, reserved = sizes
    summary, raw = (chain[:cut], chain[cut:]) if outcome is PlanOutcome.CUT else ((), chain)
    planned = reserved + sum(costs[cut:]) if outcome is PlanOutcome.CUT else chain_tokens
    return Plan(outcome, cut, summary, raw, groups, protected, target, reasons, chain_tokens, goal, planned)
