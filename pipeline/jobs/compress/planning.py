"""Plan and summary, together: the cut is sized by tokens, and the summary's size feeds back.

The kept tail is measured as it will be written: each kept record with its tool outputs bounded
(`formats.claude_code.bound`; media replaced outside the protected round). The planner reserves
room for the summary; once written, a summary larger than its room moves the cut later and is
written again (at most `compress.max_replans` times). A plan whose summarized part holds an
instruction the survival contract requires verbatim, and that the summary does not carry, is
replaced by one that keeps that whole turn raw: the contract never refuses a cut we propose.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from pipeline.core.check.candidate import contract_messages
from pipeline.core.check.contract import ContractMessage, Violation, check_survival
from pipeline.core.compose import SUMMARY_PREAMBLE
from pipeline.core.plan import Plan, PlanOutcome, plan_cut, protected_round_of
from pipeline.estimate.seed import estimate_text
from pipeline.formats.claude_code.bound import BoundedRecord, BoundRule, bound_line
from pipeline.formats.claude_code.decode import DecodedRecord, decode_record
from pipeline.formats.claude_code.guard import LineLimits
from pipeline.formats.claude_code.records import message_text
from pipeline.jobs.compress.options import CompressOptions
from pipeline.jobs.compress.writers import SummaryWriter, Written
from pipeline.jobs.front import Analysis
from pipeline.reasons import PlanNote, Reason
from pipeline.summarize import extract_evidence
from pipeline.vocabulary import Role

__all__ = [
    "ChainBounding",
    "Planned",
    "bound_chain",
    "bounded_plan",
    "covering",
    "plan_and_summarize",
    "summary_head",
]

INITIAL_SUMMARY_SHARE = 5  # room first reserved for the summary: a fifth of the goal, at most its budget
CHARS_PER_TOKEN = 4  # the seed estimate of ASCII text


@dataclass(frozen=True, slots=True)
class ChainBounding:
    """The chain's tail as the candidate would hold it: bounded bytes where they differ.

    Only the records from `start` on are bounded (a tail that holds more than the goal, or every
    record a plan keeps); a record before it is summarized whatever the plan, so its raw tokens
    stand in `kept_tokens` and its bounded bytes are never made (on a giant session, most of
    the file).
    """

    lines: Mapping[int, bytes]  # source line -> its bounded bytes
    declared: Mapping[int, tuple[BoundedRecord, ...]]
    rules: Mapping[int, BoundRule]
    kept_tokens: tuple[int, ...]  # per chain position
    start: int = 0  # the first chain position bounded


@dataclass(frozen=True, slots=True)
class Planned:
    """The plan, the summary written for it (None unless there is a cut), and the bounding.

    `head` goes before the summary in the compact summary record: the preamble, the pinned
    anchors and, for a model's summary, the summarized protected instructions, verbatim.
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


def summary_head(anchors: tuple[str, ...], instructions: tuple[str, ...] = ()) -> str:
    """The preamble, the pinned anchors and the instructions to restate, verbatim, rebuilt every pass."""
    parts = [SUMMARY_PREAMBLE]
    pinned = [anchor for anchor in anchors if anchor.strip()]
    if pinned:
        parts.append("Pinned anchors, restated verbatim:\n" + "\n".join(f"- {a}" for a in pinned))
    if instructions:
        parts.append("The current instructions, restated verbatim:\n" + "\n\n".join(instructions))
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
    if not options.compress.tool_output_limit:
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
    limit = options.compress.tool_output_limit
    index, data, chain = analysis.index, analysis.source.data, analysis.topology.chain
    lines, declared, rules = dict(bounding.lines), dict(bounding.declared), dict(bounding.rules)
    tokens = list(bounding.kept_tokens)
    held = sum(tokens[bounding.start :])
    limits = LineLimits.of(options.sweep)
    position = bounding.start
    while position > stop and (goal is None or held <= goal):
        position -= 1
        line = chain[position]
        rule = BoundRule(limit, drop_media=position < protected_start)
        bounded = bound_line(data, rule, span=index.span(data, line))
        record = decode_record(bounded[0], limits=limits) if bounded is not None else None
        # a record that does not read back never comes from our own output: it stays as it is
        if bounded is not None and isinstance(record, DecodedRecord):
            lines[line], declared[line], rules[line] = bounded[0], bounded[1], rule
            tokens[position] = record.tokens
        held += tokens[position]
    return ChainBounding(lines, declared, rules, tuple(tokens), position)


def _summarize(analysis: Analysis, writer: SummaryWriter, plan: Plan) -> Written | Reason:
    return writer(extract_evidence(analysis.source.data, analysis.index, plan.summary_lines))


def _restated(analysis: Analysis, plan: Plan) -> tuple[str, ...]:
    """The protected round's instructions that fall in the summarized part, as their records hold them."""
    summarized = set(plan.summary_lines)
    data, index = analysis.source.data, analysis.index
    return tuple(
        message_text(index.raw_line(data, line))[1]
        for line in plan.protected.user_lines
        if line in summarized
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


def bounded_plan(
    analysis: Analysis,
    options: CompressOptions,
    bounding: ChainBounding,
    *,
    summary_tokens: int,
    lineage_start: int = 0,
    keep_protected_turn: bool = False,
) -> tuple[Plan, ChainBounding]:
    """`plan_cut` over the bounded tail, and the bounding extended to every record the plan keeps.

    A plan reads the bounded tokens of the records it keeps and of the one its tail could not
    take (`bound_chain` covers both); only a cut the rules put before the tail that fits (a missed
    target) keeps records bounded afresh here, which leaves the cut where it is.
    """
    index, chain = analysis.index, analysis.topology.chain

    def plan(kept: ChainBounding) -> Plan:
        return plan_cut(
            index,
            chain,
            options.cut(),
            kept_tokens=kept.kept_tokens,
            summary_tokens=summary_tokens,
            lineage_start=lineage_start,
            keep_protected_turn=keep_protected_turn,
        )

    chosen = plan(bounding)
    if chosen.outcome is not PlanOutcome.CUT or chosen.cut >= bounding.start:
        return chosen, bounding
    protected_start = protected_round_of(index, chain).start
    bounding = covering(bounding, analysis, options, protected_start, chosen.cut)
    return plan(bounding), bounding


def _first_reserve(options: CompressOptions, goal: int) -> int:
    return min(options.compress.summary_char_budget // CHARS_PER_TOKEN, goal // INITIAL_SUMMARY_SHARE)


def plan_and_summarize(analysis: Analysis, options: CompressOptions) -> Planned | Reason:
    """The cut, the bounding of the kept tail, and the summary of everything before it."""
    index, topology = analysis.index, analysis.topology
    lineage = topology.lineage
    lineage_start = lineage.current_start if lineage and lineage.transitions else 0
    goal = options.cut().goal(analysis.tokens_of(topology.chain))
    bounding = bound_chain(analysis, options, protected_round_of(index, topology.chain).start, goal=goal)
    writer = options.summary_writer()
    reserve = _first_reserve(options, goal)
    keep_turn, last = False, None
    notes: tuple[PlanNote, ...] = ()
    for _ in range(options.compress.max_replans + 2):  # a re-plan for the contract comes on top
        plan, bounding = bounded_plan(
            analysis,
            options,
            bounding,
            summary_tokens=reserve,
            lineage_start=lineage_start,
            keep_protected_turn=keep_turn,
        )
        if plan.outcome is not PlanOutcome.CUT:
            return Planned(plan, None, bounding, notes)
        summary = _summarize(analysis, writer, plan)
        if isinstance(summary, Reason):
            return summary
        restated = _restated(analysis, plan) if writer.restates_instructions else ()
        last = Planned(plan, summary, bounding, notes, summary_head(options.anchors, restated))
        if not keep_turn and not _contract_accepts(analysis, plan, last.text):
            keep_turn = True
            continue
        written = estimate_text(last.text)
        if (
            not writer.replans
            or written <= reserve
            or plan.planned_tokens - reserve + written <= plan.goal_tokens
        ):
            return last
        reserve, notes = written, (PlanNote.SUMMARY_LARGER_THAN_PLANNED,)
    assert last is not None  # the loop runs at least twice and writes a summary on a cut
    return replace(last, notes=notes)
