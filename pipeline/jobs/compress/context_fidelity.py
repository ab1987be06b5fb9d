"""The fidelity of a candidate made through the seam: the probes of its summarized span (the
evidence the summarizers read) scored in what its client resumes (the candidate's own context
read as evidence: its summary, then the kept tail), the same probes and report section as a Claude
Code candidate's (`pipeline.fidelity`, `jobs/compress/scoring.py`)."""

from __future__ import annotations

from pipeline.agents.protocol import ContextSession
from pipeline.fidelity import FidelityScore, extract_probes, resumed_context, score_probes
from pipeline.formats.context_items import TailPlan
from pipeline.jobs.fidelity_inputs import SpanSource
from pipeline.report.fidelity import FidelitySection, fidelity_section
from pipeline.summarize.evidence.items import EvidenceItem, EvidenceKind

__all__ = ["context_fidelity"]


def _resumed(candidate: ContextSession) -> tuple[EvidenceItem, ...]:
    """Everything the candidate's client sends, as evidence (a cut after its last item)."""
    whole = TailPlan(
        first_item=len(candidate.sent()), cut_line=candidate.line_count + 1, target_met=True, at_turn=False
    )
    return candidate.evidence(whole)


def _score(span: tuple[EvidenceItem, ...], candidate: ContextSession) -> FidelityScore:
    resumed = _resumed(candidate)
    later = [item for item in resumed if item.kind is not EvidenceKind.PRIOR_SUMMARY]
    return score_probes(extract_probes(span, later), resumed_context(resumed))


def context_fidelity(
    span: tuple[EvidenceItem, ...],
    candidate: ContextSession,
    summarized_lines: int,
    *,
    lost_per_class: int,
    floor: float,
) -> tuple[FidelitySection, bool]:
    """The report's `fidelity` of a candidate, and whether it is below `floor`."""
    score = _score(span, candidate)
    section = fidelity_section(
        score,
        span=SpanSource.PLAN.value,
        summarized_lines=summarized_lines,
        lost_per_class=lost_per_class,
        floor=floor,
    )
    return section, score.below(floor)
