"""`validate` and `compress` as fleet commands: their options per session, their summary, their table."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.cli.console import render_summary
from pipeline.cli.fleet_command import FleetCommand, default_report_dir
from pipeline.errors import UsageError
from pipeline.execute.process_pool import RunResult, resolve_jobs
from pipeline.read.discover import SessionFile, default_roots
from pipeline.read.remote import is_url
from pipeline.report.fleet import CompressRun, FleetSummary, ValidateRun, summary_report
from pipeline.settings import Settings
from pipeline.vocabulary import ResumeGate, SummaryFallback

if TYPE_CHECKING:
    from pipeline.jobs.compress import CompressOptions

__all__ = [
    "check_apart",
    "check_compress_paths",
    "compress_command",
    "compress_options",
    "compress_run",
    "find_gate_claude",
    "validate_command",
]


def _validate_run(args: argparse.Namespace, settings: Settings) -> ValidateRun:
    sweep = settings.sweep
    return ValidateRun(
        leaf_policy=sweep.leaf_policy.value,
        resume_leaf=args.resume_leaf,
        max_extension=sweep.max_post_last_prompt_extension,
        checkpoint_policy=sweep.checkpoint_policy.value,
        max_snapshots=sweep.max_file_history_snapshots,
        jobs=resolve_jobs(sweep.jobs),
        settings_sources=list(settings.sources),
    )


def _summarizer(
    command: str, record: ValidateRun
) -> Callable[[RunResult, Sequence[SessionFile]], FleetSummary]:
    def summarize(result: RunResult, sessions: Sequence[SessionFile]) -> FleetSummary:
        roots = list(dict.fromkeys(session.root_name for session in sessions))
        return summary_report(
            result.outcomes,
            command=command,
            options=record,
            report_paths=result.report_paths,
            elapsed_ms=result.elapsed_ms,
            roots=roots,
        )

    return summarize


def _present(report_dir: Path | str) -> Callable[[FleetSummary, RunResult], None]:
    def present(summary: FleetSummary, result: RunResult) -> None:
        render_summary(result.outcomes, report_dir, result.elapsed_ms)

    return present


def validate_command(args: argparse.Namespace, settings: Settings) -> FleetCommand[FleetSummary]:
    from pipeline.jobs.validate import ValidateOptions, validate_session  # noqa: PLC0415 - per command

    options = ValidateOptions(settings.sweep, args.resume_leaf)
    configured = settings.sweep.report_dir
    report_url = configured if is_url(configured) else None
    report_dir = Path(configured) if configured else default_report_dir("validate")
    return FleetCommand(
        name="validate",
        job=validate_session,
        options_for=lambda session: options,
        report_dir=report_dir,
        per_code=settings.sweep.findings_per_code,
        summarize=_summarizer("validate", _validate_run(args, settings)),
        present=_present(report_url or report_dir),
        report_url=report_url,
    )


def find_gate_claude(settings: Settings) -> str | None:
    """The Claude Code the resume gate runs, resolved once before any session starts.

    `on` requires it; `auto` (the default) uses it when found and says in one line when not;
    `off` skips the gate.
    """
    from pipeline.proof.client import ClaudeCodeError, require_claude_code  # noqa: PLC0415

    gate = settings.compress.verify_resume
    if gate is ResumeGate.OFF:
        return None
    configured = settings.verify.claude
    try:
        return str(require_claude_code(Path(configured) if configured else None))
    except ClaudeCodeError as exc:
        if gate is ResumeGate.ON:
            raise UsageError(f"--verify-resume: {exc}") from exc
    print(
        "compaction: note: Claude Code not found, so candidates are written without the resume proof "
        "(scripts/install-claude-code installs it; --no-verify-resume silences this note)",
        file=sys.stderr,
    )
    return None


def check_apart(path: Path, roots: Sequence[Path], what: str) -> None:
    """What we write beside the live tree (candidates, scratch) is outside any `.claude`
    directory and neither inside nor around a session root."""
    path = path.resolve()
    if any(part.lower() == ".claude" for part in path.parts):
        raise UsageError(
            f"{what} must be outside any .claude directory: nothing of ours goes into the live tree"
        )
    for root in {root.resolve() for root in roots}:
        if root.is_dir() and (path == root or root in path.parents or path in root.parents):
            raise UsageError(
                f"{what} must be apart from the session root {root} (neither inside nor around it)"
            )


def check_compress_paths(args: argparse.Namespace) -> None:
    """Candidates never go into the live tree, nor into or around a session root."""
    if args.in_place:
        if args.out is not None:
            raise UsageError(
                "--in-place and --out exclude each other: replace the sessions, or write candidates"
            )
        return
    if args.out is None:
        raise UsageError("compress needs --out DIR (candidates are written there) or --in-place")
    if isinstance(args.report_dir, str):
        raise UsageError(
            "compress writes reports beside its candidates: --report-dir must be a local directory"
        )
    local = [Path(path) for path in (args.paths or default_roots()) if not is_url(str(path))]
    check_apart(args.out, local, "--out")


def compress_run(args: argparse.Namespace, settings: Settings, claude: str | None) -> CompressRun:
    """The options a compress run used, as its summary records them (`out_dir` empty in place)."""
    compress, verify, base = settings.compress, settings.verify, _validate_run(args, settings)
    return CompressRun(
        **{field: getattr(base, field) for field in base.__struct_fields__},
        out_dir=str(args.out.resolve()) if args.out else "",
        min_tokens=compress.min_tokens,
        target_ratio=compress.target_ratio,
        target_tokens=compress.target_estimated_tokens or None,
        min_recent_records=compress.min_recent_records,
        summary_char_budget=compress.summary_char_budget,
        min_gain=compress.min_gain,
        preserve_prior_verbatim=compress.preserve_prior_summaries_verbatim,
        anchors=list(args.anchor),
        summary_limits=sorted(asdict(settings.summary).items()),
        verify_resume=claude is not None,
        claude=claude,
        resume_timeout=verify.resume_timeout_seconds,
        min_excluded_chars=verify.min_excluded_text_chars,
    )


def compress_options(
    args: argparse.Namespace, settings: Settings, claude: str | None, *, out_dir: str, root_label: str
) -> CompressOptions:
    """What one compression needs: the settings sections and what the command line decided."""
    from pipeline.jobs.compress import CompressOptions  # noqa: PLC0415 - per command

    return CompressOptions(
        sweep=settings.sweep,
        compress=settings.compress,
        summary=settings.summary,
        verify=settings.verify,
        resume_leaf=args.resume_leaf,
        out_dir=out_dir,
        root_label=root_label,
        anchors=tuple(args.anchor),
        claude=claude,
    )


def compress_command(
    args: argparse.Namespace, settings: Settings, claude: str | None
) -> FleetCommand[FleetSummary]:
    from pipeline.execute.local_model_services import model_provider, model_services  # noqa: PLC0415 - httpx on use only
    from pipeline.jobs.compress import compress_session  # noqa: PLC0415 - per command

    report_dir = args.report_dir.resolve() if args.report_dir else args.out.resolve()
    out_dir = str(args.out.resolve())

    def options_for(session: SessionFile) -> CompressOptions:
        return compress_options(args, settings, claude, out_dir=out_dir, root_label=session.root_label)

    record = compress_run(args, settings, claude)
    if args.dry_run:
        from pipeline.cli.dry_run_command import dry_run_command  # noqa: PLC0415 - per command

        return dry_run_command(args, settings, record, options_for, report_dir)
    provider = model_provider(args, settings)
    cluster_prepare = None
    if provider is not None and args.cluster is not None:
        cluster_prepare = _cluster_models(settings, provider, options_for)
    return FleetCommand(
        name="compress",
        job=compress_session,
        options_for=options_for,
        report_dir=report_dir,
        per_code=settings.sweep.findings_per_code,
        summarize=_summarizer("compress", record),
        present=_present(report_dir),
        prepare=(
            model_services(settings, provider, options_for, args.max_run_tokens)
            if provider is not None
            else None
        ),
        cluster_prepare=cluster_prepare,
    )


def _cluster_models(settings: Settings, provider: Any, options_for: Callable[[SessionFile], Any]) -> Any:
    """A model run's cluster hook: the limiter actor, and the worker job calling the model."""
    from pipeline.execute.dask_model_services import model_cluster_prepare  # noqa: PLC0415 - Dask on use
    from pipeline.summarize.configure import model_summary_options, rate_limits  # noqa: PLC0415

    name, config = provider
    return model_cluster_prepare(
        options_for,
        config,
        model_summary_options(settings, name),
        fallback=settings.compress.on_summary_failure is SummaryFallback.DETERMINISTIC,
        limits=rate_limits(settings),
    )
