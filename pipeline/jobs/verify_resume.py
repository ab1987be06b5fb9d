"""`compaction verify-resume ORIGINAL COMPACTED`: does the session's own client resume the
compaction correctly?

The judge is the one of the original's detected format (`agents/registry.py`): an active chain's
(`agents/chain_judge.ChainJudge`) or a context format's (`agents/protocol.ContextJudge`). Each
feeds the one verdict this command prints (`PairVerdict`). A file of no processed format has no
judge: another agent's session is refused as `unsupported-format` naming the agent, a file that
is nobody's session as `not-a-transcript` saying what it holds (both usage errors, exit 2).

Resumes both files in the client against a loopback capture server, compares the two contexts,
prints the verdict and what the client sends before and after, and exits 0 only on a match, with
the client's own code when it failed or timed out (its `JudgeError`'s `resume_exit`). With
`--json` the verdict goes to stdout as one JSON document instead: the report's `resume_check`
section, with the client that judged under the judge's own key.

The texts of the original's excluded records (its sweep partition) must not be sent from the
compacted file either (each judge's `excluded`).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol, cast

import msgspec
from msgspec import UnsetType
from rich.console import Console
from rich.table import Table

from pipeline.agents.chain_judge import ChainJudge, SentExclusions
from pipeline.agents.protocol import ContextFormat
from pipeline.agents.registry import CHAIN_FORMATS, chain_judge, context_format
from pipeline.core.partition import partition_lines
from pipeline.core.topology.select import AUTO
from pipeline.errors import NotARegularFile, UnreadableSource
from pipeline.formats.detect import detect_format, why_not_a_transcript
from pipeline.formats.line_guard import LineLimits
from pipeline.installed import JudgeError, ResumeJudge, reported_version
from pipeline.jobs.front import Analysis, open_source
from pipeline.read.load import SourceBytes, read_source
from pipeline.report.render import json_bytes
from pipeline.report.resume_check import ResumeCheckSection, SizeSection, resume_check_section
from pipeline.report.sections import Section
from pipeline.settings import VerifySettings
from pipeline.vocabulary import FindingCode, ResumeExit, SourceFormat, Verdict

__all__ = ["JudgeFound", "PairVerdict", "original_exclusions", "run", "verify_report_type"]


class JudgeFound(Section, frozen=True, kw_only=True):
    """The client that judged: where it is, and the version it reports."""

    path: str
    version: str | None


@functools.cache
def verify_report_type(key: str) -> Callable[..., ResumeCheckSection]:
    """What `verify-resume --json` prints: the verdict, and which client judged under the judge's
    own key (`claude_code` for Claude Code, `codex` for Codex rollouts, as its flag)."""
    made = msgspec.defstruct(
        f"VerifyReport_{key}", [(key, JudgeFound)], bases=(ResumeCheckSection,), frozen=True, kw_only=True
    )
    return cast("Callable[..., ResumeCheckSection]", made)


@dataclass(frozen=True, slots=True)
class PairVerdict:
    """A judge's verdict on a pair as `verify-resume` prints it, whichever judge gave it: the
    report section and the client that judged (`--json`), and, for the text, how many of the
    client's units (`unit`: Claude Code's content blocks, another client's items) the original
    sent (None: it was not resumed)."""

    client: str  # its name, as messages say it
    key: str  # the key the JSON names the client under
    found: JudgeFound
    check: ResumeCheckSection
    unit: str
    original_units: int | None

    def document(self) -> ResumeCheckSection:
        """The `--json` document: the section, and the client under its key."""
        fields = msgspec.structs.asdict(self.check)
        return verify_report_type(self.key)(**{self.key: self.found}, **fields)


@dataclass(frozen=True, slots=True)
class _Pair:
    """The pair and how to judge it: the files, the original's bytes, the run's limits."""

    original: SourceBytes
    compacted: Path
    executable: Path
    timeout: float
    verify: VerifySettings
    limits: LineLimits


def _elapsed_ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)


class _PairJudge(Protocol):
    """A format's judge as this command runs it: its client, and the verdict on a pair."""

    @property
    def client(self) -> ResumeJudge: ...

    def judge(self, pair: _Pair) -> PairVerdict:
        """Resume both files and judge; raises the client's own `JudgeError`s."""
        ...


def _exclusions(original: SourceBytes, min_chars: int, limits: LineLimits) -> SentExclusions:
    """What finds the excluded texts a compacted context sends, the source partitioned as a sweep
    does it (by its chain format's judge)."""
    label = original.path.name
    opened = open_source(label, original, AUTO, command="verify-resume", per_code=1, limits=limits)
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


def original_exclusions(original: Path, min_chars: int, limits: LineLimits) -> SentExclusions:
    """`_exclusions` of a file of an active-chain format."""
    return _exclusions(read_source(original), min_chars, limits)


@dataclass(frozen=True, slots=True)
class _ChainPair:
    """An active chain's judge: its client resumes both files, blocks compared."""

    chain: ChainJudge

    @property
    def client(self) -> ResumeJudge:
        return self.chain.client

    def judge(self, pair: _Pair) -> PairVerdict:
        excluded = _exclusions(pair.original, pair.verify.min_excluded_text_chars, pair.limits)
        started = time.perf_counter()
        verdict = self.chain.prove(
            pair.original.path,
            pair.compacted,
            executable=pair.executable,
            timeout=pair.timeout,
            excluded=excluded,
        )
        check = resume_check_section(verdict, _elapsed_ms(started))
        found = JudgeFound(path=str(pair.executable), version=self.chain.version(pair.executable))
        blocks = len(verdict.original.blocks) if verdict.original is not None else None
        # A chain judge's key is its format (`claude_code`), a context judge's its flag: each the key
        # its reports have always had.
        key = self.client.source_format.value.replace("-", "_")
        return PairVerdict(self.client.name, key, found, check, "block", blocks)


@dataclass(frozen=True, slots=True)
class _ContextPair:
    """A context format's judge: its client resumes both files, items compared."""

    agent: ContextFormat

    @property
    def client(self) -> ResumeJudge:
        return self.agent.judge.client

    def judge(self, pair: _Pair) -> PairVerdict:
        judge, path = self.agent.judge, pair.original.path
        original = self.agent.read(pair.original.data, path, pair.limits)
        candidate = pair.compacted.read_bytes()
        min_chars = pair.verify.min_excluded_text_chars
        excluded = judge.excluded(original, original.sweep_sets(), candidate, min_chars)
        started = time.perf_counter()
        judged = judge.prove(
            path,
            pair.compacted,
            executable=pair.executable,
            timeout=pair.timeout,
            limits=pair.limits,
            excluded=excluded,
            summaries=None,
        )
        check = judged.section(_elapsed_ms(started))
        found = JudgeFound(path=str(pair.executable), version=reported_version(pair.executable))
        key = self.client.flag.lstrip("-") or self.agent.format.value.replace("-", "_")
        sent = None if isinstance(check.sent, UnsetType) else check.sent.original
        return PairVerdict(self.client.name, key, found, check, "item", sent.messages if sent else None)


def _pair_judge(source_format: SourceFormat) -> _PairJudge | None:
    """The judge of a processed format; None for any other."""
    agent = context_format(source_format)
    if agent is not None:
        return _ContextPair(agent)
    return _ChainPair(chain_judge(source_format)) if source_format in CHAIN_FORMATS else None


def _no_judge(path: Path, source_format: SourceFormat, data: bytes) -> str:
    """What a file of no processed format is, as a sweep reports it: another agent's session
    (`unsupported-format` naming the agent), or nobody's (`not-a-transcript`, what it holds)."""
    if source_format in (SourceFormat.EMPTY, SourceFormat.UNKNOWN):
        what = f"{FindingCode.NOT_A_TRANSCRIPT.value}: {why_not_a_transcript(data).value}"
        return f"{path} is {what} (no agent's session: there is nothing to resume)"
    what = f"{FindingCode.UNSUPPORTED_FORMAT.value}: {source_format.value}"
    return f"{path} is {what} (an agent whose sessions this tool does not process yet: no judge resumes it)"


def _sizes(check: ResumeCheckSection) -> list[tuple[str, SizeSection]]:
    if isinstance(check.sent, UnsetType):
        return []
    sides = (("original", check.sent.original), ("compacted", check.sent.compacted))
    return [(name, size) for name, size in sides if size is not None]


def _table(client: str, sizes: list[tuple[str, SizeSection]]) -> Table:
    table = Table(title=f"what {client} sends", title_justify="left")
    for column in ("", "messages", "characters", "est. tokens"):
        table.add_column(column, justify="right" if column else "left")
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


def _print(verdict: PairVerdict) -> None:
    """The verdict, its notes and differences, then what the client sent of each file."""
    check = verdict.check
    console = Console(highlight=False, soft_wrap=True)
    colour = {"match": "green", "mismatch": "red"}.get(check.verdict.value, "yellow")
    console.print(f"verify-resume: [bold {colour}]{check.verdict.value}[/]")
    notes = check.notes if isinstance(check.notes, list) else []
    differences = check.differences if isinstance(check.differences, list) else []
    for line in (*notes, *(f"- {difference}" for difference in differences)):
        console.print(f"  {line}")
    if verdict.original_units is not None:
        unit = verdict.unit
        console.print(
            f"  {check.summary_blocks} summary {unit}(s), then {check.kept_blocks} "
            f"of the original's {verdict.original_units} {unit}s"
        )
        console.print(_table(verdict.client, _sizes(check)))


def _usage(message: str) -> ResumeExit:
    print(f"compaction: error: {message}", file=sys.stderr)
    return ResumeExit.USAGE


def _failed(exc: JudgeError) -> ResumeExit:
    """The client's own exit (`installed`): not found is a usage error, a failure its own code."""
    print(f"compaction: error: {exc}", file=sys.stderr)
    return exc.resume_exit


def _named(client: ResumeJudge, args: argparse.Namespace, verify: VerifySettings, judged: str | None) -> str:
    """The client the user named: `--judge FORMAT=PATH` (`judged`), its own flag, its config; ""
    for none."""
    own = getattr(args, client.flag.lstrip("-"), None) if client.flag else None
    return judged or (str(own) if own else client.named(verify))


_EXITS: Final = {Verdict.MATCH: ResumeExit.MATCH, Verdict.NOT_RESUMABLE: ResumeExit.NOT_RESUMABLE}


def run(
    args: argparse.Namespace, verify: VerifySettings, limits: LineLimits, judges: Mapping[str, str]
) -> ResumeExit:
    """Run the check; print it; return the exit code (`judges`: the clients named by format)."""
    for path in (args.original, args.compacted):
        if not path.is_file():
            return _usage(f"not a file: {path}")
    try:
        original = read_source(args.original)
    except (NotARegularFile, UnreadableSource) as exc:
        return _usage(str(exc))
    source_format = detect_format(original.data, original.path)
    pair_judge = _pair_judge(source_format)
    if pair_judge is None:
        return _usage(_no_judge(args.original, source_format, original.data))
    client = pair_judge.client
    named = _named(client, args, verify, judges.get(source_format.value))
    try:
        executable = client.locate(Path(named) if named else None)
        timeout = args.timeout or verify.resume_timeout_seconds
        pair = _Pair(original, args.compacted, executable, timeout, verify, limits)
        # Two resumes take seconds: say what is happening on an interactive stderr.
        waiting = Console(stderr=True).status(f"resuming both files in {client.name} (offline)")
        with waiting if sys.stderr.isatty() else contextlib.nullcontext():
            verdict = pair_judge.judge(pair)
    except JudgeError as exc:
        return _failed(exc)
    if args.json:
        sys.stdout.buffer.write(json_bytes(verdict.document()))
        sys.stdout.flush()
    else:
        _print(verdict)
    return _EXITS.get(verdict.check.verdict, ResumeExit.MISMATCH)
