"""`compaction compress --out` as a fleet command: its paths checked, its options per session, the
run record its summary keeps, and the model services when a model writes the summaries."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.cli.fleet_command import FleetCommand
from pipeline.cli.validate_command import fleet_headline, fleet_summarizer, present_fleet, validate_run
from pipeline.errors import UsageError
from pipeline.execute.session_tasks import BoundJob
from pipeline.formats.registry import default_roots
from pipeline.read.discover import SessionFile
from pipeline.read.remote import is_url
from pipeline.report.fleet import CompressRun, FleetSummary
from pipeline.report.run_totals import TotalsOf
from pipeline.settings import Settings
from pipeline.vocabulary import CompressRepair, ResumeGate, SourceFormat, SummarizedHistory

if TYPE_CHECKING:
    from pipeline.jobs.compress import CompressOptions

__all__ = [
    "check_apart",
    "check_compress_paths",
    "compress_command",
    "compress_options",
    "compress_run",
    "find_gate_judges",
    "gate_judge",
]


def gate_judge(settings: Settings, source_format: SourceFormat) -> str | None:
    """The judge the resume gate runs for one format's sessions, resolved once before any session
    starts (`agents.registry.RESUME_JUDGES`: --judge, the flag, [verify], environment, the pinned
    build, PATH).

    None when the gate is off, or when the judge is found nowhere: the sessions of that format then
    say so in their reports (`on` refuses them, `auto` writes them unproven, in place leaves them
    as they are), and a tree without them never needs it. A judge named but not there is a mistake.
    """
    from pipeline.agents.registry import RESUME_JUDGES  # noqa: PLC0415
    from pipeline.installed import JudgeError  # noqa: PLC0415

    if settings.compress.verify_resume is ResumeGate.OFF:
        return None
    judge = RESUME_JUDGES[source_format]
    named = settings.judges.get(source_format.value) or judge.named(settings.verify)
    try:
        return str(judge.locate(Path(named) if named else None))
    except JudgeError as exc:
        if named:
            raise UsageError(
                f"--verify-resume: {exc}; name one that is there, or pass --no-verify-resume to skip "
                "the resume proof"
            ) from exc
    return None


def find_gate_judges(settings: Settings) -> dict[SourceFormat, str]:
    """The client the resume gate runs for each format (`gate_judge`), those found. A missing one
    of the active-chain formats is said in one line here; the others' absence is said in each of
    their sessions' reports only (a fleet without them needs none)."""
    from pipeline.agents.registry import CHAIN_FORMATS, RESUME_JUDGES  # noqa: PLC0415

    gate, found = settings.compress.verify_resume, {}
    for source_format, judge in RESUME_JUDGES.items():
        executable = gate_judge(settings, source_format)
        if executable is not None:
            found[source_format] = executable
        elif gate is not ResumeGate.OFF and source_format in CHAIN_FORMATS:
            outcome = "refused" if gate is ResumeGate.ON else "written without the resume proof"
            hint = judge.install_hint.split(",")[0]
            print(
                f"compaction: note: {judge.name} not found, so its sessions' candidates are {outcome} "
                f"({hint}; --no-verify-resume silences this note)",
                file=sys.stderr,
            )
    return found


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


def compress_run(
    args: argparse.Namespace, settings: Settings, judges: Mapping[SourceFormat, str]
) -> CompressRun:
    """The options a compress run used, as its summary records them (`out_dir` empty in place);
    `verify_resume` when the gate had a judge for some format; `claude`: the active-chain
    format's judge."""
    from pipeline.agents.registry import CHAIN_FORMATS  # noqa: PLC0415

    compress, verify, base = settings.compress, settings.verify, validate_run(args, settings)
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
        verify_resume=bool(judges),
        claude=next((judges[chain] for chain in sorted(CHAIN_FORMATS) if chain in judges), None),
        resume_timeout=verify.resume_timeout_seconds,
        min_excluded_chars=verify.min_excluded_text_chars,
    )


def compress_options(
    args: argparse.Namespace,
    settings: Settings,
    judges: Mapping[SourceFormat, str],
    *,
    out_dir: str,
    root_label: str,
    in_place: bool = False,
) -> CompressOptions:
    """What one compression needs: the settings sections and what the command line decided
    (`[compress] repair` auto repairs a damaged chain first in place, not with --out; `history`
    auto drops the summarized history from the file in place, where a verified backup keeps it)."""
    from pipeline.core.session_repair import SessionRepairOptions  # noqa: PLC0415 - per command
    from pipeline.jobs.compress import CompressOptions  # noqa: PLC0415 - per command

    wanted = settings.compress.repair
    repair = wanted is CompressRepair.ON or (wanted is CompressRepair.AUTO and in_place)
    history = settings.compress.history
    drop_history = history is SummarizedHistory.DROP or (history is SummarizedHistory.AUTO and in_place)

    return CompressOptions(
        sweep=settings.sweep,
        compress=settings.compress,
        summary=settings.summary,
        verify=settings.verify,
        resume_leaf=args.resume_leaf,
        out_dir=out_dir,
        root_label=root_label,
        anchors=tuple(args.anchor),
        drop_history=drop_history,
        judges=dict(judges),
        damage_repair=SessionRepairOptions.of(settings) if repair else None,
    )


def compress_command(
    args: argparse.Namespace, settings: Settings, judges: Mapping[SourceFormat, str]
) -> FleetCommand[FleetSummary]:
    """`compress --out` (or `--dry-run`) over the discovered sessions, reports beside the candidates."""
    from pipeline.execute.model_services import (  # noqa: PLC0415 - httpx on use only
        model_provider,
        model_summarizer,
        model_window,
    )
    from pipeline.jobs.compress import compress_session  # noqa: PLC0415 - per command

    report_dir = args.report_dir.resolve() if args.report_dir else args.out.resolve()
    out_dir = str(args.out.resolve())

    def options_for(session: SessionFile) -> CompressOptions:
        return compress_options(args, settings, judges, out_dir=out_dir, root_label=session.root_label)

    record = compress_run(args, settings, judges)
    if args.dry_run:
        from pipeline.cli.dry_run_command import dry_run_command  # noqa: PLC0415 - per command

        return dry_run_command(args, settings, record, options_for, report_dir)
    provider = model_provider(args, settings)
    if provider is None and args.max_run_tokens is not None:
        raise UsageError(
            "--max-run-tokens bounds a model summarizer's billed tokens: add --summarizer with a "
            "provider, or leave it out (the embedded summarizer bills none)"
        )
    return FleetCommand(
        name="compress",
        work_for=lambda session: BoundJob(compress_session, options_for(session)),
        destination=str(report_dir),
        per_code=settings.sweep.findings_per_code,
        resume=settings.sweep.resume,
        summarize=fleet_summarizer("compress", record, TotalsOf.WRITTEN),
        present=present_fleet(report_dir, "compacted"),
        headline=fleet_headline("compacted"),
        outputs=out_dir,
        services=(
            model_summarizer(settings, provider, options_for, args.max_run_tokens, model_window(args))
            if provider is not None
            else None
        ),
    )
