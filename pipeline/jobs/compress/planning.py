"""Plan and summary, together: the cut is sized by tokens, and the summary's size feeds back.

The kept tail is measured as it will be written: each kept record with its tool outputs bounded
(`formats.claude_code.bound`; media replaced outside the protected round). The planner reserves
room for the summary; once written, a summary larger than its room moves the cut later and is
written again (at most `compress.max_replans` times). A cut inside the protected round's turn
summarizes the instruction that opened it: whoever writes the summary, our code restates that
instruction (and one a prior summary restated, for a task it goes on with) verbatim ahead of
it, and the plan reserves room for it. Should the contract still refuse such a plan, it is
replaced by one that keeps that whole turn raw: the contract never refuses a cut we propose.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from pipeline.core.check.candidate import contract_messages
from pipeline.core.check.contract import (
    ContractMessage,
    Violation,
    check_survival,
    restate,
    restated_instructions,
)
from pipeline.core.compose import SUMMARY_PREAMBLE
from pipeline.core.plan import CutOptions, Plan, PlanOutcome, plan_cut, protected_round_of
from pipeline.estimate.seed import RECORD_ALLOWANCE, estimate_text
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

__all__ = ["ChainBounding", "Planned", "bound_chain", "plan_and_summarize", "summary_head"]

INITIAL_SUMMARY_SHARE = 5  # room first reserved for the summary: a fifth of the goal, at most its budget
CHARS_PER_TOKEN = 4  # the seed estimate of ASCII text


@dataclass(frozen=True, slots=True)
class ChainBounding:
    """Every active-chain record as the candidate would hold it: bounded bytes where they differ."""

    lines: Mapping[int, bytes]  # source line -> its bounded bytes
    declared: Mapping[int, tuple[BoundedRecord, ...]]
    rules: Mapping[int, BoundRule]
    kept_tokens: tuple[int, ...]  # per chain position


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


def bound_chain(analysis: Analysis, options: CompressOptions, protected_start: int) -> ChainBounding:
    """Bound the tool outputs of every chain record (media too, before the protected round)."""
    limit = options.compress.tool_output_limit
    index, data, chain = analysis.index, analysis.source.data, analysis.topology.chain
    tokens = [index.entry(line).tokens for line in chain]
    if not limit:
        return ChainBounding({}, {}, {}, tuple(tokens))
    lines: dict[int, bytes] = {}
    declared: dict[int, tuple[BoundedRecord, ...]] = {}
    rules: dict[int, BoundRule] = {}
    limits = LineLimits.of(options.sweep)
    for position, line in enumerate(chain):
        rule = BoundRule(limit, drop_media=position < protected_start)
        bounded = bound_line(data, rule, span=index.span(data, line))
        if bounded is None:
            continue
        record = decode_record(bounded[0], limits=limits)
        if not isinstance(record, DecodedRecord):
            continue  # never happens for our own output; keep the record as it is
        lines[line], declared[line], rules[line] = bounded[0], bounded[1], rule
        tokens[position] = record.tokens
    return ChainBounding(lines, declared, rules, tuple(tokens))


def _summarize(analysis: Analysis, writer: SummaryWriter, plan: Plan) -> Written | Reason:
    return writer(extract_evidence(analysis.source.data, analysis.index, plan.summary_lines))


def _restated(analysis: Analysis, plan: Plan) -> tuple[str, ...]:
    """The protected round's instructions that fall in the summarized part, as their records hold them.

    A round no human opened goes on with the instructions its prior summary restated: they come first.
    """
    summarized = set(plan.summary_lines)
    data, index = analysis.source.data, analysis.index
    carried = plan.protected.carried_line
    before = (
        restated_instructions(message_text(index.raw_line(data, carried))[1])
        if carried is not None and carried in summarized
        else ()
    )
    return (
        *before,
        *(
            message_text(index.raw_line(data, line))[1]
            for line in plan.protected.user_lines
            if line in summarized
        ),
    )


@dataclass(frozen=True, slots=True)
class _Planner:
    """Plans the cut of one chain for a room reserved for the summary."""

    analysis: Analysis
    cut: CutOptions
    bounding: ChainBounding
    lineage_start: int

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
        return plan_cut(
            self.analysis.index,
            self.analysis.topology.chain,
            self.cut,
            kept_tokens=self.bounding.kept_tokens,
            summary_tokens=reserve + restated_tokens,
            lineage_start=self.lineage_start,
            keep_protected_turn=keep_turn,
            restated_tokens=restated_tokens,
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


def _first_reserve(options: CompressOptions, goal: int) -> int:
    return min(options.compress.summary_char_budget // CHARS_PER_TOKEN, goal // INITIAL_SUMMARY_SHARE)


def plan_and_summarize(analysis: Analysis, options: CompressOptions) -> Planned | Reason:
    """The cut, the bounding of the kept tail, and the summary of everything before it."""
    index, topology = analysis.index, analysis.topology
    lineage = topology.lineage
    bounding = bound_chain(analysis, options, protected_round_of(index, topology.chain).start)
    writer = options.summary_writer()
    cut = options.cut()
    planner = _Planner(
        analysis, cut, bounding, lineage.current_start if lineage and lineage.transitions else 0
    )
    reserve = _first_reserve(options, cut.goal(analysis.tokens_of(topology.chain)))
    keep_turn, last = False, None
    notes: tuple[PlanNote, ...] = ()
    for _ in range(options.compress.max_replans + 2):  # a re-plan for the contract comes on top
        plan, restated_tokens = planner.plan(reserve, keep_turn)
        if plan.outcome is not PlanOutcome.CUT:
            return Planned(plan, None, bounding, notes)
        summary = _summarize(analysis, writer, plan)
        if isinstance(summary, Reason):
            return summary
        head = summary_head(options.anchors, _restated(analysis, plan))
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
