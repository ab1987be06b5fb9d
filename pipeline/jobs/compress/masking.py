"""`--strategy mask`: no summary; every record of the chain kept, old tool outputs cleared.

Every human and assistant record stays as it is (texts, tool calls, thinking blocks and their
signatures); each tool output before the protected round becomes Claude Code's own
`[Old tool result content cleared]` (failed calls' outputs and short ones are only bounded or
kept, as under `hybrid`), and the protected round is bounded as the summary strategy bounds its
tail. There is no compact pair: the candidate is its source's chain with those outputs replaced,
and our `last-prompt` carries the declarations a boundary would (`declaring_pointer`). When
clearing everything it may still leaves the chain over its target, the plan says
`masking-alone-short-of-target` and the candidate is written all the same if it saves
`min_gain`: the user chose to keep every text.
"""

from __future__ import annotations

from dataclasses import replace

from pipeline.core.check.candidate import check_candidate, contract_messages
from pipeline.core.compose import ComposedTranscript, ComposeError
from pipeline.core.partition import Partition
from pipeline.core.plan import Plan, PlanOutcome, protected_round_of
from pipeline.estimate.seed import RECORD_ALLOWANCE
from pipeline.formats.line_guard import LineLimits
from pipeline.jobs.compress.options import CompressOptions
from pipeline.jobs.compress.planning import Planned, bound_chain
from pipeline.jobs.compress.stages import Candidate, Stop
from pipeline.jobs.front import Analysis
from pipeline.reasons import CandidateFailure, PlanNote, Reason, Refusal
from pipeline.vocabulary import PartitionSet, SessionStatus

__all__ = ["mask_plan", "masked_candidate"]


def mask_plan(analysis: Analysis, options: CompressOptions) -> Planned:
    """The whole chain kept, its tool outputs before the protected round cleared (no summary).

    `fits` when the chain is within its target already, `no-cut` when nothing before the
    protected round can be cleared; else a "cut" at position 0 (nothing summarized).
    """
    index, chain = analysis.index, analysis.topology.chain
    protected = protected_round_of(index, chain)
    chain_tokens = analysis.tokens_of(chain)
    goal = options.cut().goal(chain_tokens)
    bounding = bound_chain(analysis, options, protected.start)
    planned_tokens = sum(bounding.kept_tokens) + RECORD_ALLOWANCE
    reasons: tuple[PlanNote, ...]
    if chain_tokens <= goal:
        outcome, reasons = PlanOutcome.FITS, (PlanNote.WHOLE_CHAIN_FITS,)
    elif not bounding.cleared_lines(chain):
        outcome, reasons = PlanOutcome.NO_CUT, (PlanNote.NOTHING_BEFORE_PROTECTED_ROUND,)
    else:
        short = planned_tokens > goal
        outcome, reasons = PlanOutcome.CUT, (PlanNote.MASKING_ALONE_SHORT_OF_TARGET,) if short else ()
    plan = Plan(outcome, 0, (), chain, (), protected, 0, reasons, chain_tokens, goal, planned_tokens)
    return Planned(plan, None, bounding)


def _changed_lines(analysis: Analysis, planned: Planned, composed: ComposedTranscript) -> int:
    """Kept lines that are neither their source bytes nor those bytes bounded by their own rule
    (re-applied to the source: a clearing the candidate does not declare is caught)."""
    data, index, rules = analysis.source.data, analysis.index, planned.bounding.rules
    bound = analysis.chain_format.bound
    output = composed.data.split(b"\n")
    changed = 0
    for number, origin in enumerate(composed.source_lines):
        if origin is None:
            continue
        rule = rules.get(origin)
        bounded = bound(data, rule, index.span(data, origin)) if rule is not None else None
        changed += output[number] != (bounded[0] if bounded is not None else index.raw_line(data, origin))
    return changed


def masked_candidate(
    analysis: Analysis, options: CompressOptions, planned: Planned, partition: Partition, side: frozenset[int]
) -> Candidate | Stop:
    """Lay the masked candidate out and check it from scratch: the same chain (every uuid, in
    order), no new compact pair, the survival contract, each kept line its source or as declared."""
    index, data, topology, plan = analysis.index, analysis.source.data, analysis.topology, planned.plan
    pointer = topology.strict.pointer_line
    try:
        composed = analysis.chain_format.compose_masked(analysis, planned.cut(partition, side))
    except ComposeError as exc:
        return Stop(SessionStatus.REFUSED, (Reason(Refusal.COMPOSE, exc.code),))
    control = partition[PartitionSet.CONTROL_PROJECTION].lines - {pointer}
    kept = (*control, *side, *plan.raw_lines)
    pairs = sum(1 for line in kept if index.entry(line).compact_boundary)
    summary = next((line for line in plan.raw_lines if index.entry(line).compact_summary), None)
    checked = check_candidate(
        composed.data,
        expected_chain_uuids=[index.entry(line).uuid or "" for line in plan.raw_lines],
        new_lines=[len(composed.source_lines)],
        source_messages=contract_messages(data, index, plan.raw_lines, from_line=summary),
        anchors=options.anchors,
        # short of an absolute target, masking alone is still written (`masking-alone-short-of-target`)
        target_estimated_tokens=None if plan.reasons else options.compress.target_estimated_tokens or None,
        limits=LineLimits.of(options.sweep),
        compact_pairs=pairs,
    )
    if _changed_lines(analysis, planned, composed):
        checked = replace(checked, failures=(*checked.failures, Reason(CandidateFailure.RAW_LINE_CHANGED)))
    return Candidate(composed, checked)
