"""`compaction repair`: make damaged sessions resumable again, minimally, proven in their own client.

Claude Code's sessions are proven in Claude Code; sessions of the agents read through the seam
(pi, Qwen Code, Gemini CLI) go to their format's own repair
(`rewrite_pass`: the repair their client makes on every load, written into the file, proven by
that client); this module's Claude Code path is unchanged.

Three modes, as `repair-read-pages`: without `--in-place` or `--out` it only reports what it
would change; `--out DIR` writes each repaired file as a candidate under DIR (outside
~/.claude), re-read and checked; `--in-place` replaces each session through the same pass as
`compress --in-place` (state database, idle rule, open files, live-replacement transaction,
verified numbered backups, `restore`). Repair never compresses, and compress never repairs
the kept tail.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import msgspec
from msgspec import UNSET, UnsetType

from pipeline.agents.registry import DAMAGE_REPAIR_FORMAT, chain_judge
from pipeline.cli.compress_command import check_apart
from pipeline.cli.console import progress_bar
from pipeline.cli.fleet_command import SUMMARY_NAME
from pipeline.cli.in_place_pass import LiveCommand, LiveRun, finish, in_place_totals, run_pass
from pipeline.cli.live_tables import present_counts, present_space
from pipeline.cli.repair_command import elsewhere_report_dir
from pipeline.cli.rewrite_pass import frozen_rewrite_elsewhere, rewrite_figures, rewrite_options
from pipeline.cli.totals_line import totals_lines
from pipeline.core.session_repair import SessionRepairOptions
from pipeline.execute.process_pool import ProcessPoolInPlaceRunner
from pipeline.execute.seam import report_path
from pipeline.formats.rewrites import RewriteKind
from pipeline.jobs.context_rewrite import RewriteOptions
from pipeline.jobs.rewrite_published import (
    in_place_rewrite_report,
    is_context_session,
    rewrite_builder,
)
from pipeline.live_vocabulary import OperationState
from pipeline.proof.damage_repair import DamageRepair, ProofSetup, repair_session
from pipeline.publish.files import write_bytes_atomic
from pipeline.publish.live.decisions import Candidate, Declined, InPlaceOutcome
from pipeline.publish.live.repair_candidate import (
    REFUSED,
    damage_repair_builder,
    job_report,
    status_of,
    write_damage_candidate,
)
from pipeline.publish.live.reporting import receipt_section
from pipeline.publish.live.session_pass import BuildCandidate
from pipeline.publish.live.source import FrozenSource, SessionTarget, SourceRefused, freeze_source
from pipeline.publish.live.state_db import RecordedResult
from pipeline.publish.live.totals import committed_sizes
from pipeline.report.live_replacement import RepairReceiptSection
from pipeline.report.render import json_bytes
from pipeline.report.repair_documents import DamageRepairReport, DamageRepairSummary, damage_figures
from pipeline.report.rewrite_documents import RewriteReport
from pipeline.report.run_totals import TotalsOf, fold_totals
from pipeline.settings import Settings
from pipeline.vocabulary import ExitCode

__all__ = ["DAMAGE_ENGINE", "damage_repair_command"]

DAMAGE_ENGINE: Final = "damage-v1"  # bump when the repair's rules change: declined sessions are rescanned
_UNREADABLE: Final = "unreadable"


def repair_settings(settings: Settings) -> SessionRepairOptions:
    """The repair's options from the settings (`SessionRepairOptions.of`)."""
    return SessionRepairOptions.of(settings)


def proof_setup(settings: Settings, *, verify: bool) -> ProofSetup:
    """The repaired format's judge: the client its flag (or config) names, else the pinned or PATH's;
    none: unproven."""
    judge = chain_judge(DAMAGE_REPAIR_FORMAT)
    timeout = settings.verify.resume_timeout_seconds
    if not verify:
        return ProofSetup(None, timeout, judge)
    configured = judge.client.named(settings.verify)
    executable = judge.client.locate(Path(configured)) if configured else judge.find()
    return ProofSetup(executable.resolve() if executable else None, timeout, judge)


def _digest(options: SessionRepairOptions, setup: ProofSetup) -> str:
    text = json.dumps(
        {
            "engine": DAMAGE_ENGINE,
            "leaf": options.topology.policy,
            "relink": options.relink,
            "read_pages": options.read_pages,
            "rounds": options.max_rounds,
            "proven": setup.executable is not None,
        }
    )
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _in_place_report(outcome: InPlaceOutcome) -> bytes | None:
    """The repair's report of one session the pass scanned (none for one skipped by a stat)."""
    if not isinstance(outcome.job, DamageRepair):
        return None
    receipt = outcome.receipt
    report = job_report(
        outcome.job,
        label=outcome.target.report_label,
        mode="in-place",
        status=outcome.status or status_of(outcome.job),
        frozen_sha256=receipt.frozen_sha256 if receipt else None,
    )
    if receipt is None:
        return json_bytes(msgspec.structs.replace(report, disposition=outcome.disposition))
    reasons = [receipt.reason.value] if receipt.reason is not None else report.reasons
    sizes = committed_sizes(receipt)
    return json_bytes(
        msgspec.structs.replace(
            report,
            bytes_before=sizes[0],
            bytes_after=sizes[1],
            operation_state=receipt.operation_state,
            reasons=reasons,
            candidate_sha256=receipt.candidate_sha256,
            published_sha256=receipt.published_sha256,
            disposition=outcome.disposition,
            receipt=receipt_section(receipt, kind=RepairReceiptSection),
        )
    )


def _summary(
    mode: str, live: LiveRun, every: Sequence[DamageRepairReport | RewriteReport], elapsed_ms: float
) -> DamageRepairSummary:
    """Claude Code's repairs and the other agents' (`rewrite_pass`) counted together."""
    reports = [r for r in every if isinstance(r, DamageRepairReport)]
    rewrites = [r for r in every if isinstance(r, RewriteReport)]
    codes: Counter[str] = Counter(edit.code for r in reports for edit in r.edits if r.status != REFUSED)
    for rewrite in (r for r in rewrites if not r.status.is_failure):
        for edit in rewrite.edits:
            codes[edit.code or edit.change] += edit.count
    proofs: Counter[str] = Counter(r.proof.verdict for r in reports if r.proof is not UNSET)
    proofs.update(r.resume_check.verdict.value for r in rewrites if r.resume_check is not UNSET)
    statuses = Counter(r.status for r in reports) + Counter(r.status.value for r in rewrites)
    return DamageRepairSummary(
        mode=mode,
        roots=[str(root) for root, _ in live.roots],
        sessions=len(every),
        by_status=dict(sorted(statuses.items())),
        by_code=dict(sorted(codes.items())),
        by_proof=dict(sorted(proofs.items())),
        elapsed_ms=round(elapsed_ms, 1),
        reports=[r.session for r in every],
    )


def _headline(summary: DamageRepairSummary) -> tuple[str, ...]:
    return () if isinstance(summary.totals, UnsetType) else totals_lines(summary.totals, "repaired")


def _present(summary: DamageRepairSummary, report_dir: Path) -> None:
    present_counts(f"{summary.sessions} sessions", ("status", "sessions"), summary.by_status)
    for line in _headline(summary):
        print(line)
    if summary.by_code:
        present_counts("repaired", ("defect", "edits"), summary.by_code)
    if summary.by_proof:
        present_counts("resume proof", ("verdict", "sessions"), summary.by_proof)
    if summary.by_disposition is not UNSET:
        present_counts("in place", ("disposition", "sessions"), summary.by_disposition)
    if summary.archive is not UNSET:
        present_space(summary.archive)
    print(f"reports: {report_dir}")


def _routed(claude: BuildCandidate, others: BuildCandidate) -> BuildCandidate:
    """Claude Code's sessions to its repair, the seam's formats' to theirs (`rewrite_pass`)."""

    def build(frozen: FrozenSource, work_dir: Path) -> Candidate | Declined:
        return (others if is_context_session(frozen) else claude)(frozen, work_dir)

    return build


def _report_of(outcome: InPlaceOutcome) -> bytes | None:
    return (
        in_place_rewrite_report(outcome)
        if isinstance(outcome.job, RewriteReport)
        else _in_place_report(outcome)
    )


def _in_place(live: LiveRun, options: SessionRepairOptions, setup: ProofSetup) -> int:
    others = rewrite_options(live.settings, RewriteKind.REPAIR, verify=not live.args.no_verify_resume)
    command = LiveCommand(
        name="repair",
        result=RecordedResult.REPAIRED,
        config_digest=_digest(options, setup),
        require_resume_proof=False,  # the builder refuses what Claude Code shows wrong; unproven is reported
        runner=ProcessPoolInPlaceRunner(1),  # one plan per session, in this process
        here=_routed(damage_repair_builder(options, setup), rewrite_builder(others)),
        report_of=_report_of,
    )
    done = run_pass(command, live)
    reports: list[DamageRepairReport | RewriteReport] = [
        job_report(
            o.job, label=o.target.report_label, mode="in-place", status=o.status or "", frozen_sha256=None
        )
        for o in done.outcomes
        if isinstance(o.job, DamageRepair)
    ]
    reports += [o.job for o in done.outcomes if isinstance(o.job, RewriteReport)]
    summary = msgspec.structs.replace(
        _summary("in-place", live, reports, done.elapsed_ms),
        sessions=len(done.outcomes),
        by_disposition=dict(sorted(Counter(o.disposition.value for o in done.outcomes).items())),
        totals=in_place_totals(done, DAMAGE_REPAIR_FORMAT),
        archive=done.archive,
    )
    return finish(
        done,
        summary,
        lambda: _present(summary, done.report_dir),
        quiet=live.args.quiet,
        headline=_headline(summary),
    )


def _one_elsewhere(
    session: SessionTarget,
    options: tuple[SessionRepairOptions, RewriteOptions],
    setup: ProofSetup,
    out: Path | None,
    scratch: Path,
) -> DamageRepairReport | RewriteReport:
    """Report mode, or the candidate under `out`: the source is only read."""
    mode = "candidate" if out is not None else "report"
    try:
        frozen = freeze_source(session)
    except SourceRefused as exc:
        return DamageRepairReport(
            session=session.report_label,
            mode=mode,
            status=_UNREADABLE,
            operation_state=OperationState.NOT_COMMITTED,
            reasons=[exc.refusal.value],
        )
    claude_options, others = options
    if is_context_session(frozen):  # another agent's: its format's repair (`rewrite_pass`)
        return frozen_rewrite_elsewhere(frozen, others, out)
    name = frozen.path.name
    if out is None:  # nothing is written, so nothing needs proving
        job = repair_session(
            frozen.data, name, claude_options, ProofSetup(None, setup.timeout_seconds, setup.judge), scratch
        )
        report = job_report(
            job, label=session.report_label, mode=mode, status=status_of(job), frozen_sha256=frozen.sha256
        )
        return msgspec.structs.replace(report, proof=UNSET)
    job = repair_session(frozen.data, name, claude_options, setup, scratch)
    return write_damage_candidate(
        frozen, out / session.report_label, job, claude_options, label=session.report_label
    )


class _Done:
    """What the progress bar counts (a failure: a session refused or a candidate that did not check out)."""

    def __init__(self, report: DamageRepairReport | RewriteReport) -> None:
        if isinstance(report, RewriteReport):
            self.failed = report.status.is_failure
        else:
            self.failed = report.status in (REFUSED, _UNREADABLE) or bool(report.failures)


def _elsewhere(live: LiveRun, options: SessionRepairOptions, setup: ProofSetup) -> int:
    out = live.args.out.resolve() if live.args.out else None
    if out is not None:
        check_apart(out, [root for root, _ in live.roots], "--out")
    report_dir = elsewhere_report_dir(live.settings, out, "repair")
    others = rewrite_options(live.settings, RewriteKind.REPAIR, verify=not live.args.no_verify_resume)
    started = time.perf_counter()
    reports: list[DamageRepairReport | RewriteReport] = []
    with (
        tempfile.TemporaryDirectory(prefix="compaction-repair-", ignore_cleanup_errors=True) as scratch,
        progress_bar(len(live.sessions), enabled=not live.args.quiet, description="repair") as advance,
    ):
        for session in live.sessions:
            report = _one_elsewhere(session, (options, others), setup, out, Path(scratch))
            write_bytes_atomic(report_path(report_dir, session), json_bytes(report))  # as in place
            reports.append(report)
            advance(_Done(report))
    elapsed = (time.perf_counter() - started) * 1000
    summary = _summary("candidate" if out else "report", live, reports, elapsed)
    if out is not None:  # report mode writes nothing: it has no totals of what it wrote
        figures = (
            rewrite_figures(report, session.root_name)
            if isinstance(report, RewriteReport)
            else damage_figures(report, session.root_name, DAMAGE_REPAIR_FORMAT, failed=_Done(report).failed)
            for session, report in zip(live.sessions, reports, strict=True)
        )
        summary = msgspec.structs.replace(summary, totals=fold_totals(figures, TotalsOf.WRITTEN))
    write_bytes_atomic(report_dir / SUMMARY_NAME, json_bytes(summary))
    if not live.args.quiet:
        _present(summary, report_dir)
    return ExitCode.FAILED if any(_Done(r).failed for r in reports) else ExitCode.OK


def damage_repair_command(live: LiveRun) -> int:
    """`repair` in the mode its flags name; the exit code (see --help)."""
    options = repair_settings(live.settings)
    setup = proof_setup(live.settings, verify=not live.args.no_verify_resume)
    return _in_place(live, options, setup) if live.args.in_place else _elsewhere(live, options, setup)
