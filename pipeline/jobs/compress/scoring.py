"""The fidelity stage of `compress`: the candidate's probes scored, and the floor applied.

Runs on a candidate that passed its checks, before the resume proof (a refused candidate costs
no resume): the span is the plan's, the resumed context the composed candidate's summary record
and kept records, as written.
"""

from __future__ import annotations

from collections.abc import Collection
from itertools import chain

from pipeline.core.line_runs import LineRuns
from pipeline.core.partition import Partition
from pipeline.core.plan import Plan
from pipeline.formats.line_guard import LineLimits
from pipeline.jobs.compress.options import CompressOptions
from pipeline.jobs.compress.stages import Candidate, Stop
from pipeline.jobs.fidelity_inputs import candidate_fidelity, masked_middle
from pipeline.jobs.front import Analysis
from pipeline.reasons import Reason, Refusal
from pipeline.report.fidelity import FidelitySection, fidelity_section
from pipeline.vocabulary import PartitionSet, SessionStatus

__all__ = ["fidelity_stage"]


def fidelity_stage(
    analysis: Analysis,
    options: CompressOptions,
    plan: Plan,
    partition: Partition,
    candidate: Candidate,
    cleared: Collection[int] = (),
) -> tuple[FidelitySection, Stop | None]:
    """The report's `fidelity`, and a refusal when the candidate is below `compress.min_fidelity`.

    The span is the partition's `summary` set: the plan's summarized lines less the state records
    the candidate carries after its summary (they are kept, not summarized); under a masking
    strategy also the masked middle, the kept records whose tool outputs were `cleared` and those
    between them (what a resumed agent lost of them is measured the same way).
    """
    compress = options.compress
    summarized = partition[PartitionSet.SUMMARY].lines  # runs: not a number object a line
    middle = masked_middle(plan.raw_lines, cleared)
    if middle:
        summarized = LineRuns(chain(summarized, middle))
    measured = candidate_fidelity(
        analysis, summarized, plan.raw_lines, candidate.composed, LineLimits.of(options.sweep)
    )
    section = fidelity_section(
        measured.score,
        span=measured.span.value,
        summarized_lines=measured.summarized_lines,
        lost_per_class=compress.lost_probes_per_class,
        floor=compress.min_fidelity,
    )
    if measured.score.below(compress.min_fidelity):
        return section, Stop(SessionStatus.REFUSED, (Reason(Refusal.FIDELITY_BELOW_MINIMUM),))
    return section, None
