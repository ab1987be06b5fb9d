"""The command line's grammar: one subcommand per job, every flag with its help.

Defaults are not written here: an absent flag is None and the settings (`config/default.toml`,
then a file, then the environment) decide. `flag_overrides` turns the parsed flags into the
settings layer they form.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, NoReturn

from pipeline import __version__
from pipeline.cli.live_grammar import (
    CONFIG_HELP,
    IN_PLACE_EXIT_CODES,
    add_in_place_flags,
    add_live_commands,
    live_overrides,
)
from pipeline.estimate.estimators import EstimatorName
from pipeline.formats.registry import roots_help
from pipeline.read.remote import is_url
from pipeline.vocabulary import (
    CheckpointPolicy,
    ExitCode,
    LeafPolicy,
    LogFormat,
    Strategy,
    SummarizerName,
    SummaryFallback,
)

__all__ = ["build_parser", "flag_overrides", "path_or_url"]

EXIT_CODES_HELP: Final = (
    "exit codes: 0 match; 1 mismatch; 2 usage error, no judge installed for the original's format, "
    "or an original no judge resumes (another agent's: unsupported-format; nobody's: not-a-transcript); "
    "3 the judge finds no conversation to resume in the original (not a mismatch); 4 to 9 the "
    "judge's client failed or timed out: 4 Claude Code, 5 Codex, 6 pi, 7 CodeWhale, 8 Gemini CLI, "
    "9 Qwen Code"
)


_JUDGE_HELP: Final = {
    "--claude": "Claude Code executable or npm prefix (default: $COMPACTION_CLAUDE_CODE, the pinned "
    "build in .cache/claude-code, else `claude` on PATH)",
    "--codex": "Codex CLI executable or npm prefix, for Codex rollouts (default: $COMPACTION_CODEX, "
    "the pinned build in .cache/codex, else `codex` on PATH)",
}


def _add_verify_arguments(parser: argparse.ArgumentParser) -> None:
    """`verify-resume`'s flags."""
    parser.add_argument("original", type=Path, help="the source transcript")
    parser.add_argument("compacted", type=Path, help="its compacted candidate")
    for flag, judge in _JUDGE_HELP.items():
        parser.add_argument(flag, type=Path, metavar="PATH", help=judge)
    parser.add_argument(
        "--judge", type=judge_pair, action="append", default=[], metavar="FORMAT=PATH", help=JUDGE_FLAG_HELP
    )
    parser.add_argument("--timeout", type=positive_seconds, metavar="SECONDS", help="limit for one resume")
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON on stdout")


PROBE_EXIT_CODES_HELP: Final = (
    "exit codes: 0 probed; 1 fidelity below --min-fidelity; 2 usage error, or files that are not a "
    "source and its compaction"
)


def _add_probe_arguments(parser: argparse.ArgumentParser) -> None:
    """`probe`'s flags."""
    parser.add_argument("original", type=Path, help="the source transcript")
    parser.add_argument("compacted", type=Path, help="its compaction (ours, or Claude Code's own)")
    parser.add_argument("--config", type=Path, help=CONFIG_HELP)
    parser.add_argument(
        "--min-fidelity",
        type=float,
        metavar="F",
        help="exit 1 when the fidelity (mean recall of the probe classes) is below F, in [0, 1]",
    )
    parser.add_argument("--json", action="store_true", help="print the fidelity section as JSON on stdout")


def path_or_url(text: str) -> Path | str:
    """A local path, or an fsspec URL kept as written (`Path` would fold its `//`)."""
    return text if is_url(text) else Path(text)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line: a nightly log shows the mistake, not a page
        self.exit(ExitCode.USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def positive_seconds(text: str) -> float:
    """A flag's number of seconds, more than 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, got {text!r}")
    return value


def judge_pair(text: str) -> tuple[str, str]:
    """`--judge FORMAT=PATH`: a processed format's name (as reports name it) and its client."""
    from pipeline.agents.registry import RESUME_JUDGES  # noqa: PLC0415

    name, equals, path = text.partition("=")
    names = sorted(source_format.value for source_format in RESUME_JUDGES)
    if not equals or not path:
        raise argparse.ArgumentTypeError(f"not FORMAT=PATH: {text!r} (formats: {', '.join(names)})")
    if name not in names:
        raise argparse.ArgumentTypeError(f"no judge for format {name!r} (formats: {', '.join(names)})")
    return name, path


JUDGE_FLAG_HELP: Final = (
    "the client the resume proof runs for one format's sessions, e.g. codex=/opt/codex (repeatable; "
    "over [judges] and the format's own flag)"
)


def count(text: str) -> int:
    """A flag's whole number, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text!r}")
    return value


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        type=path_or_url,
        metavar="PATH",
        help="session roots or files, or fsspec URLs (s3://bucket/prefix, gs://..., file://...) "
        "(default: every session directory of a supported agent found here: "
        f"{roots_help()}; an agent's own variable, such as $CLAUDE_CONFIG_DIR or $CODEX_HOME, "
        "moves that agent's folder)",
    )
    parser.add_argument(
        "--report-dir",
        type=path_or_url,
        help="where reports go, a directory or (with --cluster) an fsspec URL (default: a fresh "
        "directory here, printed)",
    )
    parser.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="run sessions as Dask tasks: local:N (a LocalCluster of N worker processes) or "
        "tcp://host:port (a running scheduler); needs the cluster extra",
    )
    parser.add_argument("--jobs", type=int, help="worker processes (default: the core count)")
    parser.add_argument(
        "--resume",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="skip a session whose completion marker in the report directory names the same source "
        "bytes, options and report (default: on; --no-resume runs every session again)",
    )
    parser.add_argument("--config", type=Path, help=CONFIG_HELP)
    parser.add_argument("--log-format", choices=[f.value for f in LogFormat], help="log lines on stderr")
    parser.add_argument(
        "--quiet", action="store_true", help="no progress bar or table; warnings and errors only"
    )
    parser.add_argument(
        "--html",
        action="store_true",
        help="also write report.html into the report directory at the end of the run: one "
        "self-contained page of the run (as `compaction report DIR` writes it)",
    )


def _topology(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--leaf-policy",
        choices=[p.value for p in LeafPolicy],
        help="auto (default): where Claude Code resumes, the strict chain where the seed agrees; "
        "strict: the seed's rules only; physical: physical tail, no branch isolation",
    )
    parser.add_argument("--resume-leaf", metavar="UUID", help="resume from this leaf (one session only)")
    parser.add_argument(
        "--max-post-last-prompt-extension",
        type=int,
        metavar="N",
        help="accept up to N tool-result records after the last pointer (strict policy)",
    )
    parser.add_argument(
        "--checkpoint-policy",
        choices=[p.value for p in CheckpointPolicy],
        help="which file-history snapshots travel with kept records",
    )
    parser.add_argument(
        "--max-file-history-snapshots", type=int, metavar="N", help="keep at most N snapshots"
    )


def _model_summary(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("--model", metavar="NAME", help="the model of a --summarizer provider (default: its config section)")
    add("--base-url", metavar="URL", help="the provider's endpoint (an OpenAI-compatible server, a gateway)")
    add(
        "--model-context-window",
        type=count,
        metavar="TOKENS",
        help="the model's context window (default: [model_windows] for the model, else its provider section)",
    )
    add(
        "--model-max-output",
        type=count,
        metavar="TOKENS",
        help="the most tokens a summary call may answer with (default: as --model-context-window)",
    )
    add(
        "--dry-run",
        action="store_true",
        help="with a model summarizer: print each session's and the run's calls, tokens, cost and least "
        "wall time, calling nothing and writing no candidate",
    )
    add(
        "--max-run-tokens",
        type=count,
        metavar="N",
        help="with a model summarizer: no new summary once the run's billed tokens reach N (sessions "
        "already summarizing finish; the rest are skipped-run-budget)",
    )
    add(
        "--on-summary-failure",
        choices=[f.value for f in SummaryFallback],
        help="when a model summary fails after its repair: refuse the session (default) or write the "
        "embedded summary instead",
    )


def _compress(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("--out", type=Path, help="directory for candidates and reports (or --in-place)")
    add("--summarizer", choices=[s.value for s in SummarizerName], help="who writes the summary")
    _model_summary(parser)
    add("--min-tokens", type=int, metavar="N", help="skip sessions whose active chain is smaller")
    add("--target-ratio", type=float, metavar="R", help="most of the source chain's tokens to keep")
    add("--context-window", type=int, metavar="N", help="the client's context window in tokens")
    add("--max-window-share", type=float, metavar="S", help="most of the window a candidate may fill")
    add(
        "--target-estimated-tokens",
        type=int,
        metavar="N",
        help="hard gate on the candidate's seed tokens, replacing the ratio and the window",
    )
    add("--min-recent-records", type=int, metavar="N", help="recent records kept raw when the target allows")
    add(
        "--tool-output-limit",
        type=int,
        metavar="BYTES",
        help="bound kept tool outputs to head and tail within BYTES (0: keep every byte)",
    )
    add(
        "--summary-char-budget",
        type=int,
        metavar="N",
        help="maximum summary characters (at least 4000); a larger summary is fitted within it",
    )
    add(
        "--preserve-prior-summaries-verbatim",
        action="store_true",
        default=None,
        help="copy prior compact summaries verbatim into the new one (budget x1.5)",
    )
    add(
        "--verify-resume",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="resume each candidate and its source in Claude Code before writing it and refuse the "
        "session on a mismatch (default: whenever Claude Code is found; --verify-resume requires it, "
        "--no-verify-resume skips the proof)",
    )
    add(
        "--repair",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="repair a damaged active chain first (compaction repair's proven edits), then compress the "
        "repaired session (default: in place only; --no-repair leaves damage in the kept tail refused)",
    )
    for flag, judge in (("--claude", "Claude Code"), ("--codex", "the Codex CLI, for rollouts,")):
        add(flag, type=Path, metavar="PATH", help=f"{judge} for the resume gate (executable or npm prefix)")
    add("--judge", type=judge_pair, action="append", default=[], metavar="FORMAT=PATH", help=JUDGE_FLAG_HELP)
    add("--anchor", action="append", metavar="TEXT", default=[], help="text that must survive (repeatable)")
    _strategy(parser)


def _strategy(parser: argparse.ArgumentParser) -> None:
    """How room is made, and how much of what it compacted a candidate must still carry."""
    add = parser.add_argument
    add(
        "--strategy",
        choices=[s.value for s in Strategy],
        help="summary: summarize before the cut; mask: no summary, every record kept, tool outputs "
        "before the protected round cleared (Claude Code's marker); hybrid: summarize and clear, "
        "reaching the target with the most text kept (default: compress.strategy)",
    )
    add(
        "--min-fidelity",
        type=float,
        metavar="F",
        help="refuse a candidate whose fidelity (mean recall, per probe class, of the summarized "
        "span's facts in what a resumed agent is given) is below F, in [0, 1] (default 0: none)",
    )


def _tokens(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, help="write tokens.json, tokens.csv and PNG charts here")
    parser.add_argument(
        "--estimators",
        metavar="NAMES",
        help="comma-separated: "
        + ", ".join(name.value for name in EstimatorName)
        + " (default: [tokens] estimators; real tokenizers and auto need the tokenizers extra)",
    )


def _fleet_arguments(
    validate: argparse.ArgumentParser,
    compress: argparse.ArgumentParser,
    tokens: argparse.ArgumentParser,
    wanted: Callable[[str], bool],
) -> None:
    """The arguments of the fleet commands that are `wanted`."""
    for name, sub in (("validate", validate), ("compress", compress), ("tokens", tokens)):
        if wanted(name):
            _common(sub)
    if wanted("validate"):
        _topology(validate)
    if wanted("compress"):
        _topology(compress)
        _compress(compress)
        add_in_place_flags(compress)
    if wanted("tokens"):
        tokens.add_argument(
            "--leaf-policy", choices=[p.value for p in LeafPolicy], help="how the active chain is chosen"
        )
        _tokens(tokens)


def _add_probe(commands: Any, wanted: Callable[[str], bool]) -> None:
    """The `probe` subcommand (its flags only when it is the one asked for)."""
    probe = commands.add_parser(
        "probe",
        help="measure what a resumed agent still knows of a compaction's summarized span",
        description="Rebuild the span COMPACTED summarized of ORIGINAL, read its facts (human "
        "instructions, files modified and read, commands and their outcome, errors and their "
        "resolution, identifiers, the last state of the work) and look each up in what COMPACTED "
        "resumes with; print each class's recall and the lost probes by line and id, never text.",
        epilog=PROBE_EXIT_CODES_HELP,
    )
    if wanted("probe"):
        _add_probe_arguments(probe)


def _add_schema(commands: Any, wanted: Callable[[str], bool]) -> None:
    """The `schema` subcommand: the shipped JSON Schemas of the reports and summaries."""
    schema = commands.add_parser(
        "schema",
        help="print the JSON Schema of a report, summary.json, tokens.json or probe --json",
        description="Without NAME, list the JSON Schemas (draft 2020-12) of the documents compaction "
        "writes: name, $id (the `schema` string every such document carries) and which files. With NAME, "
        "print that schema, as shipped in the package (pipeline/report/schemas/).",
    )
    if wanted("schema"):
        schema.add_argument(
            "name", nargs="?", metavar="NAME", help="a schema name or $id, e.g. session-report"
        )


def _add_report(commands: Any, wanted: Callable[[str], bool]) -> None:
    """The `report` subcommand: a report directory's HTML page."""
    report = commands.add_parser(
        "report",
        help="write one self-contained HTML page of a run from its report directory",
        description="Read DIR (the report directory of validate, compress or tokens: its summary.json, "
        "tokens.json when there is one, and the session reports it names) and write one static HTML page: "
        "statuses and reasons, tokens before and after with the target, savings per agent and root, findings "
        "by code, resume-proof verdicts, probe recall per class, billed slopes, and every session linking to "
        "its JSON report. Inline CSS and SVG only: no script, nothing fetched.",
        epilog="exit codes: 0 written; 1 written, but a session report is missing or unreadable (the page "
        "lists it); 2 DIR is not a report directory",
    )
    if wanted("report"):
        report.add_argument("directory", type=Path, metavar="DIR", help="a report directory")
        report.add_argument(
            "--out", type=Path, metavar="FILE", help="where the page goes (default: DIR/report.html)"
        )


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with one subcommand per job; given `command`, only that subcommand's arguments
    are built (every command is still listed), which keeps a short run's start-up short."""

    def wanted(name: str) -> bool:
        return command is None or command == name

    parser = _Parser(
        prog="compaction", description="Validate and compact coding-agent session transcripts offline."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    validate = commands.add_parser(
        "validate",
        help="sweep sessions: read, select the active branch, partition every line, validate",
        description="Validate every session under the given roots and write one JSON report per session "
        "plus summary.json, whose totals (and the line under the table) say what the sessions hold and how "
        "many would need compaction at the current target, per agent and per root. Nothing is modified.",
    )
    compress = commands.add_parser(
        "compress",
        help="write a compacted candidate for every session that needs one (sources are never touched)",
        description="Plan a cut per session, summarize the older turns, keep the recent tail byte-for-byte, "
        "check the result, resume it in Claude Code when it is installed, and write it under --out, "
        "mirroring the input layout, with one JSON report per session and summary.json. With --in-place, "
        "replace each idle session that needs it instead, keeping a verified numbered backup, and skip "
        "on later runs every session that has not changed since (a state database records them). "
        "summary.json totals what it achieved: tokens and bytes before and after, per agent and root.",
        epilog=IN_PLACE_EXIT_CODES,
    )
    tokens = commands.add_parser(
        "tokens",
        help="count the tokens sessions hold, per content class, with each estimator, against billed usage",
        description="Count every session's tokens per content class (whole file and active chain) with the "
        "chosen estimators, fit each against the billed usage the transcripts carry, and report per corpus "
        "(one per root), per agent and overall, with the sessions compress would compact at the current "
        "target. With --out: tokens.json, tokens.csv and PNG charts.",
    )
    _fleet_arguments(validate, compress, tokens, wanted)
    verify = commands.add_parser(
        "verify-resume",
        help="resume a session and its compaction in its agent's client (offline), compare what each sends",
        description="Resume ORIGINAL and COMPACTED offline in the client of ORIGINAL's agent at "
        "a loopback capture server (throwaway home and key), compare the contexts sent: the compacted one "
        "must be the summary, then a non-empty suffix of the original, every call answered, no excluded text",
        epilog=EXIT_CODES_HELP,
    )
    if wanted("verify-resume"):
        verify.add_argument("--config", type=Path, help=CONFIG_HELP)
        _add_verify_arguments(verify)
    _add_probe(commands, wanted)
    add_live_commands(commands, wanted)
    _add_report(commands, wanted)
    _add_schema(commands, wanted)
    return parser


_GATE = {True: "on", False: "off", None: None}


def flag_overrides(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """The settings layer the flags form (None: not given, the lower layers decide)."""
    get = vars(args).get
    flags: dict[str, dict[str, Any]] = {
        "sweep": {
            "jobs": get("jobs"),
            "leaf_policy": getattr(args, "leaf_policy", None),
            "max_post_last_prompt_extension": getattr(args, "max_post_last_prompt_extension", None),
            "checkpoint_policy": getattr(args, "checkpoint_policy", None),
            "max_file_history_snapshots": getattr(args, "max_file_history_snapshots", None),
            "log_format": args.log_format,
            "report_dir": str(args.report_dir) if get("report_dir") else None,
            "resume": get("resume"),
        },
        **live_overrides(args),
    }
    if args.command == "compress":
        flags["compress"] = {
            "min_tokens": args.min_tokens,
            "target_ratio": args.target_ratio,
            "target_estimated_tokens": args.target_estimated_tokens,
            "context_window": args.context_window,
            "max_window_share": args.max_window_share,
            "min_recent_records": args.min_recent_records,
            "tool_output_limit": args.tool_output_limit,
            "summary_char_budget": args.summary_char_budget,
            "preserve_prior_summaries_verbatim": args.preserve_prior_summaries_verbatim,
            "summarizer": args.summarizer,
            "on_summary_failure": args.on_summary_failure,
            "verify_resume": _GATE[args.verify_resume],
            "repair": _GATE[args.repair],
            "min_fidelity": args.min_fidelity,
            "strategy": args.strategy,
        }
        judges = {"claude": args.claude, "codex": args.codex}
        flags["verify"] = {name: str(path) if path else None for name, path in judges.items()}
    if args.command in ("compress", "verify-resume"):
        flags["judges"] = dict(args.judge)
    if args.command == "tokens":
        flags["tokens"] = {"estimators": args.estimators}
    return flags
