"""Plan and summary, together: the cut is sized by tokens, and the summary's size feeds back.

The kept tail is measured as it will be written: each kept record with its tool outputs bounded
(by its format's own rule, `ChainFormat.bound`; media replaced outside the protected round). The
planner reserves room for the summary; once written, a summary larger than its room moves the
cut later and is written again (at most `compress.max_replans` times). A cut inside the protected
round's turn summarizes the instruction that opened it: whoever writes the summary, our code
restates that instruction (and one a prior summary restated, for a task it goes on with)
verbatim ahead of it, and the plan reserves room for it. Should the contract still refuse such a plan, it is
replaced by one that keeps that whole turn raw: the contract never refuses a cut we propose.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from pipeline.agents.protocol import ChainCut
from pipeline.core.check.candidate import contract_messages
from pipeline.core.check.contract import (
    ContractMessage,
    Violation,
    check_survival,
    restate,
    restated_instructions,
)
from pipeline.core.compose import SUMMARY_PREAMBLE
from pipeline.core.partition import Partition
from pipeline.core.plan import Plan, PlanOutcome, plan_cut, protected_round_of
from pipeline.errors import SummaryError
from pipeline.estimate.seed import RECORD_ALLOWANCE, estimate_text
from pipeline.formats.bound_rule import BoundRule
from pipeline.formats.line_guard import LineLimits
from pipeline.jobs.compress.options import ENGINE_VERSION, CompressOptions
from pipeline.jobs.compress.writers import SummaryWriter, Written, spent_before, summary_refusal
from pipeline.jobs.front import Analysis
from pipeline.reasons import PlanNote, Reason
from pipeline.report.compression import DeclaredBound
from pipeline.vocabulary import Role, Strategy

__all__ = [
    "ChainBounding",
    "Planned",
    "bound_chain",
    "covering",
    "first_plan",
    "plan_and_summarize",
    "summary_head",
]

INITIAL_SUMMARY_SHARE = 5  # room first reserved for the summary: a fifth of the goal, at most its budget
CHARS_PER_TOKEN = 4  # the seed estimate of ASCII text
STAMP_TOKENS = 60  # one bounded output's declaration in the boundary record, as the seed counts it
UNBOUNDED = 2**53  # the byte limit of a rule that only clears (`tool_output_limit` 0): no text reaches it


@dataclass(frozen=True, slots=True)
class ChainBounding:
    """The chain's tail as the candidate would hold it: bounded bytes where they differ.

    Only the records from `start` on are bounded (a tail that holds more than the goal, or every
    record a plan keeps); a record before it is summarized whatever the plan, so its raw tokens
    stand in `kept_tokens` and its bounded bytes are never made (on a giant session, most of
    the file).
    """

    lines: Mapping[int, bytes]  # source line -> its bounded bytes
    declared: Mapping[int, tuple[DeclaredBound, ...]]
    rules: Mapping[int, BoundRule]
    kept_tokens: tuple[int, ...]  # per chain position
    start: int = 0  # the first chain position bounded

    def cleared_lines(self, lines: Sequence[int]) -> tuple[int, ...]:
        """The `lines` with a tool output cleared (a masking strategy)."""
        return tuple(line for line in lines if any(item.cleared for item in self.declared.get(line, ())))


@dataclass(frozen=True, slots=True)
class Planned:
    """The plan, the summary written for it (None unless there is a cut), and the bounding.

    `head` goes before the summary in the compact summary record: the preamble, the pinned
    anchors and the summarized protected instructions, each restated verbatim.
    """

    plan: Plan
    summary: Written | None
    bounding: ChainBounding
    notes: tuple[PlanNote, ...] = ()
    head: str = SUMMARY_PREAMBLE

    @property
    def text(self) -> str:
        """The compact summary record's text."""
        assert self.summary is not None
        return f"{self.head}\n\n{self.summary.text}"

    def cut(self, partition: Partition, side: frozenset[int]) -> ChainCut:
        """This plan's compaction, for the chain's format to write (`ChainFormat.compose`)."""
        return ChainCut(self.plan, self.bounding, partition, side, ENGINE_VERSION)


def summary_head(anchors: tuple[str, ...], instructions: tuple[str, ...] = ()) -> str:
    """The preamble, the pinned anchors and the instructions to restate, verbatim, rebuilt every pass."""
    parts = [SUMMARY_PREAMBLE]
    pinned = [anchor for anchor in anchors if anchor.strip()]
    if pinned:
        parts.append("Pinned anchors, restated verbatim:\n" + "\n".join(f"- {a}" for a in pinned))
    if instructions:
        parts.append(
            "The current task's instructions, restated verbatim, each between its markers:\n"
            + "\n".join(restate(text) for text in instructions)
        )
    return "\n\n".join(parts)


def bound_chain(
    analysis: Analysis, options: CompressOptions, protected_start: int, *, goal: int | None = None
) -> ChainBounding:
    """Bound the tool outputs of the chain's tail (media too, before the protected round).

    From the last record back until the bounded tail holds more than `goal` tokens (the whole
    chain without one): no plan for that goal keeps a record before that, and `covering`
    bounds more should one do.
    """
    tokens = tuple(analysis.index.entry(line).tokens for line in analysis.topology.chain)
    empty = ChainBounding({}, {}, {}, tokens, len(tokens))
    if not options.compress.tool_output_limit and options.compress.strategy is Strategy.SUMMARY:
        return replace(empty, start=0)
    return _bound_back(analysis, options, protected_start, empty, goal=goal)


def covering(
    bounding: ChainBounding, analysis: Analysis, options: CompressOptions, protected_start: int, cut: int
) -> ChainBounding:
    """`bounding` extended back to chain position `cut` (itself when it starts there already)."""
    if cut >= bounding.start:
        return bounding
    return _bound_back(analysis, options, protected_start, bounding, stop=cut)


def _bound_back(
    analysis: Analysis,
    options: CompressOptions,
    protected_start: int,
    bounding: ChainBounding,
    *,
    goal: int | None = None,
    stop: int = 0,
) -> ChainBounding:
    """`bounding` with the records before its start bounded, back to `stop` or past `goal` tokens."""
    limit = options.compress.tool_output_limit or UNBOUNDED  # 0: every byte kept (what is not cleared)
    masking = options.compress.strategy is not Strategy.SUMMARY
    inputs = options.compress.strategy is Strategy.MASK  # hybrid keeps assistant records byte for byte
    index, data, chain = analysis.index, analysis.source.data, analysis.topology.chain
    lines, declared, rules = dict(bounding.lines), dict(bounding.declared), dict(bounding.rules)
    tokens = list(bounding.kept_tokens)
    held = sum(tokens[bounding.start :])
    limits, own = LineLimits.of(options.sweep), analysis.chain_format
    position = bounding.start
    while position > stop and (goal is None or held <= goal):
        position -= 1
        line = chain[position]
        older = position < protected_start
        rule = BoundRule(limit, drop_media=older, clear=masking and older, clear_inputs=inputs and older)
        bounded = own.bound(data, rule, index.span(data, line))
        record_tokens = own.record_tokens(bounded[0], limits) if bounded is not None else None
        # a record that does not read back never comes from our own output: it stays as it is
        if bounded is not None and record_tokens is not None:
            lines[line], declared[line], rules[line] = bounded[0], bounded[1], rule
            tokens[position] = record_tokens + STAMP_TOKENS * len(bounded[1])
        held += tokens[position]
    return ChainBounding(lines, declared, rules, tuple(tokens), position)


def _summarize(analysis: Analysis, writer: SummaryWriter, plan: Plan, room: int) -> Written | Reason:
    try:
        evidence = analysis.chain_format.evidence(analysis.source.data, analysis.index, plan.summary_lines)
    except SummaryError as exc:  # a plan naming a line the file does not hold: a bug, refused with figures
        return summary_refusal(exc)
    return writer(evidence, room)


def _restated(analysis: Analysis, plan: Plan) -> tuple[str, ...]:
    """The protected round's instructions that fall in the summarized part, as their records hold them.

    A round no human opened goes on with the instructions its prior summary restated: they come first.
    """
    summarized = set(plan.summary_lines)
    data, index, instruction = analysis.source.data, analysis.index, analysis.chain_format.instruction
    carried, opened = plan.protected.carried_line, plan.protected.user_lines
    before = (
        restated_instructions(instruction(index.raw_line(data, carried)))
        if carried is not None and carried in summarized
        else ()
    )
    return (
        *before,
        *(instruction(index.raw_line(data, line)) for line in opened if line in summarized),
    )


@dataclass(slots=True)
class _Planner:
    """Plans the cut of one chain for a room reserved for the summary.

    Its bounding covers the tail a plan may keep and grows back when a cut the rules put earlier
    keeps more (`covering`); the final bounding is the one every plan read.
    """

    analysis: Analysis
    options: CompressOptions
    bounding: ChainBounding
    lineage_start: int
    repair_floor: int

    def plan(self, reserve: int, keep_turn: bool) -> tuple[Plan, int]:
        """The plan, and the tokens of it the restated protected instructions take beside `reserve`.

        A cut inside the protected turn restates its instruction, so room for it is reserved
        before any summary is written; a cut that moves later for it stays inside that turn.
        """
        plan = self._plan(reserve, keep_turn, 0)
        restated = _restated(self.analysis, plan) if plan.outcome is PlanOutcome.CUT else ()
        if not restated:
            return plan, 0
        tokens = estimate_text(summary_head((), restated)) - estimate_text(summary_head(()))
        return self._plan(reserve, keep_turn, tokens), tokens

    def _plan(self, reserve: int, keep_turn: bool, restated_tokens: int) -> Plan:
        plan = self._cut(reserve, keep_turn, restated_tokens)
        if plan.outcome is not PlanOutcome.CUT or plan.cut >= self.bounding.start:
            return plan
        index, chain = self.analysis.index, self.analysis.topology.chain
        protected_start = protected_round_of(index, chain).start
        self.bounding = covering(self.bounding, self.analysis, self.options, protected_start, plan.cut)
        return self._cut(reserve, keep_turn, restated_tokens)

    def _cut(self, reserve: int, keep_turn: bool, restated_tokens: int) -> Plan:
        return plan_cut(
            self.analysis.index,
            self.analysis.topology.chain,
            self.options.cut(),
            kept_tokens=self.bounding.kept_tokens,
            summary_tokens=reserve + restated_tokens,
            lineage_start=self.lineage_start,
            keep_protected_turn=keep_turn,
            restated_tokens=restated_tokens,
            repair_floor=self.repair_floor,
        )


def _contract_accepts(analysis: Analysis, plan: Plan, summary_text: str) -> bool:
    """Whether the survival contract keeps every protected instruction with this summary."""
    data, index, chain = analysis.source.data, analysis.index, analysis.topology.chain
    protected_from = chain[plan.protected.group_start]
    before = contract_messages(data, index, chain, from_line=protected_from)
    after = [
        ContractMessage(Role.USER, summary_text, checkpoint=True),
        *contract_messages(data, index, plan.raw_lines),
    ]
    return Violation.USER_TEXT_DROPPED not in check_survival(before, after)


def first_plan(
    analysis: Analysis, options: CompressOptions, *, summary_tokens: int, repair_floor: int = 0
) -> Plan:
    """The plan a run starts from with `summary_tokens` reserved (what the dry run predicts from)."""
    index, chain = analysis.index, analysis.topology.chain
    goal = options.cut().goal(analysis.tokens_of(chain))
    bounding = bound_chain(analysis, options, protected_round_of(index, chain).start, goal=goal)
    planner = _Planner(analysis, options, bounding, _final_session_start(analysis), repair_floor)
    return planner.plan(summary_tokens, False)[0]


def _first_reserve(options: CompressOptions, goal: int) -> int:
    return min(options.compress.summary_char_budget // CHARS_PER_TOKEN, goal // INITIAL_SUMMARY_SHARE)


def _final_session_start(analysis: Analysis) -> int:
    """The chain position where the chain's final session begins (0 for a one-session chain).

    Counted on the chain itself, recovered rows included: an earlier session's row after that
    position would keep the earlier session raw.
    """
    lineage, chain = analysis.topology.lineage, analysis.topology.chain
    if lineage is None or not lineage.transitions:
        return 0
    earlier = [
        position
        for position, line in enumerate(chain)
        if (session := analysis.index.entry(line).session) and session != lineage.current_session
    ]
    return max(earlier, default=-1) + 1


def plan_and_summarize(
    analysis: Analysis, options: CompressOptions, *, repair_floor: int = 0
) -> Planned | Reason:
    """The cut, the bounding of the kept tail, and the summary of everything before it.

    `repair_floor` is where a cut must reach to summarize every damaged record (`damage.py`); a
    plan that cannot reach it comes back without a summary, for the caller to refuse.
    """
    index, topology = analysis.index, analysis.topology
    lineage_start = _final_session_start(analysis)
    goal = options.cut().goal(analysis.tokens_of(topology.chain))
    bounding = bound_chain(analysis, options, protected_round_of(index, topology.chain).start, goal=goal)
    writer = options.summary_writer()
    planner = _Planner(analysis, options, bounding, lineage_start, repair_floor)
    reserve = _first_reserve(options, goal)
    keep_turn, last = False, None
    notes: tuple[PlanNote, ...] = ()
    for _ in range(options.compress.max_replans + 2):  # a re-plan for the contract comes on top
        plan, restated_tokens = planner.plan(reserve, keep_turn)
        bounding = planner.bounding
        if plan.outcome is not PlanOutcome.CUT or plan.cut < repair_floor:
            return Planned(plan, None, bounding, notes)
        head = summary_head(options.anchors, _restated(analysis, plan))
        # The compact record holds the head and the summary: the summary's room is the budget's rest.
        summary = _summarize(analysis, writer, plan, options.compress.summary_char_budget - len(head) - 2)
        summary = spent_before(summary, last.summary if last is not None else None)
        if isinstance(summary, Reason):
            return summary
        last = Planned(plan, summary, bounding, notes, head)
        if not keep_turn and not _contract_accepts(analysis, plan, last.text):
            keep_turn = True
            continue
        written = estimate_text(last.text)
        kept = sum(bounding.kept_tokens[plan.cut :]) + 2 * RECORD_ALLOWANCE
        if not writer.replans or written <= reserve + restated_tokens or kept + written <= plan.goal_tokens:
            return last
        reserve, notes = written - restated_tokens, (PlanNote.SUMMARY_LARGER_THAN_PLANNED,)
    assert last is not None  # the loop runs at least twice and writes a summary on a cut
    return replace(last, notes=notes)
