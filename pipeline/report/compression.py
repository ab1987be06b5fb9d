"""Report sections of `compress`: the plan, the summary, the candidate's checks and what was written
(the resume proof's are in `report.resume_check`).

What a format declares of its candidate (bounded outputs, the state it carries past the summary)
comes in as the shapes below (`DeclaredBound`, `CarriedState`, `CarriedLine`), which its own
records fit: the sections name no agent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

from msgspec import UNSET, UnsetType

from pipeline.reasons import PlanNote, Reason
from pipeline.report.sections import FindingEntry, Section, finding_entry
from pipeline.summarize.checkpoint.fitting import SummaryFit  # the section is the fitting's own counts
from pipeline.vocabulary import FindingCode, PlanOutcome, StateAttachment

if TYPE_CHECKING:  # only the builders' arguments: a sweep worker need not import these stages
    from pipeline.core.check.candidate import CandidateCheck
    from pipeline.core.plan import Plan
    from pipeline.findings import Finding
    from pipeline.summarize.model.outcomes import DefectNote, RepairFacts, SummaryAccount, SummaryFailure

__all__ = [
    "CHECK_FINDINGS_LISTED",
    "BoundedOutput",
    "BoundedSection",
    "CarriedLine",
    "CarriedState",
    "ChecksSection",
    "CompressTokens",
    "DeclaredBound",
    "DefectEntry",
    "GroundingSection",
    "MaskSection",
    "ModelPlanSection",
    "OutputSection",
    "PlanSection",
    "ProjectedSection",
    "RepairEntry",
    "SummarySection",
    "WriterSection",
    "bounded_section",
    "checks_section",
    "grounding_section",
    "mask_section",
    "plan_section",
    "projected_section",
    "reason_figures",
    "repairs_section",
    "summary_section",
    "writer_section",
]

CHECK_FINDINGS_LISTED = 20  # a refused candidate's report names its first errors, not thousands
DEFECTS_LISTED = 20  # and an ungrounded answer's first defects (one per uncited human line adds up)


class CompressTokens(Section, frozen=True, kw_only=True):
    """Seed-estimated tokens of the active chain, the target, and once written, of the candidate."""

    estimator: str
    active_chain: int
    target: int | UnsetType = UNSET  # the most the candidate may hold
    output: int | UnsetType = UNSET
    ratio: float | UnsetType = UNSET  # output / active_chain
    target_met: bool | UnsetType = UNSET


class BoundedOutput(Section, frozen=True, kw_only=True):
    """One kept tool output bounded: where, which call, how big before and after, its digest."""

    line: int
    tool_use_id: str
    part: str
    original_bytes: int
    kept_bytes: int
    sha256: str
    media_replaced: int
    cleared: bool = False  # masked: replaced whole by Claude Code's cleared-result marker


class BoundedSection(Section, frozen=True, kw_only=True):
    """Kept tool outputs bounded to `limit` bytes (head, marker, tail), or cleared under a masking
    strategy (`cleared` of them), every one listed."""

    limit: int
    records: int
    original_bytes: int
    kept_bytes: int
    outputs: list[BoundedOutput]
    cleared: int = 0


class MaskSection(Section, frozen=True, kw_only=True):
    """`--strategy mask`: the tool outputs and bulky call inputs cleared (each listed in
    `bounded.outputs`, with its part, size and SHA-256), the records holding them, and the bytes
    that left; whether clearing every one it may still leaves the candidate over its target
    (`masking-alone-short-of-target`)."""

    cleared_outputs: int
    cleared_inputs: int  # file-writing calls whose bulky input strings were cleared
    records: int
    original_bytes: int
    kept_bytes: int
    bytes_cleared: int
    short_of_target: bool


class ProjectedSection(Section, frozen=True, kw_only=True):
    """The resume state the candidate carries after its summary so Claude Code derives the same
    reminders: the summarized attachment records it carries verbatim (how many, of which kinds,
    on which source lines), the background shells left unfinished that the summarized span
    started, one `task_status` record written for each (the source line that started it), and
    the background agents left unfinished that it launched, one record written to carry each
    one's launch result (the source line of that result), and the deferred tools it loaded,
    carried as loaded on the boundary (their names). Never their text."""

    records: int
    kinds: dict[str, int]
    lines: list[int]
    background_shells: list[int]
    background_agents: list[int] | UnsetType = UNSET
    loaded_tools: list[str] | UnsetType = UNSET


class PlanSection(Section, frozen=True, kw_only=True):
    """Where the cut went and what moved it."""

    outcome: PlanOutcome
    cut_position: int
    target_position: int
    protected_start: int
    groups: int
    reasons: list[PlanNote]
    summarized_records: int
    raw_records: int
    chain_tokens: int
    goal_tokens: int
    planned_tokens: int
    estimated_gain: float | UnsetType = UNSET


class DefectEntry(Section, frozen=True, kw_only=True):
    """One grounding defect of a model's answer: codes, section, answer line, anchor; never text."""

    code: str
    detail: str | UnsetType = UNSET  # the structural defect's code (missing-heading, ...)
    section: str | UnsetType = UNSET
    answer_line: int | UnsetType = UNSET
    anchor: int | UnsetType = UNSET


class GroundingSection(Section, frozen=True, kw_only=True):
    """Why a model summary failed the grounding gate: the first answer's defects, how the one
    repair call ended (`still-defective`, or the outcome it ended in), the repaired answer's
    defects. The first `DEFECTS_LISTED` of each are listed; the counts are of all."""

    answer_defects: int
    answer_listed: list[DefectEntry]
    repair: str
    repaired_defects: int
    repaired_listed: list[DefectEntry]


class WriterSection(Section, frozen=True, kw_only=True):
    """A model's summary: provider, model, calls, retries, repairs, billed tokens, depth, time."""

    provider: str
    model: str
    calls: int
    retries: int
    repairs: int
    billed_input_tokens: int  # cached ones included
    billed_output_tokens: int
    cache_read_tokens: int  # of the billed input: read from the provider's prompt cache
    cache_write_tokens: int  # of the billed input: written to it
    cost_usd: float | None  # at [prices], cache at its shares; None: the model is not priced
    calls_without_usage: int
    rate_limit_pauses: int  # 429s that paused the run's calls
    retry_wait_seconds: float  # slept between attempts (backoff, retry-after)
    reduction_depth: int
    chunks: int
    wall_seconds: float
    redactions: dict[str, int]
    redacted_by: list[str]  # our pattern list's version, then the detector library's name and version
    optional_evidence_omitted: int
    fallback_from: str | UnsetType = UNSET  # the model's outcome when the embedded summarizer wrote it
    grounding: GroundingSection | UnsetType = UNSET  # the repair that failed, when one did


class ModelPlanSection(Section, frozen=True, kw_only=True):
    """`--dry-run`: what a model summary of this session would take, if every answer were grounded."""

    model: str
    calls: int
    rounds: int
    estimated_input_tokens: int
    estimated_output_tokens: int
    estimated_cost_usd: float | None
    min_wall_seconds: float
    refusal: str | UnsetType = UNSET  # the outcome it would end in (a group over the budget, ...)


class SummarySection(Section, frozen=True, kw_only=True):
    """The summary written: size, budget, citations, prior summaries, bullets per heading."""

    chars: int
    budget: int
    cited_lines: int
    prior_summaries_folded: int
    prior_mode: str
    sections: dict[str, int]
    writer: WriterSection | UnsetType = UNSET
    fit: SummaryFit | UnsetType = UNSET  # only when the whole summary did not fit its room


class ChecksSection(Section, frozen=True, kw_only=True):
    """The candidate's check: failures, contract violations, and its first error findings."""

    failures: list[str]
    violations: list[str]
    findings: list[FindingEntry]


class RepairEntry(Section, frozen=True, kw_only=True):
    """One defect of the source's active chain that the summary replaced: its line and code."""

    line: int
    code: FindingCode


class OutputSection(Section, frozen=True, kw_only=True):
    """The candidate written: where, its digest and size, and the new compact pair's uuids."""

    path: str
    sha256: str
    bytes: int
    lines: int
    ratio: float
    boundary_uuid: str | UnsetType = UNSET  # none for a masked candidate: it has no compact pair
    summary_uuid: str | UnsetType = UNSET


def plan_section(plan: Plan) -> PlanSection:
    return PlanSection(
        outcome=plan.outcome,
        cut_position=plan.cut,
        target_position=plan.target,
        protected_start=plan.protected.start,
        groups=len(plan.groups),
        reasons=list(plan.reasons),
        summarized_records=len(plan.summary_lines),
        raw_records=len(plan.raw_lines),
        chain_tokens=plan.chain_tokens,
        goal_tokens=plan.goal_tokens,
        planned_tokens=plan.planned_tokens,
    )


class DeclaredBound(Protocol):
    """One tool output (or call input) a candidate declares bounded or cleared, without content."""

    @property
    def tool_use_id(self) -> str: ...
    @property
    def part(self) -> StrEnum: ...  # which copy was bounded: `input` for a call's cleared input
    @property
    def original_bytes(self) -> int: ...
    @property
    def kept_bytes(self) -> int: ...
    @property
    def sha256(self) -> str: ...
    @property
    def media_replaced(self) -> int: ...
    @property
    def cleared(self) -> bool: ...


class CarriedState(Protocol):
    """A state record a candidate carries past its summary: its 1-based line and kind."""

    @property
    def line(self) -> int: ...
    @property
    def kind(self) -> StateAttachment: ...


class CarriedLine(Protocol):
    """Something a candidate carries past its summary (a background shell or agent): the 1-based
    line that started it."""

    @property
    def line(self) -> int: ...


def bounded_section(
    declared: Mapping[int, Sequence[DeclaredBound]], lines: Sequence[int], limit: int
) -> BoundedSection | UnsetType:
    """The bounded outputs among the kept `lines`; unset when none was bounded."""
    outputs = [
        BoundedOutput(
            line=line,
            tool_use_id=item.tool_use_id,
            part=item.part.value,
            original_bytes=item.original_bytes,
            kept_bytes=item.kept_bytes,
            sha256=item.sha256,
            media_replaced=item.media_replaced,
            cleared=item.cleared,
        )
        for line in lines
        for item in declared.get(line, ())
    ]
    if not outputs:
        return UNSET
    return BoundedSection(
        limit=limit,
        records=len({o.line for o in outputs}),
        original_bytes=sum(o.original_bytes for o in outputs),
        kept_bytes=sum(o.kept_bytes for o in outputs),
        outputs=outputs,
        cleared=sum(o.cleared for o in outputs),
    )


def mask_section(
    declared: Mapping[int, Sequence[DeclaredBound]], lines: Sequence[int], *, short_of_target: bool
) -> MaskSection:
    """The cleared outputs among the kept `lines`, counted."""
    cleared = [(line, item) for line in lines for item in declared.get(line, ()) if item.cleared]
    original = sum(item.original_bytes for _, item in cleared)
    kept = sum(item.kept_bytes for _, item in cleared)
    inputs = sum(1 for _, item in cleared if item.part == "input")
    return MaskSection(
        cleared_outputs=len(cleared) - inputs,
        cleared_inputs=inputs,
        records=len({line for line, _ in cleared}),
        original_bytes=original,
        kept_bytes=kept,
        bytes_cleared=original - kept,
        short_of_target=short_of_target,
    )


def reason_figures(reasons: Sequence[Reason]) -> dict[str, dict[str, int]] | UnsetType:
    """Each reason that has figures, with them by name (integers only), or UNSET when none has."""
    figures = {str(reason): {name.value: value for name, value in reason.figures} for reason in reasons}
    return {reason: named for reason, named in figures.items() if named} or UNSET


def projected_section(
    state: Sequence[CarriedState],
    shells: Sequence[CarriedLine] = (),
    agents: Sequence[CarriedLine] = (),
    loaded_tools: Sequence[str] = (),
) -> ProjectedSection | UnsetType:
    """The projected resume state; unset when the summarized span holds none."""
    if not state and not shells and not agents and not loaded_tools:
        return UNSET
    kinds: dict[str, int] = {}
    for record in state:
        kinds[record.kind.value] = kinds.get(record.kind.value, 0) + 1
    return ProjectedSection(
        records=len(state),
        kinds=kinds,
        lines=[record.line for record in state],
        background_shells=[shell.line for shell in shells],
        background_agents=[agent.line for agent in agents] or UNSET,
        loaded_tools=list(loaded_tools) or UNSET,
    )


def summary_section(
    text: str,
    budget: int,
    *,
    cited_lines: int,
    prior_summaries: int,
    prior_mode: str,
    sections: dict[str, int],
    writer: WriterSection | UnsetType = UNSET,
    fit: SummaryFit | None = None,
) -> SummarySection:
    return SummarySection(
        chars=len(text),
        budget=budget,
        cited_lines=cited_lines,
        prior_summaries_folded=prior_summaries,
        prior_mode=prior_mode,
        sections=sections,
        writer=writer,
        fit=UNSET if fit is None else fit,
    )


def _entries(defects: Sequence[DefectNote]) -> list[DefectEntry]:
    return [
        DefectEntry(
            code=defect.code,
            detail=UNSET if defect.detail is None else defect.detail,
            section=UNSET if defect.section is None else defect.section,
            answer_line=UNSET if defect.answer_line is None else defect.answer_line,
            anchor=UNSET if defect.anchor is None else defect.anchor,
        )
        for defect in defects[:DEFECTS_LISTED]
    ]


def grounding_section(repair: RepairFacts) -> GroundingSection:
    return GroundingSection(
        answer_defects=len(repair.answer_defects),
        answer_listed=_entries(repair.answer_defects),
        repair=repair.outcome,
        repaired_defects=len(repair.repaired_defects),
        repaired_listed=_entries(repair.repaired_defects),
    )


def writer_section(
    account: SummaryAccount, fallback_from: str | None, failure: SummaryFailure | None = None
) -> WriterSection:
    """Who wrote the summary (or tried to) and what it cost (counts only, never prompt text)."""
    repair = failure.facts.repair_call if failure is not None else None
    return WriterSection(
        provider=account.provider,
        model=account.model,
        calls=account.calls,
        retries=account.retries,
        repairs=account.repairs,
        billed_input_tokens=account.billed_input_tokens,
        billed_output_tokens=account.billed_output_tokens,
        cache_read_tokens=account.cache_read_tokens,
        cache_write_tokens=account.cache_write_tokens,
        cost_usd=None if account.cost_usd is None else round(account.cost_usd, 9),
        calls_without_usage=account.calls_without_usage,
        rate_limit_pauses=account.rate_limit_pauses,
        retry_wait_seconds=round(account.retry_wait_seconds, 3),
        reduction_depth=account.reduction_depth,
        chunks=account.chunks,
        wall_seconds=round(account.wall_seconds, 3),
        redactions={kind.value: count for kind, count in account.redactions.counts},
        redacted_by=list(account.redacted_by),
        optional_evidence_omitted=account.optional_evidence_omitted,
        fallback_from=fallback_from or UNSET,
        grounding=UNSET if repair is None else grounding_section(repair),
    )


def checks_section(checked: CandidateCheck) -> ChecksSection:
    return ChecksSection(
        failures=[str(failure) for failure in checked.failures],
        violations=[violation.value for violation in checked.violations],
        findings=[finding_entry(finding) for finding in checked.findings[:CHECK_FINDINGS_LISTED]],
    )


def repairs_section(defects: Sequence[Finding]) -> list[RepairEntry] | UnsetType:
    """The defects the summary replaced, by line; unset when there were none."""
    if not defects:
        return UNSET
    entries = {(d.line or 0, d.code): RepairEntry(line=d.line or 0, code=d.code) for d in defects}
    return [entries[key] for key in sorted(entries)]
