"""`compaction verify-resume ORIGINAL COMPACTED` for a session read through the seam: the agent's
own client as the judge.

Resumes both files in the client against a loopback server (its judge, `agents/<agent>`),
compares what it sends, prints the verdict and both sizes, and exits as `verify-resume` does for
Claude Code, with the client's own code when it failed or timed out (its `JudgeError`'s
`resume_exit`). With `--json` the verdict goes to stdout as one JSON document, the same report
section as Claude Code's with `judge` naming the client.

The texts of the original's excluded records (its sweep partition) must not be sent from the
compacted file either (the judge's `excluded`).
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import cast

import msgspec
from msgspec import UnsetType
from rich.console import Console

from pipeline.agents.protocol import ContextFormat
from pipeline.formats.line_guard import LineLimits
from pipeline.installed import JudgeError, reported_version
from pipeline.report.render import json_bytes
from pipeline.report.resume_check import ResumeCheckSection
from pipeline.report.sections import Section
from pipeline.settings import VerifySettings
from pipeline.vocabulary import ResumeExit, Verdict

__all__ = ["run_context", "verify_report_type"]


class JudgeFound(Section, frozen=True, kw_only=True):
    path: str
    version: str | None


@functools.cache
def verify_report_type(key: str) -> Callable[..., ResumeCheckSection]:
    """What `verify-resume --json` prints for one format read through the seam: the verdict, and
    which client judged under the judge's own key (`codex` for Codex rollouts, as its flag)."""
    made = msgspec.defstruct(
        f"VerifyReport_{key}", [(key, JudgeFound)], bases=(ResumeCheckSection,), frozen=True, kw_only=True
    )
    return cast("Callable[..., ResumeCheckSection]", made)


def _print(name: str, check: ResumeCheckSection) -> None:
    console = Console(highlight=False, soft_wrap=True)
    colour = {"match": "green", "mismatch": "red"}.get(check.verdict.value, "yellow")
    console.print(f"verify-resume ({name}): [bold {colour}]{check.verdict.value}[/]")
    notes = check.notes if isinstance(check.notes, list) else []
    differences = check.differences if isinstance(check.differences, list) else []
    for line in (*notes, *(f"- {difference}" for difference in differences)):
        console.print(f"  {line}")
    if isinstance(check.sent, UnsetType):
        return
    original, compacted = check.sent.original, check.sent.compacted
    if original is not None and compacted is not None:
        console.print(
            f"  {check.summary_blocks} summary item(s), then {check.kept_blocks} "
            f"of the original's {original.messages} items"
        )
        for side, size in (("original", original), ("compacted", compacted)):
            console.print(f"  {side}: {size.messages:,} items, {size.characters:,} characters")


def run_context(
    agent: ContextFormat, args: argparse.Namespace, verify: VerifySettings, limits: LineLimits, named: str
) -> ResumeExit:
    """Resume both files in the agent's client, judge, print; return the exit code (`named`: the
    client the user named, "" for the usual places)."""
    judge = agent.judge
    try:
        executable = judge.client.locate(Path(named) if named else None)
    except JudgeError as exc:
        print(f"compaction: error: {exc}", file=sys.stderr)
        return exc.resume_exit  # not installed: a usage error
    timeout = args.timeout or verify.resume_timeout_seconds
    original = agent.read(args.original.read_bytes(), args.original, limits)
    candidate = args.compacted.read_bytes()
    excluded = judge.excluded(original, original.sweep_sets(), candidate, verify.min_excluded_text_chars)
    started = time.perf_counter()
    try:
        judged = judge.prove(
            args.original,
            args.compacted,
            executable=executable,
            timeout=timeout,
            limits=limits,
            excluded=excluded,
            summaries=None,
        )
    except JudgeError as exc:  # the client's own exit codes (`installed`)
        print(f"compaction: error: {exc}", file=sys.stderr)
        return exc.resume_exit
    check = judged.section(round((time.perf_counter() - started) * 1000, 1))
    if args.json:
        found = JudgeFound(path=str(executable), version=reported_version(executable))
        client = judge.client
        key = client.flag.lstrip("-") or agent.format.value.replace("-", "_")
        report = verify_report_type(key)(**{key: found}, **msgspec.structs.asdict(check))
        sys.stdout.buffer.write(json_bytes(report))
        sys.stdout.flush()
    else:
        _print(judge.client.name, check)
    if check.verdict is Verdict.MATCH:
        return ResumeExit.MATCH
    return ResumeExit.NOT_RESUMABLE if check.verdict is Verdict.NOT_RESUMABLE else ResumeExit.MISMATCH
