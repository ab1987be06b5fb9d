"""`compress` of a session read through the seam (`agents/protocol.py`): keep the recent tail
byte for byte, summarize the older span with the same summarizers as for Claude Code, write the
summary in the agent's own compaction form, prove it, publish it.

gate -> plan the tail by tokens -> summarize the span before it -> compose the candidate ->
check that the candidate's rebuilt context is the summary followed by the original's context
from the cut on, item for item as the client sends it -> gain -> fidelity (the span's probes in
the candidate's context, `context_fidelity.py`; a floor may refuse it) -> the resume gate (the agent's
own client resumes both and sends the same: `context_proof.py`) -> re-read the source -> write.
Nothing is written for a session that stops at any step; the report says why.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import msgspec
from msgspec import UNSET, UnsetType

from pipeline.agents.protocol import ContextFormat, ContextSession
from pipeline.core.partition import checked_partition
from pipeline.findings import Finding
from pipeline.formats.context_items import TailPlan
from pipeline.formats.line_guard import LineLimits
from pipeline.jobs.compress.candidate_file import write_candidate_file
from pipeline.jobs.compress.context_fidelity import context_fidelity
from pipeline.jobs.compress.options import CompressOptions
from pipeline.jobs.compress.writers import Written
from pipeline.read.load import SourceBytes
from pipeline.reasons import PlanNote, Reason, Refusal, SkipReason
from pipeline.report.compression import ChecksSection, CompressTokens, ModelPlanSection, SummarySection
from pipeline.report.documents import Compressed, ContextCompressReport, Outcome, Refused, Skipped
from pipeline.report.fidelity import FidelitySection
from pipeline.report.resume_check import ResumeCheckSection
from pipeline.report.resume_context import ContextOutputSection, CutSection
from pipeline.report.sections import (
    PartitionSection,
    Timing,
    findings_section,
    partition_section,
    peak_rss_mb,
    session_section,
)
from pipeline.summarize.evidence.items import EvidenceItem
from pipeline.vocabulary import PartitionSet, ResumeGate, SessionKind, SessionStatus, Severity, Strategy

__all__ = [
    "ContextPublisher",
    "ModelPlanner",
    "compress_context",
    "context_output",
    "plan_context",
    "write_context",
]


@dataclass(frozen=True, slots=True)
class _Stop:
    status: SessionStatus
    reasons: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Context:
    """The original read, and its rebuilt context as sent, with the client's estimate per item."""

    agent: ContextFormat
    session: ContextSession
    digests: list[str]  # each sent item's digest, as the golden test names items
    tokens: list[int]

    @property
    def total(self) -> int:
        return sum(self.tokens)


@dataclass(frozen=True, slots=True)
class _Draft:
    plan: TailPlan
    written: Written
    data: bytes
    candidate: ContextSession  # the candidate read back, as its client rebuilds it
    evidence: tuple[EvidenceItem, ...]  # the summarized span, as the summarizer read it
    summary_line: int  # the candidate's line carrying the summary (its form decides where)

    @property
    def output_tokens(self) -> int:
        return sum(item.tokens for item in self.candidate.sent())


def _context(agent: ContextFormat, source: SourceBytes, limits: LineLimits) -> _Context:
    session = agent.read(source.data, source.path, limits)
    sent = session.sent()
    return _Context(agent, session, [item.digest for item in sent], [item.tokens for item in sent])


def _target(context: _Context, options: CompressOptions) -> int:
    """The goal Claude Code's cut has too: the ratio of the context, capped by the window share."""
    return options.cut().goal(context.total)


def _gate(context: _Context, options: CompressOptions) -> _Stop | None:
    """What stops a session before any summary: a strategy other than summary, its client cannot
    resume it, or it needs no compaction."""
    if options.compress.strategy is not Strategy.SUMMARY:  # what a masked session resumes is unproven
        return _Stop(SessionStatus.UNSUPPORTED_FORMAT, (SkipReason.STRATEGY_NOT_FOR_FORMAT.value,))
    if context.session.kind is SessionKind.SUBAGENT:  # its client never resumes it, as Claude Code's
        return _Stop(SessionStatus.SKIPPED_SUBAGENT, (SkipReason.SUBAGENT.value,))
    if not context.session.resumable:
        return _not_resumed(context.session)
    if context.total < options.compress.min_tokens:
        return _Stop(SessionStatus.SKIPPED_SMALL, (SkipReason.BELOW_MIN_TOKENS.value,))
    if context.total <= _target(context, options):
        return _Stop(SessionStatus.SKIPPED_FITS, (PlanNote.WHOLE_CHAIN_FITS.value,))
    return None


def _not_resumed(session: ContextSession) -> _Stop:
    """A file its client does not resume: broken (refused, with its errors' codes), or not one it
    resumes by design (a checkpoint, a legacy document: skipped, saying so)."""
    errors = sorted({f.code.value for f in session.findings if f.severity is Severity.ERROR})
    if errors:
        return _Stop(SessionStatus.REFUSED, (str(Reason(Refusal.TOPOLOGY)), *errors))
    return _Stop(SessionStatus.SKIPPED_NOT_RESUMED, (SkipReason.NOT_RESUMED.value,))


# A summary's characters per token of its JSON item: escapes and non-ASCII make it dearer.
_CHARS_PER_TOKEN = 3


def _reserve(context: _Context, options: CompressOptions) -> int:
    """Tokens first set aside for the summary: its budget, but never more than a third of the target."""
    return min(options.compress.summary_char_budget // _CHARS_PER_TOKEN, _target(context, options) // 3)


def _summary_room(context: _Context, options: CompressOptions, plan: TailPlan) -> int:
    """Characters the summary may take beside the tail the plan keeps, within the target."""
    tail = sum(context.tokens[plan.first_item :])
    overhead = context.session.summary_sent("").tokens
    left = (_target(context, options) - tail - overhead) * _CHARS_PER_TOKEN
    return max(0, min(options.compress.summary_char_budget, left))


def _tail_damage(session: ContextSession, cut_line: int) -> Finding | None:
    """An error the kept tail would carry (damage in the summarized span is left behind)."""
    return next(
        (
            f
            for f in session.findings
            if f.severity is Severity.ERROR and (f.line is None or f.line >= cut_line)
        ),
        None,
    )


def _draft(context: _Context, options: CompressOptions, limits: LineLimits) -> _Draft | _Stop:
    """Plan, summarize, compose and check; a summary larger than its room re-plans the cut."""
    reserve, draft = _reserve(context, options), None
    for _ in range(options.compress.max_replans + 1):
        draft = _attempt(context, options, limits, _target(context, options) - reserve)
        if isinstance(draft, _Stop) or draft.output_tokens <= _target(context, options):
            return draft
        if not options.summary_writer().replans:
            break
        reserve += draft.output_tokens - _target(context, options)
    assert draft is not None
    return draft


def _cut(context: _Context, room: int) -> TailPlan | _Stop:
    """The tail within `room` tokens, at a safe cut."""
    plan = context.session.plan_tail(room)
    if plan is None:
        return _Stop(SessionStatus.SKIPPED_NO_CUT, (PlanNote.NO_SAFE_CUT_WITHIN_TARGET.value,))
    return plan


def _attempt(context: _Context, options: CompressOptions, limits: LineLimits, room: int) -> _Draft | _Stop:
    """One candidate: the tail within `room` tokens, the summary of what comes before it."""
    plan = _cut(context, room)
    if isinstance(plan, _Stop):
        return plan
    evidence = context.session.evidence(plan)
    written = options.summary_writer()(evidence, _summary_room(context, options, plan))
    if isinstance(written, Reason):
        return _Stop(SessionStatus.REFUSED, (str(written),))
    data, summary_line = _compose(context.session, plan, written.text, options.drop_history)
    checked = _check(data, context, plan, written.text, limits)
    if isinstance(checked, _Stop):
        # Damage after the cut is refused by name, unless the candidate leaves it behind: a line
        # the client skips on load (pi's joined records), dropped by an archival form that still
        # sends the same context, stays in the original (or the verified backup) only.
        damage = _tail_damage(context.session, plan.cut_line)
        refused = Reason(Refusal.SOURCE_CHAIN_INVALID)
        return checked if damage is None else _Stop(SessionStatus.REFUSED, (str(refused), damage.code.value))
    return _Draft(plan, written, data, checked, evidence, summary_line)


def _compose(session: ContextSession, plan: TailPlan, summary: str, drop_history: bool) -> tuple[bytes, int]:
    """The candidate and its summary's line: the archival form when asked and the format has one."""
    archived = session.compose_archive(plan, summary) if drop_history else None
    return archived or (session.compose(plan, summary), session.summary_line())


def _check(
    data: bytes, context: _Context, plan: TailPlan, summary: str, limits: LineLimits
) -> ContextSession | _Stop:
    """The candidate's context must be the summary, then the original's from the cut, as sent."""
    candidate = context.agent.read(data, None, limits)
    sent = candidate.sent()
    expected = [context.session.summary_sent(summary).digest, *context.digests[plan.first_item :]]
    errors = [f for f in candidate.findings if f.severity is Severity.ERROR]
    if errors or [item.digest for item in sent] != expected:
        return _Stop(SessionStatus.REFUSED, (str(Reason(Refusal.COMPOSE)),))
    return candidate


def context_output(path: str, data: bytes, source: SourceBytes, summary_line: int) -> ContextOutputSection:
    """The report's `output` of a candidate's bytes, wherever they go (`path`, as reported)."""
    return ContextOutputSection(
        path=path,
        sha256=hashlib.sha256(data).hexdigest(),
        bytes=len(data),
        lines=data.count(b"\n"),
        ratio=round(len(data) / max(1, source.size), 4),
        compacted_line=summary_line,
    )


ContextPublisher = Callable[[SourceBytes, str, CompressOptions, bytes, int], "ContextOutputSection | Reason"]
"""What becomes of a candidate that passed its check (its bytes, and its summary's line): written,
or a refusal why not."""


def write_context(
    source: SourceBytes, label: str, options: CompressOptions, data: bytes, summary_line: int
) -> ContextOutputSection | Reason:
    """`--out`: the candidate written by the one candidate writer, or the refusal why not."""
    written = write_candidate_file(source, label, options, data)
    return written if isinstance(written, Reason) else context_output(written, data, source, summary_line)


@dataclass(frozen=True, slots=True)
class _Made:
    """The report sections of a candidate that was made (written or not)."""

    tokens: CompressTokens
    reasons: tuple[str, ...]
    cut: CutSection
    summary: SummarySection
    partition: PartitionSection
    fidelity: FidelitySection
    below_floor: bool  # the fidelity is below `compress.min_fidelity`
    resume_check: ResumeCheckSection | UnsetType = UNSET


def _report(
    source: SourceBytes,
    label: str,
    context: _Context,
    options: CompressOptions,
    status: SessionStatus,
    started: float,
    made: _Made | _Stop,
    output: ContextOutputSection | UnsetType = UNSET,
) -> ContextCompressReport:
    read = context.session
    session = session_section(label, source, read.versions, read.line_count, context.agent.format, read.kind)
    stopped = ContextCompressReport(
        session=session,
        status=status,
        findings=findings_section(read.findings, per_code=options.sweep.findings_per_code),
        context=read.context_section(context.total),
        tokens=_tokens(context, options, None),
        reasons=list(made.reasons),
        timing_ms=Timing(
            analyze=round((time.perf_counter() - started) * 1000, 2),
            total=round((time.perf_counter() - started) * 1000, 2),
            worker_peak_rss_mb=peak_rss_mb(),
        ),
    )
    if isinstance(made, _Stop):
        return stopped
    return msgspec.structs.replace(
        stopped,
        tokens=made.tokens,
        cut=made.cut,
        summary=made.summary,
        partition=made.partition,
        fidelity=made.fidelity,
        checks=ChecksSection(failures=[], violations=[], findings=[]),  # made only when they hold
        resume_check=made.resume_check,
        output=output,
    )


def _tokens(context: _Context, options: CompressOptions, output: int | None) -> CompressTokens:
    target = _target(context, options)
    if output is None:
        return CompressTokens(estimator=context.agent.estimator, active_chain=context.total, target=target)
    return CompressTokens(
        estimator=context.agent.estimator,
        active_chain=context.total,
        target=target,
        output=output,
        ratio=round(output / max(1, context.total), 4),
        target_met=output <= target,
    )


def _made(context: _Context, options: CompressOptions, draft: _Draft) -> _Made:
    """The report sections of a candidate that was made (written or not)."""
    written, plan = draft.written, draft.plan
    sets = context.session.compress_sets(plan)
    fidelity, below = context_fidelity(
        draft.evidence,
        draft.candidate,
        len(sets[PartitionSet.SUMMARY]),
        lost_per_class=options.compress.lost_probes_per_class,
        floor=options.compress.min_fidelity,
    )
    missed = () if draft.output_tokens <= _target(context, options) else (
        PlanNote.TARGET_MISSED.value, PlanNote.NO_SAFE_CUT_WITHIN_TARGET.value,
    )  # fmt: skip
    return _Made(
        tokens=_tokens(context, options, draft.output_tokens),
        reasons=missed,
        cut=CutSection(
            cut_line=plan.cut_line,
            summarized_items=plan.first_item,
            kept_items=len(context.digests) - plan.first_item,
            at_turn_start=plan.at_turn,
        ),
        summary=SummarySection(
            chars=len(written.text),
            budget=options.compress.summary_char_budget,
            cited_lines=len(written.cited_lines),
            prior_summaries_folded=written.prior_summaries,
            prior_mode=written.prior_mode,
            sections=written.sections,
        ),
        partition=partition_section(checked_partition(sets, context.session.line_count)),
        fidelity=fidelity,
        below_floor=below,
    )


def compress_context(
    agent: ContextFormat,
    label: str,
    source: SourceBytes,
    options: CompressOptions,
    publish: ContextPublisher = write_context,
) -> Outcome:
    """Compress one session into a candidate that `publish` takes (by default: writes under the
    output directory), or say why not."""
    started = time.perf_counter()
    context = _context(agent, source, LineLimits.of(options.sweep))

    def report(
        status: SessionStatus, made: _Made | _Stop, output: ContextOutputSection | UnsetType = UNSET
    ) -> ContextCompressReport:
        return _report(source, label, context, options, status, started, made, output)

    stop = _gate(context, options)
    draft = _draft(context, options, LineLimits.of(options.sweep)) if stop is None else stop
    if isinstance(draft, _Stop):
        outcome = Refused if draft.status is SessionStatus.REFUSED else Skipped
        return outcome(label, report(draft.status, draft))
    made = _made(context, options, draft)
    if draft.output_tokens > context.total * (1 - options.compress.min_gain):
        low_gain = replace(made, reasons=(SkipReason.GAIN_BELOW_MINIMUM.value,))
        return Skipped(label, report(SessionStatus.SKIPPED_LOW_GAIN, low_gain))
    if made.below_floor:  # as for Claude Code: refused before any resume
        below = replace(made, reasons=(str(Reason(Refusal.FIDELITY_BELOW_MINIMUM)),))
        return Refused(label, report(SessionStatus.REFUSED, below))
    if options.compress.verify_resume is not ResumeGate.OFF:
        from pipeline.jobs.compress.context_proof import prove_context  # noqa: PLC0415 - starts a client: gate only

        cut = (draft.plan, draft.written.text)
        check, refusal = prove_context(source, context.agent, context.session, cut, draft.data, options)
        made = replace(made, resume_check=check)
        if refusal is not None:
            return Refused(label, report(SessionStatus.REFUSED, replace(made, reasons=(str(refusal),))))
    published = publish(source, label, options, draft.data, draft.summary_line)
    if isinstance(published, Reason):
        return Refused(label, report(SessionStatus.REFUSED, replace(made, reasons=(str(published),))))
    return Compressed(label, report(SessionStatus.COMPRESSED, made, published))


ModelPlanner = Callable[[tuple[EvidenceItem, ...]], ModelPlanSection]
"""`--dry-run`'s prediction of a model summary over the evidence of the summarized span."""


def plan_context(
    agent: ContextFormat, label: str, source: SourceBytes, options: CompressOptions, predict: ModelPlanner
) -> Outcome:
    """`--dry-run` of one session: the same gate and first cut as `compress_context`, then what a
    model would be asked to summarize; nothing is called or written."""
    started = time.perf_counter()
    context = _context(agent, source, LineLimits.of(options.sweep))
    planned = _gate(context, options) or _cut(context, _target(context, options) - _reserve(context, options))
    if isinstance(planned, _Stop):
        outcome = Refused if planned.status is SessionStatus.REFUSED else Skipped
        return outcome(label, _report(source, label, context, options, planned.status, started, planned))
    stop = _Stop(SessionStatus.PLANNED, ())
    report = _report(source, label, context, options, SessionStatus.PLANNED, started, stop)
    cut = CutSection(
        cut_line=planned.cut_line,
        summarized_items=planned.first_item,
        kept_items=len(context.digests) - planned.first_item,
        at_turn_start=planned.at_turn,
    )
    evidence = context.session.evidence(planned)
    return Skipped(label, msgspec.structs.replace(report, cut=cut, model_plan=predict(evidence)))
