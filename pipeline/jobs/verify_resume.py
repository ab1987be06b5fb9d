"""`compaction verify-resume ORIGINAL COMPACTED`: does the session's own client resume the
compaction correctly?

The judge is the one of the original's detected format: a session read through the seam
(`agents/registry.py`) by its context judge (`verify_context_resume.py`), an active chain by its
chain judge (`agents/registry.chain_judge`: Claude Code, also for a file of no processed format).

Resumes both files in the client against the loopback capture server, compares the two contexts,
prints the verdict and what the client would send before and after, and exits 0 only on a match.
With `--json` the verdict goes to stdout as one JSON document instead.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import msgspec
from rich.console import Console
from rich.table import Table

from pipeline.agents.chain_judge import ChainJudge, ChainVerdict, SentExclusions
from pipeline.agents.registry import chain_judge, context_format
from pipeline.core.partition import partition_lines
from pipeline.core.topology.select import AUTO
from pipeline.formats.detect import detect_format
from pipeline.formats.line_guard import LineLimits
from pipeline.installed import JudgeError, ResumeJudge
from pipeline.jobs.front import Analysis, open_session
from pipeline.jobs.verify_context_resume import JudgeFound, run_context, verify_report_type
from pipeline.report.render import json_bytes
from pipeline.report.resume_check import ResumeCheckSection, resume_check_section
from pipeline.settings import VerifySettings
from pipeline.vocabulary import ResumeExit, SourceFormat, Verdict

__all__ = ["original_exclusions", "run"]

_DETECT_BYTES: Final = 4 << 20  # the head a format is told by (a rollout's first lines say it)


def _table(client: str, verdict: ChainVerdict) -> Table:
    table = Table(title=f"what {client} sends", title_justify="left")
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


def _print(name: str, verdict: ChainVerdict, check: ResumeCheckSection) -> None:
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
        console.print(_table(name, verdict))


def original_exclusions(original: Path, min_chars: int, limits: LineLimits) -> SentExclusions:
    """What finds the excluded texts a compacted context sends, the source partitioned as a sweep
    does it (by its format's judge)."""
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
    return chain_judge(opened.format).excluded(opened, partition, min_chars)


def _usage(message: str) -> ResumeExit:
    print(f"compaction: error: {message}", file=sys.stderr)
    return ResumeExit.USAGE


def _format_of(path: Path) -> SourceFormat:
    """The file's format, told by its head (the judge is then its own client)."""
    with path.open("rb") as head:
        return detect_format(head.read(_DETECT_BYTES), path)


def _named(client: ResumeJudge, args: argparse.Namespace, verify: VerifySettings, judged: str | None) -> str:
    """The client the user named: `--judge FORMAT=PATH` (`judged`), its own flag, its config; ""
    for none."""
    own = getattr(args, client.flag.lstrip("-"), None) if client.flag else None
    return judged or (str(own) if own else client.named(verify))


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
        named = _named(agent.judge.client, args, verify, judges.get(source_format.value))
        return run_context(agent, args, verify, limits, named)
    judge = chain_judge(source_format)
    named = _named(judge.client, args, verify, judges.get(source_format.value))
    try:
        executable = judge.client.locate(Path(named) if named else None)
    except JudgeError as exc:
        return _usage(str(exc))
    return _run_chain(judge, args, executable, verify, limits)


def _run_chain(
    judge: ChainJudge, args: argparse.Namespace, executable: Path, verify: VerifySettings, limits: LineLimits
) -> ResumeExit:
    timeout = args.timeout or verify.resume_timeout_seconds
    excluded = original_exclusions(args.original, verify.min_excluded_text_chars, limits)
    name = judge.client.name
    # Two resumes take seconds: say what is happening on an interactive stderr.
    waiting = Console(stderr=True).status(f"resuming both files in {name} (offline)")
    started = time.perf_counter()
    try:
        with waiting if sys.stderr.isatty() else contextlib.nullcontext():
            verdict = judge.prove(
                args.original, args.compacted, executable=executable, timeout=timeout, excluded=excluded
            )
    except JudgeError as exc:  # the client's own exit codes (`installed`)
        print(f"compaction: error: {exc}", file=sys.stderr)
        return exc.resume_exit
    check = resume_check_section(verdict, round((time.perf_counter() - started) * 1000, 1))
    if args.json:
        # A chain judge's key is its format (`claude_code`), a context judge's its flag: each the key
        # its reports have always had.
        key = judge.client.source_format.value.replace("-", "_")
        found = JudgeFound(path=str(executable), version=judge.version(executable))
        report = verify_report_type(key)(**{key: found}, **msgspec.structs.asdict(check))
        sys.stdout.buffer.write(json_bytes(report))
        sys.stdout.flush()
    else:
        _print(name, verdict, check)
    if verdict.verdict is Verdict.MATCH:
        return ResumeExit.MATCH
    return ResumeExit.NOT_RESUMABLE if verdict.verdict is Verdict.NOT_RESUMABLE else ResumeExit.MISMATCH
