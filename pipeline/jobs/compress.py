"""One session's compression: plan the cut, summarize, compose, check, publish a candidate.

The source is never modified. A candidate is written only after it passed every check of
`check.py` and the source was re-read and found unchanged; otherwise the session gets a status
with reasons and nothing is written for it.
"""

from __future__ import annotations

import hashlib
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from pipeline import __version__
from pipeline.core.check.candidate import CandidateCheck, check_candidate, contract_messages
from pipeline.core.compose import (
    SUMMARY_PREAMBLE,
    ComposedTranscript,
    ComposeError,
    ComposeInput,
    PairIds,
    compose,
)
from pipeline.core.partition import Partition, partition_lines, select_snapshots
from pipeline.core.plan import CutOptions, Plan, PlanOutcome, plan_cut
from pipeline.core.topology.select import TopologyOptions
from pipeline.core.validate.checks import READING_CODES, validate
from pipeline.errors import CompactionError
from pipeline.estimate.seed import RECORD_ALLOWANCE, estimate_text
from pipeline.findings import Finding
from pipeline.formats.claude_code.build import LeafStamp, ToolMetadata, claude_timestamp
from pipeline.formats.claude_code.records import message_text
from pipeline.jobs.front import Analysis, analyze, excluded_breakdown, leaf_report, session_block
from pipeline.jobs.validate import chain_tokens, strict_report
from pipeline.publish import write_bytes_atomic
from pipeline.report.sessions import (
    SESSION_SCHEMA,
    SessionOutcome,
    findings_report,
    line_set_report,
    peak_rss_mb,
)
from pipeline.summarize import (
    SummaryOptions,
    SummaryResult,
    extract_evidence,
    validate_checkpoint,
    write_summary,
)
from pipeline.vocabulary import (
    CheckpointPolicy,
    LeafPolicy,
    PartitionSet,
    SessionKind,
    SessionStatus,
    Severity,
)

__all__ = ["ENGINE_VERSION", "CompressOptions", "candidate_path", "compress_session"]

ENGINE_VERSION: Final = "v1"


@dataclass(frozen=True, slots=True)
class CompressOptions:
    """Options of a compression run, as plain values a worker process can receive."""

    out_dir: str
    root_label: str = ""
    leaf_policy: str = LeafPolicy.AUTO.value
    resume_leaf: str | None = None
    max_extension: int = 0
    checkpoint_policy: str = CheckpointPolicy.ACTIVE_CORRELATED.value
    max_snapshots: int = 80
    min_tokens: int = 20_000
    target_ratio: float = 0.30
    target_tokens: int | None = None
    min_recent_records: int = 120
    summary_char_budget: int = 60_000
    min_gain: float = 0.10
    preserve_prior_verbatim: bool = False
    anchors: tuple[str, ...] = field(default=())
    summary_limits: tuple[tuple[str, int], ...] = field(default=())
    verify_resume: bool = False
    claude: str | None = None  # the Claude Code executable --verify-resume runs
    resume_timeout: float = 180.0
    min_excluded_chars: int = 24

    def topology(self) -> TopologyOptions:
        """The topology part of these options."""
        return TopologyOptions(LeafPolicy(self.leaf_policy), self.resume_leaf, self.max_extension)


def candidate_path(out_dir: Path, root_label: str, label: str) -> Path:
    """Where a session's candidate goes: the input layout mirrored under the output directory."""
    return out_dir / root_label / label


class _Stop(Exception):
    """Ends one session early with a status and content-free reasons."""

    def __init__(self, status: SessionStatus, *reasons: str) -> None:
        self.status = status
        self.reasons = reasons
        super().__init__(status.value)


def _gate(analysis: Analysis, options: CompressOptions) -> Any:
    """Refuse or skip before any planning: topology, source validity, kind, size."""
    topology = analysis.topology
    if topology.refused or not topology.chain:
        raise _Stop(SessionStatus.REFUSED, f"topology-{topology.refusal or 'empty'}")
    if analysis.kind is SessionKind.SUBAGENT:
        raise _Stop(SessionStatus.SKIPPED_SUBAGENT, "subagent-transcript-is-not-resumed")
    source_validation = validate(analysis.index, analysis.graph, topology.chain, analysis.source.data)
    # Unreadable lines are excluded as unattributed and cannot reach the output; any other error
    # concerns the active chain itself, which a summary would only hide.
    chain_errors = [
        f for f in source_validation.findings if f.severity is Severity.ERROR and f.code not in READING_CODES
    ]
    if chain_errors:
        raise _Stop(
            SessionStatus.REFUSED,
            "source-active-chain-invalid",
            *sorted({f.code.value for f in chain_errors}),
        )
    if chain_tokens(analysis.index, topology.chain) < options.min_tokens:
        raise _Stop(SessionStatus.SKIPPED_SMALL, "below-min-tokens")
    return source_validation


def _summary_options(options: CompressOptions) -> SummaryOptions:
    return SummaryOptions(
        char_budget=options.summary_char_budget,
        preserve_prior_verbatim=options.preserve_prior_verbatim,
        **dict(options.summary_limits),
    )


def _summary_head(anchors: tuple[str, ...]) -> str:
    """The preamble, and the pinned anchors restated verbatim (rebuilt from settings every pass)."""
    pinned = [anchor for anchor in anchors if anchor.strip()]
    if not pinned:
        return SUMMARY_PREAMBLE
    return SUMMARY_PREAMBLE + "\n\nPinned anchors, restated verbatim:\n" + "\n".join(f"- {a}" for a in pinned)


def _summarize(analysis: Analysis, options: CompressOptions, plan: Plan) -> SummaryResult:
    try:
        evidence = extract_evidence(analysis.source.data, analysis.index, plan.summary_lines)
        return write_summary(evidence, _summary_options(options))
    except CompactionError as exc:
        raise _Stop(SessionStatus.REFUSED, f"summary-{type(exc).__name__}") from exc


def _instructions_carried(analysis: Analysis, plan: Plan, summary_text: str) -> bool:
    """Whether every protected instruction that falls in the summarized part appears in it verbatim."""
    summarized = set(plan.summary_lines)
    wanted = [line for line in plan.protected.user_lines if line in summarized]
    if not wanted:
        return True
    flat = " ".join(summary_text.split())
    for line in wanted:
        _, text, _ = message_text(analysis.index.raw_line(analysis.source.data, line))
        if " ".join(text.split()) not in flat:
            return False
    return True


def _metadata(analysis: Analysis, plan: Plan, partition: Partition, post_tokens: int) -> ToolMetadata:
    topology = analysis.topology
    return ToolMetadata(
        tool="session-compaction",
        tool_version=__version__,
        engine=ENGINE_VERSION,
        preserve_mode="active-chain" if topology.branch_isolation else "physical-tail",
        leaf=LeafStamp(topology.leaf_uuid, topology.leaf_source.value, topology.policy.value),
        strict_status=topology.strict.status.value,
        source_sha256=analysis.source.sha256,
        counts={name.value: partition[name].count for name in PartitionSet},
        digests={name.value: partition[name].digest for name in PartitionSet},
        pre_estimated_tokens=chain_tokens(analysis.index, topology.chain),
        post_estimated_tokens=post_tokens,
        cut_reasons=list(plan.reasons),
    )


def _fresh_ids() -> PairIds:
    """New uuids for the compact pair and the time it is written (the one clock read of a run)."""
    return PairIds(str(uuid.uuid4()), str(uuid.uuid4()), claude_timestamp(datetime.now(UTC)))


def _compose_and_check(
    analysis: Analysis,
    options: CompressOptions,
    plan: Plan,
    partition: Partition,
    summary_text: str,
    side: frozenset[int],
) -> tuple[ComposedTranscript, CandidateCheck]:
    index, data, topology = analysis.index, analysis.source.data, analysis.topology
    pointer = topology.strict.pointer_line
    control = tuple(
        sorted(partition[PartitionSet.CONTROL_PROJECTION].lines - ({pointer} if pointer else set()))
    )
    last_summarized = index.record(plan.summary_lines[-1]) if plan.summary_lines else None
    lineage = topology.lineage
    post_tokens = chain_tokens(index, plan.raw_lines) + estimate_text(summary_text) + RECORD_ALLOWANCE

    ids = _fresh_ids()

    def build(post: int) -> ComposedTranscript:
        return compose(
            ComposeInput(
                data=data,
                index=index,
                raw_lines=plan.raw_lines,
                side_lines=tuple(sorted(side)),
                control_lines=control,
                summary_text=summary_text,
                pointer_line=pointer,
                session_id=lineage.current_session if lineage and lineage.transitions else None,
                logical_parent=last_summarized.uuid if last_summarized else None,
                metadata=_metadata(analysis, plan, partition, post),
                pre_tokens=chain_tokens(index, topology.chain),
                ids=ids,
            )
        )

    composed = build(post_tokens)
    expected = [
        composed.boundary_uuid,
        composed.summary_uuid,
        *(index.entry(line).uuid or "" for line in plan.raw_lines),
    ]
    new_lines = [i for i, origin in enumerate(composed.source_lines, 1) if origin is None]
    protected_from = plan.protected.group_start
    source_messages = contract_messages(data, index, topology.chain, from_line=topology.chain[protected_from])
    checked = check_candidate(
        composed.data,
        expected_chain_uuids=expected,
        new_lines=new_lines,
        source_messages=source_messages,
        anchors=options.anchors,
        target_tokens=options.target_tokens,
    )
    return composed, checked


def _prove_resume(
    analysis: Analysis,
    partition: Partition,
    candidate: bytes,
    options: CompressOptions,
    report: dict[str, Any],
) -> None:
    """Resume source and candidate in Claude Code; refuse the session unless the contexts agree."""
    # Loaded only when asked for: the client starts processes and a server.
    from pipeline.proof.client import ClaudeCodeError  # noqa: PLC0415
    from pipeline.proof.excluded import excluded_texts  # noqa: PLC0415
    from pipeline.proof.prove import ProofOptions, prove_resume  # noqa: PLC0415
    from pipeline.proof.verdict import Verdict  # noqa: PLC0415

    assert options.claude is not None, "the CLI resolves Claude Code before any session runs"
    excluded = excluded_texts(
        analysis.source.data, analysis.index, partition, min_chars=options.min_excluded_chars
    )
    proof = ProofOptions(options.claude, options.resume_timeout, options.min_excluded_chars)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="compaction-candidate-") as scratch:
        staged = Path(scratch) / analysis.path.name
        staged.write_bytes(candidate)
        try:
            verdict = prove_resume(analysis.path, staged, proof, excluded=excluded)
        except ClaudeCodeError as exc:
            elapsed = round((time.perf_counter() - started) * 1000, 1)
            report["resume_check"] = {"verdict": "error", "error": type(exc).__name__, "elapsed_ms": elapsed}
            raise _Stop(SessionStatus.REFUSED, "resume-check-failed") from exc
    report["resume_check"] = {
        **verdict.to_report(),
        "elapsed_ms": round((time.perf_counter() - started) * 1000, 1),
    }
    if verdict.verdict is Verdict.MISMATCH:
        raise _Stop(SessionStatus.REFUSED, "resume-mismatch")


def compress_session(path: Path, label: str, options: CompressOptions) -> SessionOutcome:
    """Compress one session into a candidate under the output directory, or say why not."""
    started = time.perf_counter()
    analysis = analyze(path, label, options.topology(), command="compress")
    if isinstance(analysis, SessionOutcome):
        return analysis
    report: dict[str, Any] = {
        "schema": SESSION_SCHEMA,
        "command": "compress",
        "session": session_block(label, analysis.source, analysis.index, analysis.format, analysis.kind),
        "strict_status": analysis.topology.strict.status.value,
        "strict": strict_report(analysis),
        "leaf": leaf_report(analysis.topology),
    }
    findings: list[Finding] = list(analysis.topology.findings)
    try:
        status = _compress(analysis, options, report)
    except _Stop as stop:
        status = stop.status
        report["reasons"] = list(stop.reasons)
    report["status"] = status.value
    report.update(findings_report(findings))
    report["timing_ms"] = {
        "total": round((time.perf_counter() - started) * 1000, 2),
        "worker_peak_rss_mb": peak_rss_mb(),
    }
    return SessionOutcome(label, status, report)


def _compress(analysis: Analysis, options: CompressOptions, report: dict[str, Any]) -> SessionStatus:
    index, topology = analysis.index, analysis.topology
    report["tokens"] = {"estimator": "seed", "active_chain": chain_tokens(index, topology.chain)}
    _gate(analysis, options)
    lineage_start = topology.lineage.current_start if topology.lineage and topology.lineage.transitions else 0
    cut_options = CutOptions(
        options.target_ratio, options.target_tokens, options.min_recent_records, options.summary_char_budget
    )
    plan = plan_cut(index, topology.chain, cut_options, lineage_start=lineage_start)
    summary = _summarize(analysis, options, plan) if plan.outcome is PlanOutcome.CUT else None
    if summary is not None and not _instructions_carried(analysis, plan, summary.text):
        # The protected round's instruction would be summarized but is not carried verbatim
        # (a slash command, an over-long prompt): keep that whole turn raw instead.
        plan = plan_cut(
            index, topology.chain, cut_options, lineage_start=lineage_start, keep_protected_turn=True
        )
        summary = _summarize(analysis, options, plan) if plan.outcome is PlanOutcome.CUT else None
    report["plan"] = {
        "outcome": plan.outcome.value,
        "cut_position": plan.cut,
        "target_position": plan.target,
        "protected_start": plan.protected.start,
        "groups": len(plan.groups),
        "reasons": list(plan.reasons),
        "summarized_records": len(plan.summary_lines),
        "raw_records": len(plan.raw_lines),
    }
    if plan.outcome is PlanOutcome.FITS:
        raise _Stop(SessionStatus.SKIPPED_FITS, *plan.reasons)
    side = select_snapshots(
        index,
        plan.raw_lines,
        policy=CheckpointPolicy(options.checkpoint_policy),
        limit=options.max_snapshots,
        stop_line=topology.strict.pointer_line,
    )
    partition = partition_lines(index, summary=plan.summary_lines, raw_keep=plan.raw_lines, side_keep=side)
    report["partition"] = partition.to_report()
    report["chain"] = {
        "records": len(topology.chain),
        "lines": line_set_report(topology.chain),
        "excluded": excluded_breakdown(index, analysis.graph, topology),
    }
    assert summary is not None
    defects = validate_checkpoint(summary.text)
    if defects:
        raise _Stop(SessionStatus.REFUSED, *sorted({f"checkpoint-{d.code.value}" for d in defects}))
    summary_text = f"{_summary_head(options.anchors)}\n\n{summary.text}"
    before = chain_tokens(index, topology.chain)
    after = chain_tokens(index, plan.raw_lines) + estimate_text(summary_text) + 2 * RECORD_ALLOWANCE
    report["plan"]["estimated_gain"] = round(1 - after / max(1, before), 4)
    if after > before * (1 - options.min_gain):
        raise _Stop(SessionStatus.SKIPPED_FITS, "gain-below-minimum")
    report["summary"] = {
        "chars": len(summary_text),
        "budget": options.summary_char_budget,
        "cited_lines": len(summary.cited_lines),
        "prior_summaries_folded": len(summary.prior_summaries),
        "prior_mode": summary.prior_mode.value,
        "sections": {heading.value: count for heading, count in summary.section_bullets},
    }
    try:
        composed, checked = _compose_and_check(analysis, options, plan, partition, summary_text, side)
    except ComposeError as exc:
        raise _Stop(SessionStatus.REFUSED, f"compose-{exc.code}") from exc
    report["checks"] = {
        "failures": list(checked.failures),
        "violations": [v.value for v in checked.violations],
        "findings": [f.to_report() for f in checked.findings[:20]],
    }
    if not checked.ok:
        raise _Stop(SessionStatus.REFUSED, *checked.failures)
    if options.verify_resume:
        _prove_resume(analysis, partition, composed.data, options, report)
    if hashlib.sha256(analysis.path.read_bytes()).hexdigest() != analysis.source.sha256:
        raise _Stop(SessionStatus.REFUSED, "source-changed-during-compression")
    destination = candidate_path(Path(options.out_dir), options.root_label, analysis.label)
    if destination.resolve() == analysis.path.resolve():
        raise _Stop(SessionStatus.REFUSED, "output-would-overwrite-source")
    write_bytes_atomic(destination, composed.data)
    report["tokens"]["output"] = checked.output_tokens
    report["output"] = {
        "path": destination.relative_to(Path(options.out_dir)).as_posix(),
        "sha256": hashlib.sha256(composed.data).hexdigest(),
        "bytes": len(composed.data),
        "lines": checked.output_lines,
        "ratio": round(len(composed.data) / max(1, analysis.source.size), 4),
        "boundary_uuid": composed.boundary_uuid,
        "summary_uuid": composed.summary_uuid,
    }
    return SessionStatus.COMPRESSED
