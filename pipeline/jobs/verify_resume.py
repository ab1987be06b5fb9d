"""`compaction verify-resume ORIGINAL COMPACTED`: does Claude Code resume the compaction correctly?

Resumes both files in Claude Code against the loopback capture server, compares the two contexts
(`verdict.py`), prints the verdict and what Claude Code would send before and after, and exits 0
only on a match. With `--json` the verdict goes to stdout as one JSON document instead.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import orjson
from rich.console import Console
from rich.table import Table

from pipeline.proof.verdict import ResumeVerdict, Verdict

__all__ = ["EXIT_CODES_HELP", "add_arguments", "run"]

EXIT_MATCH, EXIT_MISMATCH, EXIT_USAGE, EXIT_NOT_RESUMABLE, EXIT_CLAUDE_FAILED = 0, 1, 2, 3, 4
EXIT_CODES_HELP: Final = (
    "exit codes: 0 match; 1 mismatch; 2 usage error or no Claude Code; 3 Claude Code finds no "
    "conversation to resume in the original (not a mismatch); 4 Claude Code failed or timed out"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The subcommand's flags."""
    parser.add_argument("original", type=Path, help="the source transcript")
    parser.add_argument("compacted", type=Path, help="its compacted candidate")
    parser.add_argument(
        "--claude",
        type=Path,
        metavar="PATH",
        help="Claude Code executable or npm prefix (default: $COMPACTION_CLAUDE_CODE, the pinned build "
        "in .cache/claude-code, else `claude` on PATH)",
    )
    parser.add_argument("--timeout", type=float, metavar="SECONDS", help="limit for one resume")
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON on stdout")


def _table(verdict: ResumeVerdict) -> Table:
    table = Table(title="what Claude Code sends", title_justify="left")
    for column in ("", "messages", "characters", "est. tokens"):
        table.add_column(column, justify="right" if column else "left")
    sides = (("original", verdict.original), ("compacted", verdict.compacted))
    sizes = [(name, context.size) for name, context in sides if context is not None]
    for name, size in sizes:
        table.add_row(name, f"{size.messages:,}", f"{size.characters:,}", f"{size.estimated_tokens:,}")
    if len(sizes) == 2:
        before, after = sizes[0][1], sizes[1][1]

        def share(a: int, b: int) -> str:
            return f"{1 - b / a:.1%}" if a else "-"

        table.add_row(
            "smaller by",
            f"{before.messages - after.messages:,}",
            share(before.characters, after.characters),
            share(before.estimated_tokens, after.estimated_tokens),
        )
    return table


def _print(verdict: ResumeVerdict, report: Mapping[str, Any]) -> None:
    console = Console(highlight=False, soft_wrap=True)
    colour = {"match": "green", "mismatch": "red"}.get(verdict.verdict.value, "yellow")
    console.print(f"verify-resume: [bold {colour}]{verdict.verdict.value}[/]")
    for note in verdict.notes:
        console.print(f"  {note}")
    for difference in verdict.differences:
        console.print(f"  - {difference}")
    if verdict.original is not None:
        console.print(
            f"  {report['summary_blocks']} summary block(s), then {report['kept_blocks']} "
            f"of the original's {len(verdict.original.blocks)} blocks"
        )
        console.print(_table(verdict))


def run(args: argparse.Namespace, settings: Mapping[str, Any]) -> int:
    """Run the check; print it; return the exit code."""
    # Loaded here: the parser is built for every command, the client and server only for this one.
    from pipeline.proof.client import ClaudeCodeError, installed_version, require_claude_code  # noqa: PLC0415
    from pipeline.proof.prove import ProofOptions, prove_resume  # noqa: PLC0415

    for path in (args.original, args.compacted):
        if not path.is_file():
            print(f"compaction: error: not a file: {path}", file=sys.stderr)
            return EXIT_USAGE
    try:
        executable = require_claude_code(args.claude)
    except ClaudeCodeError as exc:
        print(f"compaction: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    options = ProofOptions(
        executable=str(executable),
        timeout=args.timeout or settings["resume_timeout_seconds"],
        min_excluded_chars=settings["min_excluded_text_chars"],
    )
    # Two resumes take 5-20 s: say what is happening on an interactive stderr.
    waiting = Console(stderr=True).status("resuming both files in Claude Code (offline)")
    try:
        with waiting if sys.stderr.isatty() else contextlib.nullcontext():
            verdict = prove_resume(args.original, args.compacted, options)
    except ClaudeCodeError as exc:
        print(f"compaction: error: {exc}", file=sys.stderr)
        return EXIT_CLAUDE_FAILED
    report = {"claude_code": {"path": str(executable), "version": installed_version(executable)}}
    report |= verdict.to_report()
    if args.json:
        sys.stdout.buffer.write(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
        sys.stdout.flush()
    else:
        _print(verdict, report)
    if verdict.verdict is Verdict.MATCH:
        return EXIT_MATCH
    return EXIT_NOT_RESUMABLE if verdict.verdict is Verdict.NOT_RESUMABLE else EXIT_MISMATCH
