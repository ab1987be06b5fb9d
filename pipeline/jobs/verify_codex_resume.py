"""`compaction verify-resume ORIGINAL COMPACTED` for Codex rollouts: the Codex CLI as the judge.

Resumes both rollouts in the pinned Codex CLI against the loopback Responses API
(`proof/codex_client.py`), compares the histories it sends (`proof/codex_verdict.py`), prints
the verdict and both sizes, and exits as `verify-resume` does for Claude Code, with Codex's own
code when Codex itself failed or timed out (5; 3 when a file names no thread Codex can look up).
With `--json` the verdict goes to stdout as one JSON document, the same report section as Claude
Code's with `codex` naming the judge.

The texts of the original's excluded records (its sweep partition: items before the newest
compaction or rolled back, damaged lines, events before the base) must not be sent from the
compacted file either (`proof/codex_excluded.py`).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import msgspec
from rich.console import Console

from pipeline.formats.claude_code.line_guard import LineLimits
from pipeline.formats.codex.analysis import analyze_rollout
from pipeline.installed import CodexError, reported_version, require_codex
from pipeline.proof.codex_excluded import rollout_exclusions
from pipeline.proof.codex_prove import prove_codex_resume
from pipeline.proof.codex_verdict import CodexVerdict
from pipeline.proof.context import ContextSize
from pipeline.report.render import json_bytes
from pipeline.report.resume_check import ResumeCheckSection, SentSizes, SizeSection
from pipeline.report.sections import Section
from pipeline.settings import VerifySettings
from pipeline.vocabulary import ResumeExit, Verdict

__all__ = ["codex_check_section", "run_codex"]


class CodexFound(Section, frozen=True, kw_only=True):
    path: str
    version: str | None


class CodexVerifyReport(ResumeCheckSection, frozen=True, kw_only=True):
    """What `verify-resume --json` prints for Codex rollouts: the verdict, and which Codex judged."""

    codex: CodexFound


def codex_check_section(verdict: CodexVerdict, elapsed_ms: float) -> ResumeCheckSection:
    """The report section of a Codex proof: Claude Code's shape, items counted as blocks."""
    before, after = verdict.original, verdict.compacted

    def size(side: ContextSize | None) -> SizeSection | None:
        if side is None:
            return None
        return SizeSection(
            messages=side.messages, characters=side.characters, estimated_tokens=side.estimated_tokens
        )

    reduction = None
    if before is not None and after is not None and before.characters:
        reduction = round(1 - after.characters / before.characters, 4)
    return ResumeCheckSection(
        verdict=verdict.verdict,
        differences=list(verdict.differences),
        notes=list(verdict.notes),
        summary_blocks=verdict.summary_items,
        kept_blocks=verdict.kept_items,
        sent=SentSizes(original=size(before), compacted=size(after)),
        characters_reduction=reduction,
        elapsed_ms=elapsed_ms,
    )


def _print(verdict: CodexVerdict) -> None:
    console = Console(highlight=False, soft_wrap=True)
    colour = {"match": "green", "mismatch": "red"}.get(verdict.verdict.value, "yellow")
    console.print(f"verify-resume (Codex): [bold {colour}]{verdict.verdict.value}[/]")
    for line in (*verdict.notes, *(f"- {difference}" for difference in verdict.differences)):
        console.print(f"  {line}")
    if verdict.original is not None and verdict.compacted is not None:
        console.print(
            f"  {verdict.summary_items} summary item(s), then {verdict.kept_items} "
            f"of the original's {verdict.original.messages} items"
        )
        for name, side in (("original", verdict.original), ("compacted", verdict.compacted)):
            console.print(f"  {name}: {side.messages:,} items, {side.characters:,} characters")


def run_codex(args: argparse.Namespace, verify: VerifySettings, limits: LineLimits) -> ResumeExit:
    """Resume both rollouts in Codex, judge, print; return the exit code."""
    try:
        executable = require_codex(args.codex or (Path(verify.codex) if verify.codex else None))
    except CodexError as exc:
        print(f"compaction: error: {exc}", file=sys.stderr)
        return exc.resume_exit  # not installed: a usage error
    timeout = args.timeout or verify.resume_timeout_seconds
    original = analyze_rollout(args.original.read_bytes(), limits)
    excluded = rollout_exclusions(
        original, original.sweep_sets(), args.compacted.read_bytes(), verify.min_excluded_text_chars
    )
    started = time.perf_counter()
    try:
        verdict = prove_codex_resume(
            args.original,
            args.compacted,
            executable=executable,
            timeout=timeout,
            limits=limits,
            excluded=excluded,
        )
    except CodexError as exc:  # Codex's own exit codes (`installed`): 5 when it failed or timed out
        print(f"compaction: error: {exc}", file=sys.stderr)
        return exc.resume_exit
    check = codex_check_section(verdict, round((time.perf_counter() - started) * 1000, 1))
    if args.json:
        found = CodexFound(path=str(executable), version=reported_version(executable))
        report = CodexVerifyReport(codex=found, **msgspec.structs.asdict(check))
        sys.stdout.buffer.write(json_bytes(report))
        sys.stdout.flush()
    else:
        _print(verdict)
    if verdict.verdict is Verdict.MATCH:
        return ResumeExit.MATCH
    return ResumeExit.NOT_RESUMABLE if verdict.verdict is Verdict.NOT_RESUMABLE else ResumeExit.MISMATCH
