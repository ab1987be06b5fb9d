"""The `compaction` command line: parse flags, build settings once, run one job, exit with a code.

Exit codes of the sweeping jobs: 0 when every session is fine (valid, warnings, skipped,
unsupported format), 1 when at least one session has errors, was refused, unreadable or crashed,
2 for a usage error or an unreadable root. `verify-resume` has its own (see its --help).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from pipeline import __version__
from pipeline.errors import ConfigError
from pipeline.jobs import verify_resume as verify_command
from pipeline.jobs.tokens import command as tokens_command
from pipeline.jobs.validate import SweepOptions, sweep_session
from pipeline.publish import write_json_atomic
from pipeline.read.discover import RootError, SessionFile, default_roots, discover
from pipeline.report.sessions import summary_report
from pipeline.run.console import configure_logging, progress_bar, render_summary
from pipeline.run.runner import RunResult, resolve_jobs, run_sessions_blocking
from pipeline.settings import Settings, load_settings
from pipeline.vocabulary import CheckpointPolicy, LeafPolicy

if TYPE_CHECKING:
    from pipeline.jobs.compress import CompressOptions

__all__ = ["main"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
MIN_SUMMARY_CHARS = 4000  # seed 004: smaller budgets cannot carry a meaningful compact summary
RESUME_GATE_MODES = ("auto", "on", "off")


class UsageError(Exception):
    """A problem with the command line itself."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="session roots or files (default: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects)",
    )
    parser.add_argument(
        "--report-dir", type=Path, help="where reports go (default: a fresh directory here, printed)"
    )
    parser.add_argument("--jobs", type=int, help="worker processes (default: the core count)")
    parser.add_argument("--config", type=Path, help="a TOML file overriding config/default.toml")
    parser.add_argument(
        "--log-format", choices=("console", "json"), help="log lines on stderr (default: console)"
    )
    parser.add_argument(
        "--quiet", action="store_true", help="no progress bar or table; warnings and errors only"
    )


def _topology(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--leaf-policy",
        choices=[p.value for p in LeafPolicy],
        help="auto (default): strict where the last pointer names a leaf, else Claude Code's "
        "inference; strict: the seed's rules only; physical: physical tail, no branch isolation",
    )
    parser.add_argument("--resume-leaf", metavar="UUID", help="resume from this leaf (one session only)")
    parser.add_argument(
        "--max-post-last-prompt-extension",
        type=int,
        metavar="N",
        help="accept up to N tool-result records after the last pointer (default 0)",
    )
    parser.add_argument(
        "--checkpoint-policy",
        choices=[p.value for p in CheckpointPolicy],
        help="which file-history snapshots travel with kept records",
    )
    parser.add_argument(
        "--max-file-history-snapshots", type=int, metavar="N", help="keep at most N snapshots"
    )


def build_parser() -> argparse.ArgumentParser:
    """The full parser with one subcommand per job."""
    parser = _Parser(
        prog="compaction", description="Validate and compact coding-agent session transcripts offline."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    validate = commands.add_parser(
        "validate",
        help="sweep sessions: read, select the active branch, partition every line, validate",
        description="Validate every session under the given roots and write one JSON report per session "
        "plus summary.json. Nothing is modified.",
    )
    _common(validate)
    _topology(validate)
    compress = commands.add_parser(
        "compress",
        help="write a compacted candidate for every session that needs one (sources are never touched)",
        description="Plan a cut per session, summarize the older turns, keep the recent tail byte-for-byte, "
        "check the result and write it under --out, mirroring the input layout, with one JSON "
        "report per session and summary.json.",
    )
    _common(compress)
    _topology(compress)
    compress.add_argument("--out", type=Path, required=True, help="directory for candidates and reports")
    compress.add_argument(
        "--summarizer",
        choices=("deterministic",),
        help="who writes the summary (deterministic: embedded, no network or key)",
    )
    compress.add_argument(
        "--min-tokens", type=int, metavar="N", help="skip sessions whose active chain is smaller"
    )
    compress.add_argument(
        "--target-ratio", type=float, metavar="R", help="share of the source bytes to aim for"
    )
    compress.add_argument(
        "--target-estimated-tokens",
        type=int,
        metavar="N",
        help="hard gate on the candidate's seed-estimated tokens",
    )
    compress.add_argument(
        "--min-recent-records", type=int, metavar="N", help="recent records kept raw at least"
    )
    compress.add_argument(
        "--summary-char-budget",
        type=int,
        metavar="N",
        help="maximum summary characters (at least 4000); exceeding it refuses the session",
    )
    compress.add_argument(
        "--preserve-prior-summaries-verbatim",
        action="store_true",
        default=None,
        help="copy prior compact summaries verbatim into the new one (budget x1.5)",
    )
    compress.add_argument(
        "--verify-resume",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="resume each candidate and its source in Claude Code before writing it and refuse the "
        "session on a mismatch (default: whenever Claude Code is found; --verify-resume requires it, "
        "--no-verify-resume skips the proof)",
    )
    compress.add_argument(
        "--claude",
        type=Path,
        metavar="PATH",
        help="Claude Code for --verify-resume (executable or npm prefix; default: see verify-resume)",
    )
    compress.add_argument(
        "--anchor",
        action="append",
        metavar="TEXT",
        default=[],
        help="text that must survive compaction (repeatable)",
    )
    tokens = commands.add_parser(
        "tokens",
        help="count the tokens sessions hold, per content class, with each estimator, against billed usage",
        description="Count every session's tokens per content class (whole file and active chain) with the "
        "chosen estimators, fit each against the billed usage the transcripts carry, and report per corpus "
        "(one per root) and overall. With --out: tokens.json, tokens.csv and PNG charts.",
    )
    _common(tokens)
    tokens_command.add_arguments(tokens)
    verify = commands.add_parser(
        "verify-resume",
        help="resume a session and its compaction in Claude Code (offline) and compare what each sends",
        description="Resume ORIGINAL and COMPACTED in Claude Code against a loopback capture server "
        "(throwaway home and key, no real API call) and compare the contexts it sends: the compacted one "
        "must be the summary followed by a non-empty suffix of the original, every tool_use answered, "
        "no text of an excluded record. Prints the verdict and the size of both contexts.",
        epilog=verify_command.EXIT_CODES_HELP,
    )
    verify.add_argument("--config", type=Path, help="a TOML file overriding config/default.toml")
    verify_command.add_arguments(verify)
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    flags: dict[str, dict[str, Any]] = {
        "sweep": {
            "jobs": args.jobs,
            "leaf_policy": getattr(args, "leaf_policy", None),
            "max_post_last_prompt_extension": getattr(args, "max_post_last_prompt_extension", None),
            "checkpoint_policy": getattr(args, "checkpoint_policy", None),
            "max_file_history_snapshots": getattr(args, "max_file_history_snapshots", None),
            "log_format": args.log_format,
            "report_dir": str(args.report_dir) if args.report_dir else None,
        }
    }
    if args.command == "compress":
        flags["compress"] = {
            "min_tokens": args.min_tokens,
            "target_ratio": args.target_ratio,
            "target_estimated_tokens": args.target_estimated_tokens,
            "min_recent_records": args.min_recent_records,
            "summary_char_budget": args.summary_char_budget,
            "preserve_prior_summaries_verbatim": args.preserve_prior_summaries_verbatim,
            "summarizer": args.summarizer,
            "verify_resume": {True: "on", False: "off", None: None}[args.verify_resume],
        }
        flags["verify"] = {"claude": str(args.claude) if args.claude else None}
    return load_settings(args.config, flags=flags)


def _report_dir(settings: Settings, command: str) -> Path:
    configured = settings.get("sweep", "report_dir")
    if configured:
        return Path(configured)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    candidate = Path.cwd() / "compaction-reports" / f"{command}-{stamp}"
    suffix = 2
    while candidate.exists():
        candidate = Path.cwd() / "compaction-reports" / f"{command}-{stamp}-{suffix}"
        suffix += 1
    return candidate


def _check_values(settings: Settings, sessions: Sequence[SessionFile], args: argparse.Namespace) -> None:
    if settings.get("sweep", "jobs") < 0:
        raise UsageError("--jobs must be 0 (core count) or more")
    if settings.get("sweep", "max_post_last_prompt_extension") < 0:
        raise UsageError("--max-post-last-prompt-extension must be 0 or more")
    if settings.get("sweep", "max_file_history_snapshots") < 0:
        raise UsageError("--max-file-history-snapshots must be 0 or more")
    if settings.get("sweep", "leaf_policy") not in {p.value for p in LeafPolicy}:
        raise UsageError(f"unknown leaf policy {settings.get('sweep', 'leaf_policy')!r}")
    if getattr(args, "resume_leaf", None) and len(sessions) != 1:
        raise UsageError(f"--resume-leaf applies to exactly one session; {len(sessions)} were found")
    if args.command == "compress":
        _check_compress(settings, sessions, args)


def _check_compress(settings: Settings, sessions: Sequence[SessionFile], args: argparse.Namespace) -> None:
    compress = settings.section("compress")
    if compress["summary_char_budget"] < MIN_SUMMARY_CHARS:
        raise UsageError(f"--summary-char-budget must be at least {MIN_SUMMARY_CHARS}")
    if not 0 < compress["target_ratio"] <= 1:
        raise UsageError("--target-ratio must be in (0, 1]")
    if not 0 <= compress["min_gain"] < 1:
        raise UsageError("compress.min_gain must be in [0, 1)")
    if (
        compress["min_recent_records"] < 0
        or compress["min_tokens"] < 0
        or compress["target_estimated_tokens"] < 0
    ):
        raise UsageError("counts must be 0 or more")
    if compress["verify_resume"] not in RESUME_GATE_MODES:
        raise UsageError(f"compress.verify_resume must be one of {', '.join(RESUME_GATE_MODES)}")
    out = args.out.resolve()
    if any(part.lower() == ".claude" for part in out.parts):
        raise UsageError(
            "--out must be outside any .claude directory: candidates never go into the live tree"
        )
    for root in {path.resolve() for path in (args.paths or default_roots())}:
        if root.is_dir() and (out == root or root in out.parents or out in root.parents):
            raise UsageError(
                f"--out must be apart from the session root {root} (neither inside nor around it)"
            )


def _claude_code(settings: Settings) -> str | None:
    """The Claude Code the resume gate runs, resolved once before any session starts.

    `on` requires it; `auto` (the default) uses it when found and says in one line when not;
    `off` skips the gate.
    """
    from pipeline.proof.client import ClaudeCodeError, require_claude_code  # noqa: PLC0415

    mode = settings.get("compress", "verify_resume")
    if mode == "off":
        return None
    configured = settings.get("verify", "claude")
    try:
        return str(require_claude_code(Path(configured) if configured else None))
    except ClaudeCodeError as exc:
        if mode == "on":
            raise UsageError(f"--verify-resume: {exc}") from exc
    print(
        "compaction: note: Claude Code not found, so candidates are written without the resume proof "
        "(scripts/install-claude-code installs it; --no-verify-resume silences this note)",
        file=sys.stderr,
    )
    return None


def _sweep_options(args: argparse.Namespace, settings: Settings) -> SweepOptions:
    sweep = settings.section("sweep")
    return SweepOptions(
        leaf_policy=sweep["leaf_policy"],
        resume_leaf=args.resume_leaf,
        max_extension=sweep["max_post_last_prompt_extension"],
        checkpoint_policy=sweep["checkpoint_policy"],
        max_snapshots=sweep["max_file_history_snapshots"],
    )


def _compress_options(
    args: argparse.Namespace, settings: Settings, claude: str | None
) -> Callable[[str], CompressOptions]:
    sweep, compress, summary, verify = (
        settings.section("sweep"),
        settings.section("compress"),
        settings.section("summary"),
        settings.section("verify"),
    )
    from pipeline.jobs.compress import CompressOptions  # noqa: PLC0415 - validate runs never load the summarizer

    def for_root(root_label: str) -> CompressOptions:
        return CompressOptions(
            out_dir=str(args.out.resolve()),
            root_label=root_label,
            leaf_policy=sweep["leaf_policy"],
            resume_leaf=args.resume_leaf,
            max_extension=sweep["max_post_last_prompt_extension"],
            checkpoint_policy=sweep["checkpoint_policy"],
            max_snapshots=sweep["max_file_history_snapshots"],
            min_tokens=compress["min_tokens"],
            target_ratio=compress["target_ratio"],
            target_tokens=compress["target_estimated_tokens"] or None,
            min_recent_records=compress["min_recent_records"],
            summary_char_budget=compress["summary_char_budget"],
            min_gain=compress["min_gain"],
            preserve_prior_verbatim=compress["preserve_prior_summaries_verbatim"],
            anchors=tuple(args.anchor),
            summary_limits=tuple(sorted(summary.items())),
            verify_resume=claude is not None,
            claude=claude,
            resume_timeout=verify["resume_timeout_seconds"],
            min_excluded_chars=verify["min_excluded_text_chars"],
        )

    return for_root


def _execute(
    args: argparse.Namespace, settings: Settings, sessions: list[SessionFile], claude: str | None
) -> int:
    """Run one job over every session, write the fleet summary, print the table."""
    command = args.command
    jobs = resolve_jobs(settings.get("sweep", "jobs"))
    if command == "tokens":
        args.leaf_policy = settings.get("sweep", "leaf_policy")
        args.estimators = args.estimators or settings.get("tokens", "estimators")
        args.max_names = settings.get("tokens", "max_names_per_class")
        if args.report_dir:
            report_dir = args.report_dir.resolve()
        else:
            report_dir = (args.out / "sessions").resolve() if args.out else _report_dir(settings, command)
        return tokens_command.run(args, sessions, jobs, report_dir)
    if command == "compress":
        report_dir = args.report_dir.resolve() if args.report_dir else args.out.resolve()
        from pipeline.jobs.compress import compress_session  # noqa: PLC0415 - loaded only for compress runs

        make = _compress_options(args, settings, claude)
        job: Callable[..., Any] = compress_session
        per_session: dict[str, tuple[Any, ...]] = {s.report_label: (make(s.root_label),) for s in sessions}
        recorded: Any = make("")
    else:
        report_dir = _report_dir(settings, command)
        job = sweep_session
        options = _sweep_options(args, settings)
        per_session = {s.report_label: (options,) for s in sessions}
        recorded = options
    with progress_bar(len(sessions), enabled=not args.quiet, description=command) as advance:
        result: RunResult = run_sessions_blocking(
            sessions, job, per_session, jobs=jobs, report_dir=report_dir, on_outcome=advance
        )
    record: dict[str, Any] = {field: getattr(recorded, field) for field in recorded.__dataclass_fields__}
    record.pop("root_label", None)
    record["jobs"] = jobs
    record["settings_sources"] = list(settings.sources)
    summary = summary_report(
        result.outcomes,
        command=command,
        options=record,
        report_paths=result.report_paths,
        elapsed_ms=result.elapsed_ms,
        roots=[str(s) for s in dict.fromkeys(session.root for session in sessions)],
    )
    write_json_atomic(report_dir / "summary.json", summary)
    if not args.quiet:
        render_summary(result.outcomes, report_dir, result.elapsed_ms)
    return EXIT_FAILED if result.failed else EXIT_OK


def _verify_resume(args: argparse.Namespace) -> int:
    try:
        settings = load_settings(args.config)
    except ConfigError as exc:
        print(f"compaction: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    verify = settings.section("verify")
    if args.claude is None and verify["claude"]:
        args.claude = Path(verify["claude"])
    return verify_command.run(args, verify)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `compaction` console script."""
    args = build_parser().parse_args(argv)
    if args.command == "verify-resume":
        return _verify_resume(args)
    try:
        settings = _settings(args)
        configure_logging(settings.get("sweep", "log_format"), quiet=args.quiet)
        roots = list(args.paths) or default_roots()
        sessions = discover(roots)
        _check_values(settings, sessions, args)
        claude = _claude_code(settings) if args.command == "compress" else None
    except (ConfigError, RootError, UsageError) as exc:
        print(f"compaction: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return _execute(args, settings, sessions, claude)


if __name__ == "__main__":
    sys.exit(main())
