"""The stages of one compression, each returning its value or a `Stop` saying why not.

gate (topology, kind, source validity, size) -> plan and summary -> compose and check. A `Stop`
is an ordinary outcome (a skip or a refusal), returned like any other value, never raised. The
gate lets through damage a summary can replace (`damage.py`), with the lines the cut must pass.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from pipeline.core.check.candidate import CandidateCheck, check_candidate, contract_messages
from pipeline.core.compose import ComposedTranscript, ComposeError
from pipeline.core.partition import Partition, partition_lines, select_snapshots
from pipeline.core.plan import Plan
from pipeline.core.validate.checks import READING_CODES, Validation, validate
from pipeline.core.validate.pairing import API_PAIRING_CODES
from pipeline.findings import Finding
from pipeline.formats.line_guard import LineLimits
from pipeline.jobs.compress.damage import Damage, chain_damage, damage_refusal
from pipeline.jobs.compress.options import CompressOptions
from pipeline.jobs.compress.planning import Planned
from pipeline.jobs.front import Analysis
from pipeline.jobs.validate import file_findings
from pipeline.reasons import CandidateFailure, Reason, Refusal, SkipReason, TopologyRefusal
from pipeline.report.compression import OutputSection
from pipeline.vocabulary import SessionKind, SessionStatus, Severity

__all__ = [
    "Candidate",
    "Publisher",
    "Stop",
    "candidate_partition",
    "chain_error_findings",
    "compose_and_check",
    "gate",
    "report_findings",
    "source_validation",
]


@dataclass(frozen=True, slots=True)
class Stop:
    """A session that ends here: skipped or refused, with content-free reasons.

    `findings` are what the report lists beside the topology's: the defects that refused it.
    """

    status: SessionStatus
    reasons: tuple[Reason, ...]
    findings: tuple[Finding, ...] = ()


@dataclass(frozen=True, slots=True)
class Candidate:
    """A composed candidate and its check."""

    composed: ComposedTranscript
    checked: CandidateCheck


Publisher = Callable[[Analysis, CompressOptions, Candidate], "OutputSection | Stop"]
"""What becomes of a candidate that passed every check (and the resume gate, when it ran)."""


def source_validation(analysis: Analysis) -> Validation:
    """The source's validation, as `validate` runs it (the gate's evidence and the report's findings)."""
    return validate(analysis.index, analysis.graph, analysis.topology.chain, analysis.source.data)


def report_findings(analysis: Analysis, source: Validation, stop: Stop | None) -> tuple[Finding, ...]:
    """What a compress report lists: every finding `validate` reports for the file, then the
    stop's own (each once)."""
    return tuple(dict.fromkeys((*file_findings(analysis, source), *(stop.findings if stop else ()))))


def chain_error_findings(source: Validation) -> tuple[Finding, ...]:
    """The validator's errors of the active chain itself: unreadable lines aside, which a
    compaction excludes as unattributed and which never refuse it."""
    return tuple(f for f in source.findings if f.severity is Severity.ERROR and f.code not in READING_CODES)


def gate(analysis: Analysis, options: CompressOptions, source: Validation) -> Stop | Damage:
    """Refuse or skip before any planning: topology, kind, source validity, size.

    What passes is the chain's repairable damage (none for a sound chain): records the API
    refuses, which the cut must summarize. A chain Claude Code resumes but the seed's safety
    rules refuse (`topology.unproven`) passes only when the resume gate will prove the candidate.
    """
    topology = analysis.topology
    refusal = topology.refusal or (topology.unproven if options.judges.get(analysis.format) is None else None)
    if refusal is not None or not topology.chain:
        return Stop(SessionStatus.REFUSED, (Reason(Refusal.TOPOLOGY, refusal or TopologyRefusal.EMPTY),))
    if analysis.kind is SessionKind.SUBAGENT:
        return Stop(SessionStatus.SKIPPED_SUBAGENT, (Reason(SkipReason.SUBAGENT),))
    # Unreadable lines are excluded as unattributed and cannot reach the output. Records the API
    # refuses are replaced by a summary that covers them; any other error concerns the active
    # chain itself, which a summary would only hide.
    chain_errors = list(chain_error_findings(source))
    if any(f.code not in API_PAIRING_CODES for f in chain_errors):
        return Stop(SessionStatus.REFUSED, damage_refusal(chain_errors), tuple(chain_errors))
    damage = chain_damage(analysis.index, topology.chain, chain_errors)
    if analysis.tokens_of(topology.chain) < options.compress.min_tokens:
        if damage.defects:  # no compaction, so nothing replaces the damaged records
            return Stop(SessionStatus.REFUSED, damage_refusal(chain_errors), damage.findings())
        return Stop(SessionStatus.SKIPPED_SMALL, (Reason(SkipReason.BELOW_MIN_TOKENS),))
    return damage


def candidate_partition(
    analysis: Analysis, options: CompressOptions, plan: Plan
) -> tuple[Partition, frozenset[int]]:
    """The six sets of a cut (the projected resume state in `control_projection`), and the
    snapshots kept beside the raw tail."""
    side = select_snapshots(
        analysis.index,
        plan.raw_lines,
        policy=options.sweep.checkpoint_policy,
        limit=options.sweep.max_file_history_snapshots,
        stop_line=analysis.topology.strict.pointer_line,
    )
    partition = partition_lines(
        analysis.index,
        summary=plan.summary_lines,
        raw_keep=plan.raw_lines,
        side_keep=side,
        pointer_line=analysis.topology.strict.pointer_line,
        projected=(record.line for record in analysis.chain_format.projected(analysis, plan)),
    )
    return partition, side


def _raw_suffix_changes(analysis: Analysis, planned: Planned, composed: ComposedTranscript) -> int:
    """Kept lines that are neither their source bytes nor those bytes bounded by their declared rule.

    The rule is applied afresh to the source line, so a bounding the candidate does not declare,
    or declares wrongly, is caught; the first kept record's new `parentUuid` is the one other edit,
    and a projected state record is its source line but for the parent that chains it.
    """
    data, index, own = analysis.source.data, analysis.index, analysis.chain_format
    output = composed.data.split(b"\n")
    first, kept = planned.plan.raw_lines[0], frozenset(planned.plan.raw_lines)
    summarized = frozenset(planned.plan.summary_lines)
    chain = (composed.summary_uuid, *composed.state_uuids)
    state_lines = [o for o in composed.source_lines if o is not None and o in summarized]
    parents = dict(zip(state_lines, chain, strict=False))
    changed = 0
    for number, origin in enumerate(composed.source_lines):
        if origin is None or (origin not in kept and origin not in parents):
            continue
        rule = planned.bounding.rules.get(origin)
        bounded = own.bound(data, rule, index.span(data, origin)) if rule is not None else None
        expected = bounded[0] if bounded is not None else index.raw_line(data, origin)
        if origin in parents:
            expected = own.reparented(expected, parents[origin])
        elif origin == first:
            expected = own.reparented(expected, composed.tail_parent)
        changed += output[number] != expected
    return changed


def compose_and_check(
    analysis: Analysis,
    options: CompressOptions,
    planned: Planned,
    partition: Partition,
    summary_text: str,
    side: frozenset[int],
) -> Candidate | Stop:
    """Lay the candidate out and check it from scratch against the plan and the survival contract."""
    index, data, topology, plan = analysis.index, analysis.source.data, analysis.topology, planned.plan
    try:
        composed = analysis.chain_format.compose(analysis, planned.cut(partition, side), summary_text)
    except ComposeError as exc:
        return Stop(SessionStatus.REFUSED, (Reason(Refusal.COMPOSE, exc.code),))
    expected = [
        composed.boundary_uuid,
        composed.summary_uuid,
        *composed.state_uuids,
        *composed.written_uuids,
        *(index.entry(line).uuid or "" for line in plan.raw_lines),
    ]
    new_lines = [i for i, origin in enumerate(composed.source_lines, 1) if origin is None]
    protected_from = topology.chain[plan.protected.group_start]
    checked = check_candidate(
        composed.data,
        expected_chain_uuids=expected,
        new_lines=new_lines,
        source_messages=contract_messages(data, index, topology.chain, from_line=protected_from),
        anchors=options.anchors,
        target_estimated_tokens=options.compress.target_estimated_tokens or None,
        limits=LineLimits.of(options.sweep),
    )
    if _raw_suffix_changes(analysis, planned, composed):
        checked = replace(checked, failures=(*checked.failures, Reason(CandidateFailure.RAW_LINE_CHANGED)))
    return Candidate(composed, checked)
