"""`compaction verify-resume ORIGINAL COMPACTED`: does Claude Code resume the compaction correctly?

A session of a format read through the seam (`agents/registry.py`) is judged by its own client
instead (`verify_context_resume.py`), by its detected format.

Resumes both files in Claude Code against the loopback capture server, compares the two contexts
(`proof/claude_code/resume_verdict.py`), prints the verdict and what Claude Code would send before
and after, and exits 0 only on a match. With `--json` the verdict goes to stdout as one JSON document instead.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Final

import msgspec
from rich.console import Console
from rich.table import Table

from pipeline.agents.registry import context_format
from pipeline.core.partition import partition_lines
from pipeline.core.topology.select import AUTO
from pipeline.formats.detect import detect_format
from pipeline.formats.line_guard import LineLimits
from pipeline.jobs.front import Analysis, open_session
from pipeline.proof.claude_code.client import ClaudeCodeError, installed_version, require_claude_code
from pipeline.proof.claude_code.exclusions import sent_exclusions
from pipeline.proof.claude_code.prove import Exclusions, ProofOptions, prove_resume
from pipeline.proof.claude_code.resume_verdict import ResumeVerdict
from pipeline.report.render import json_bytes
from pipeline.report.resume_check import ResumeCheckSection, resume_check_section
from pipeline.report.sections import Section
from pipeline.settings import VerifySettings
from pipeline.vocabulary import ResumeExit, SourceFormat, Verdict

__all__ = ["original_exclusions", "run"]

_DETECT_BYTES: Final = 4 << 20  # the head a format is told by (a rollout's first lines say it)


class ClaudeCodeFound(Section, frozen=True, kw_only=True):
    path: str
    version: str | None


class VerifyReport(ResumeCheckSection, frozen=True, kw_only=True):
    """What `verify-resume --json` prints: the verdict, and which Claude Code judged."""

    claude_code: ClaudeCodeFound


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


def _print(verdict: ResumeVerdict, check: ResumeCheckSection) -> None:
    console = Console(highlight=False, soft_wrap=True)
    colour = {"match": "green", "mismatch": "red"}.get(verdict.verdict.value, "yellow")
    console.print(f"verify-resume: [bold {colour}]{verdict.verdict.value}[/]")
    for note in verdict.notes:
        console.print(f"  {note}")
    for difference in verdict.differences:
        console.print(f"  - {difference}")
    if verdict.original is not None:
        console.print(
            f"  {check.summary_blocks} summary block(s), then {check.kept_blocks} "
            f"of the original's {len(verdict.original.blocks)} blocks"
        )
        console.print(_table(verdict))


def original_exclusions(original: Path, min_chars: int, limits: LineLimits) -> Exclusions:
    """What finds the excluded texts a compacted context sends, the source partitioned as a sweep does it."""
    opened = open_session(original, original.name, AUTO, command="verify-resume", per_code=1, limits=limits)
    if not isinstance(opened, Analysis):
        return lambda _sent: ()
    topology = opened.topology
    partition = partition_lines(
        opened.index,
        summary=(),
        raw_keep=topology.chain,
        side_keep=(),
        pointer_line=topology.strict.pointer_line,
        branch_isolation=topology.branch_isolation,
    )
    return partial(sent_exclusions, opened.source.data, opened.index, partition, min_chars=min_chars)


def _usage(message: str) -> ResumeExit:
    print(f"compaction: error: {message}", file=sys.stderr)
    return ResumeExit.USAGE


def _format_of(path: Path) -> SourceFormat:
    """The file's format, told by its head (the judge is then its own client)."""
    with path.open("rb") as head:
        return detect_format(head.read(_DETECT_BYTES), path)


def run(
    args: argparse.Namespace, verify: VerifySettings, limits: LineLimits, judges: Mapping[str, str]
) -> ResumeExit:
    """Run the check; print it; return the exit code (`judges`: the clients named by format)."""
    for path in (args.original, args.compacted):
        if not path.is_file():
            return _usage(f"not a file: {path}")
    source_format = _format_of(args.original)
    agent = context_format(source_format)
    if agent is not None:
        from pipeline.jobs.verify_context_resume import run_context  # noqa: PLC0415 - the client on use only

        client = agent.judge.client
        own = getattr(args, client.flag.lstrip("-"), None) if client.flag else None  # its own flag
        named = judges.get(agent.format.value) or (str(own) if own else client.named(verify))
        return run_context(agent, args, verify, limits, named)
    named = judges.get(source_format.value) or (str(args.claude) if args.claude else verify.claude)
    try:
        executable = require_claude_code(Path(named) if named else None)
    except ClaudeCodeError as exc:
        return _usage(str(exc))
    options = ProofOptions(
        str(executable), args.timeout or verify.resume_timeout_seconds, verify.min_excluded_text_chars
    )
    excluded = original_exclusions(args.original, verify.min_excluded_text_chars, limits)
    # Two resumes take seconds: say what is happening on an interactive stderr.
    waiting = Console(stderr=True).status("resuming both files in Claude Code (offline)")
    started = time.perf_counter()
    try:
        with waiting if sys.stderr.isatty() else contextlib.nullcontext():
            verdict = prove_resume(args.original, args.compacted, options, excluded=excluded)
    except ClaudeCodeError as exc:
        print(f"compaction: error: {exc}", file=sys.stderr)
        return exc.resume_exit
    check = resume_check_section(verdict, round((time.perf_counter() - started) * 1000, 1))
    if args.json:
        found = ClaudeCodeFound(path=str(executable), version=installed_version(executable))
        sys.stdout.buffer.write(json_bytes(VerifyReport(claude_code=found, **msgspec.structs.asdict(check))))
        sys.stdout.flush()
    else:
        _print(verdict, check)
    if verdict.verdict is Verdict.MATCH:
        return ResumeExit.MATCH
    return ResumeExit.NOT_RESUMABLE if verdict.verdict is Verdict.NOT_RESUMABLE else ResumeExit.MISMATCH
