"""`compaction compress ROOTS --in-place`: the nightly archival run.

Lock the state directory, finish what interrupted runs left, then take every session through the
in-place pass: skipped at the cost of a `stat` when it is the output an earlier run published or
was declined under the same configuration and has not changed; skipped when written to within
`--idle-for` (or held open); else its frozen bytes are compressed in a worker process by the
compress job's own stages, the candidate resumed by its own format's judge (Claude Code, or Codex
for a rollout: the resume gate), and the file replaced through the live-replacement transaction
with a verified numbered backup. A candidate its judge did not prove is never put in place unless
the gate is switched off explicitly.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections import Counter
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pipeline.cli.compress_command import compress_options, compress_run, gate_judge
from pipeline.cli.in_place_pass import LiveCommand, LiveRun, PassDone, finish, in_place_totals, run_pass
from pipeline.cli.live_tables import in_place_lines, present_in_place
from pipeline.errors import UsageError
from pipeline.execute.in_place_drive import BuildServices, InPlaceRunner, RemoteBuild, WorkerCalls, WorkerLost
from pipeline.execute.process_pool import ProcessPoolInPlaceRunner, resolve_jobs
from pipeline.execute.seam import report_path
from pipeline.jobs.compress.in_place import (
    Built,
    as_candidate,
    build_read,
    compress_builder,
    config_digest,
)
from pipeline.jobs.compress.options import CompressOptions
from pipeline.publish.live.decisions import Candidate, Declined, InPlaceOutcome
from pipeline.publish.live.reporting import in_place_section, receipt_section, recovered_entry, skipped_entry
from pipeline.publish.live.session_pass import BuildCandidate
from pipeline.publish.live.source import FrozenSource
from pipeline.publish.live.state_db import RecordedResult
from pipeline.report.documents import Outcome, crashed
from pipeline.report.fleet import summary_report
from pipeline.report.live_replacement import InPlaceSummary, InPlaceTotals, in_place_report
from pipeline.report.render import report_bytes
from pipeline.settings import Settings
from pipeline.vocabulary import ResumeGate, SourceFormat, SummarizerName

__all__ = ["compress_in_place", "in_place_gate"]


@dataclass(frozen=True, slots=True)
class InPlaceGate:
    """The resume gate of an in-place run: each format's judge (None: found nowhere) and whether
    a candidate must be proven by its own format's judge before its file is replaced."""

    judges: Mapping[SourceFormat, str | None]
    required: bool

    def found(self) -> dict[SourceFormat, str]:
        """The judges found, by format."""
        return {source_format: path for source_format, path in self.judges.items() if path is not None}


def in_place_gate(settings: Settings, *, quiet: bool) -> InPlaceGate:
    """Every format's judge, found once before any session (`gate_judge`).

    Off (`--no-verify-resume`, or `verify_resume = "off"`): no proof, none required. Otherwise a
    session is replaced only once the judge of its own format resumed its candidate as the
    original: a judge found nowhere leaves the sessions of its format as they are
    (`refused-unproven`) and never stops the run, so a Codex-only tree needs no Claude Code and a
    Claude Code-only tree no Codex. A judge named but not there stops the run (exit 2).
    """
    from pipeline.agents.registry import RESUME_JUDGES as JUDGES  # noqa: PLC0415

    judges = {source_format: gate_judge(settings, source_format) for source_format in JUDGES}
    required = settings.compress.verify_resume is not ResumeGate.OFF
    missing = [JUDGES[source_format].name for source_format, found in judges.items() if found is None]
    if required and missing and not quiet:
        print(
            f"compaction: note: {' and '.join(missing)} not found: the sessions that need it are "
            "left as they are (refused-unproven) until it is installed or named (--judge FORMAT=PATH, "
            "--claude, --codex)",
            file=sys.stderr,
        )
    return InPlaceGate(judges, required)


def check_in_place_summarizer(args: argparse.Namespace, settings: Settings) -> None:
    """What an in-place run cannot do: plan without running, bound an embedded summarizer's
    tokens, or send a model's calls from a cluster's workers (its services live in this process)."""
    model = settings.compress.summarizer is not SummarizerName.DETERMINISTIC
    if args.dry_run:
        raise UsageError("--dry-run plans a compress --out run's model calls; compress --in-place has none")
    if args.max_run_tokens is not None and not model:
        raise UsageError(
            "--max-run-tokens bounds a model summarizer's billed tokens: add --summarizer with a "
            "provider, or leave it out (the embedded summarizer bills none)"
        )
    if model and getattr(args, "cluster", None):
        raise UsageError(
            f"--summarizer {settings.compress.summarizer.value} in place builds in this process (one "
            "client, limiter and run budget): leave out --cluster, or use --summarizer deterministic"
        )


@dataclass(frozen=True, slots=True)
class _Model:
    """A model summarizer's part of an in-place run: its services and what its digest covers."""

    builds: BuildServices
    digest: dict[str, object]


def _model(args: argparse.Namespace, settings: Settings, options: CompressOptions) -> _Model | None:
    """The model's shared services (client, limiter, run budget) opened once for every build; the
    provider is checked now, before any session (a missing key is a usage error)."""
    from pipeline.execute.model_services import (  # noqa: PLC0415 - httpx on use
        model_provider,
        model_summarizer,
        model_window,
    )

    provider = model_provider(args, settings)
    if provider is None:
        return None
    window = model_window(args)
    summarizer = model_summarizer(settings, provider, lambda session: options, args.max_run_tokens, window)

    @contextlib.asynccontextmanager
    async def builds() -> AsyncIterator[BuildCandidate]:
        async with summarizer.writers() as with_writer:
            yield compress_builder(with_writer(options))

    summary = summarizer.summary  # the retry policy shapes no summary: not in the digest
    shaping = {
        name: getattr(summary, name) for name in ("budget", "pack", "appendix", "planned_output_tokens")
    }
    return _Model(builds, {"provider": provider[0].value, "model": provider[1].model, "summary": shaping})


def _worker_build(options: CompressOptions) -> RemoteBuild:
    """Candidates built on the runner's workers from the frozen file (its path and digest travel
    there, the candidate's bytes and the job's outcome come back)."""
    per_code = options.sweep.findings_per_code

    async def build(frozen: FrozenSource, work: Path, calls: WorkerCalls) -> Candidate | Declined:
        label = frozen.target.label
        try:  # a stop cancels the call (a build writes only its scratch, never the live tree)
            built = await calls(build_read, str(frozen.path), frozen.sha256, label, options, str(work))
        except WorkerLost as exc:  # the worker died (memory, signal): this session only
            built = Built(crashed(label, str(exc), per_code=per_code), None, None)
        return as_candidate(built)

    return build


def _runner(args: argparse.Namespace, settings: Settings) -> InPlaceRunner:
    """Worker processes of this machine, or with `--cluster local:N` a Dask cluster on it (the live
    files are on this machine: its workers read the frozen files, this process replaces them)."""
    if not getattr(args, "cluster", None):
        return ProcessPoolInPlaceRunner(resolve_jobs(settings.sweep.jobs))
    from pipeline.execute.dask_cluster import (  # noqa: PLC0415 - Dask only with --cluster
        ClusterRun,
        DaskInPlaceRunner,
        check_address,
        require_cluster_extra,
    )

    require_cluster_extra()
    check_address(args.cluster)
    return DaskInPlaceRunner(ClusterRun(args.cluster, settings.cluster))


def _report_of(outcome: InPlaceOutcome) -> bytes | None:
    """The compress job's report with the in-place section; none for a session the job did not see."""
    if not isinstance(outcome.job, Outcome):
        return None
    return report_bytes(in_place_report(outcome.job.report, in_place_section(outcome)))


def _totals(done: PassDone) -> InPlaceTotals:
    options, outcomes = done.options, done.outcomes
    backup = options.replace.backup
    return InPlaceTotals(
        state_dir=str(done.state_dir),
        backup_dir=str(backup.directory) if backup.directory else None,
        backup_compression=backup.compression,
        work_dir=str(done.work_dir) if done.work_dir else None,
        config_digest=options.config_digest,
        require_resume_proof=options.require_resume_proof,
        by_disposition=dict(sorted(Counter(o.disposition.value for o in outcomes).items())),
        built=sum(o.built for o in outcomes),
        hashed=sum(o.hashed for o in outcomes),
        committed_report_failed=[
            receipt_section(o.receipt)
            for o in outcomes
            if o.report_failed and o.receipt is not None and o.receipt.committed
        ],
        recovered=[recovered_entry(found) for found in done.recovered],
        not_built=[skipped_entry(o) for o in outcomes if o.job is None and not o.disposition.unchanged],
    )


def _summary(
    args: argparse.Namespace, settings: Settings, gate: InPlaceGate, done: PassDone, roots: Sequence[Path]
) -> InPlaceSummary:
    """The fleet summary of the sessions the job ran on, and the run's own totals."""
    jobs = {o.target.report_label: o.job for o in done.outcomes if isinstance(o.job, Outcome)}
    paths = {
        o.target.report_label: report_path(done.report_dir, o.target).relative_to(done.report_dir).as_posix()
        for o in done.outcomes
        if isinstance(o.job, Outcome) and not o.report_failed
    }
    fleet = summary_report(
        jobs,
        command="compress",
        options=compress_run(args, settings, gate.found()),
        report_paths=paths,
        elapsed_ms=done.elapsed_ms,
        roots=[str(root) for root in roots],
    )
    fields = {name: getattr(fleet, name) for name in fleet.__struct_fields__ if name != "schema"}
    fields["totals"] = in_place_totals(done)
    return InPlaceSummary(**fields, in_place=_totals(done), archive=done.archive)


def compress_in_place(live: LiveRun) -> int:
    """Run `compress --in-place` over the discovered sessions; the exit code (see --help)."""
    args, settings, roots = live.args, live.settings, live.roots
    check_in_place_summarizer(args, settings)
    gate = in_place_gate(settings, quiet=args.quiet)
    options = compress_options(args, settings, gate.found(), out_dir="", root_label="", in_place=True)
    model = _model(args, settings, options)
    command = LiveCommand(
        name="compress-in-place",
        result=RecordedResult.COMPACTED,
        config_digest=config_digest(options, model.digest if model else None),
        require_resume_proof=gate.required,
        runner=_runner(args, settings),
        here=compress_builder(options),  # `--jobs 1`: built in this process, on the frozen bytes
        remote=_worker_build(options),
        report_of=_report_of,
        services=model.builds if model else None,
    )
    done = run_pass(command, live)
    summary = _summary(args, settings, gate, done, [root for root, _ in roots])
    lines = in_place_lines(summary)
    return finish(
        done, summary, lambda: present_in_place(summary, done.report_dir), quiet=args.quiet, headline=lines
    )
