"""Extraction: the facts of a summarized span a resumed agent should still know, read from its records.

Read from format-neutral evidence (human text, assistant text, tool calls with their names and
inputs, tool results with their error flags), so a format adapter only has to produce evidence:

- `human-instruction`: every human message, without the context the client adds to it
  (`<system-reminder>`, `<ide_...>` blocks).
- `file-modified`, `file-read`: every path a successful file tool call (Read, Edit, Write, ...) or
  shell command (as a shell reads it: `cat`, `sed -i`, redirections) read or modified; a path
  both read and modified is `file-modified`. Search scopes (Grep, Glob, LS) are not files read.
- `command`: every shell command, once, with the outcome of its latest run.
- `error`: every failed call (an error flag, a non-zero exit status, test failures in a test
  run's output, a rejection or a refused permission), with the line that tells it apart, what it
  was about (a file tool's path, a fetch's URL), and the later action that resolved it, if one
  did (the same command passing, the same file handled by the same kind of tool, the same call
  succeeding), looked for in the rest of the span and in the kept tail (`later`).
- `identifier`: URLs, issue and ticket numbers (`#123`, `ABC-123`), versions (`v1.2`, `1.2.3`)
  and ports in human text, assistant text and tool inputs (file contents written are not read).
- `last-state`: what the work was at the cut: the span's last assistant message, the open todos
  of its latest todo list, and the background shells, subagents and tasks still open at the end
  of the chain (work the kept tail closed, or a todo list it replaced, is not probed).

Prior summaries are not probed: their facts were probed when they were written.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from pipeline.fidelity.outcome import call_outcome, error_signature, rejection_reason
from pipeline.fidelity.probe_value import Probe, ProbeClass, Resolution
from pipeline.fidelity.state import identifier_probes, state_probes
from pipeline.fidelity.text import human_text, identity
from pipeline.formats.evidence_tools import MODIFY_FILE_TOOLS, READ_FILE_TOOLS, SHELL_TOOLS, TARGET_KEYS
from pipeline.summarize.evidence.items import EvidenceItem, EvidenceKind, FrozenJson
from pipeline.summarize.evidence.shell import CommandFacts, CommandOutcome, FileAction, analyze_command

__all__ = ["MODIFY_FILE_TOOLS", "READ_FILE_TOOLS", "SHELL_TOOLS", "extract_probes"]

_GLOB: Final = re.compile(r"[*?\[]")
_DONE: Final = (CommandOutcome.PASSED, CommandOutcome.UNKNOWN)  # calls that read or wrote their files


@dataclass(frozen=True, slots=True)
class _Call:
    """A tool call and the result that answered it (None: the records hold none)."""

    call: EvidenceItem
    result: EvidenceItem | None
    outcome: CommandOutcome
    facts: CommandFacts | None  # a span's shell command's parse (shared by its repeats), else None
    in_span: bool

    @property
    def name(self) -> str:
        return self.call.tool_name or ""

    @property
    def command(self) -> str:
        value = self.call.tool_input.get("command")
        return value if isinstance(value, str) and self.name in SHELL_TOOLS else ""

    @property
    def target(self) -> str:
        return next((v for k in TARGET_KEYS if isinstance(v := self.call.tool_input.get(k), str) and v), "")


def _calls(span: Sequence[EvidenceItem], later: Sequence[EvidenceItem]) -> list[_Call]:
    """Every call with its result and outcome, the span's first; the span's shell commands parsed.

    The two sequences may come from two files (a source's span, a candidate's kept records): their
    line numbers are not compared, and a result answers a call of its own sequence only.
    """
    return [*_calls_of(span, in_span=True), *_calls_of(later, in_span=False)]


def _calls_of(items: Sequence[EvidenceItem], *, in_span: bool) -> list[_Call]:
    results = {item.tool_id: item for item in items if item.kind is EvidenceKind.TOOL_RESULT and item.tool_id}
    parsed: dict[str, CommandFacts] = {}  # sessions repeat their commands: each is lexed once

    def facts_of(command: str) -> CommandFacts:
        return parsed.get(command) or parsed.setdefault(command, analyze_command(command))

    calls = []
    for item in items:
        if item.kind is not EvidenceKind.TOOL_CALL:
            continue
        result = results.get(item.tool_id) if item.tool_id else None
        command = item.tool_input.get("command")
        shell = item.tool_name in SHELL_TOOLS and isinstance(command, str)
        command = command if isinstance(command, str) else ""
        text = result.text if result is not None else None
        error = result.is_error if result is not None else False
        test_run = (lambda command=command: facts_of(command).validation) if shell else None
        outcome = call_outcome(text, error, test_run=test_run)
        reads_files = shell and in_span and outcome in _DONE  # else its files are not read
        facts = facts_of(command) if reads_files else None
        calls.append(_Call(item, result, outcome, facts, in_span))
    return calls


def extract_probes(span: Sequence[EvidenceItem], later: Sequence[EvidenceItem] = ()) -> tuple[Probe, ...]:
    """Every probe of the span (its items in order); `later` is what followed it, for resolutions."""
    calls = _calls(span, later)
    mine = [call for call in calls if call.in_span]
    return (
        *_human_probes(span),
        *_file_probes(mine),
        *_command_probes(mine),
        *_error_probes(calls),
        *identifier_probes(span),
        *state_probes(span, later),
    )


def _human_probes(span: Sequence[EvidenceItem]) -> Iterator[Probe]:
    for item in span:
        if item.kind is EvidenceKind.HUMAN_PROMPT and (text := human_text(item.text)):
            yield Probe(ProbeClass.HUMAN, item.line, text)


def _file_operations(call: _Call) -> Iterator[tuple[str, FileAction]]:
    if call.outcome not in _DONE:
        return  # a failed edit modified nothing; a refused read read nothing
    name = call.name
    key = READ_FILE_TOOLS.get(name) or MODIFY_FILE_TOOLS.get(name)
    if key is not None:
        path = call.call.tool_input.get(key)
        if isinstance(path, str) and path:
            yield path, FileAction.MODIFIED if name in MODIFY_FILE_TOOLS else FileAction.READ
    elif call.facts is not None:
        for op in call.facts.file_operations:
            yield op.path, op.action


def _file_probes(calls: Sequence[_Call]) -> Iterator[Probe]:
    latest: dict[str, tuple[FileAction, int]] = {}
    for call in calls:
        for path, action in _file_operations(call):
            if _GLOB.search(path):
                continue  # a pattern, not a file
            before = latest.pop(path, None)
            modified = action is FileAction.MODIFIED or (
                before is not None and before[0] is FileAction.MODIFIED
            )
            latest[path] = (FileAction.MODIFIED if modified else FileAction.READ, call.call.line)
    for path, (action, line) in sorted(latest.items(), key=lambda entry: entry[1][1]):
        klass = ProbeClass.FILE_MODIFIED if action is FileAction.MODIFIED else ProbeClass.FILE_READ
        yield Probe(klass, line, path)


def _command_probes(calls: Sequence[_Call]) -> Iterator[Probe]:
    latest: dict[str, _Call] = {}
    for call in calls:
        if call.command.strip():
            key = identity(call.command)
            latest.pop(key, None)
            latest[key] = call
    for key, call in sorted(latest.items(), key=lambda entry: entry[1].call.line):
        yield Probe(ProbeClass.COMMAND, call.call.line, key, outcome=call.outcome)


def _error_probes(calls: Sequence[_Call]) -> Iterator[Probe]:
    probes: dict[str, Probe] = {}
    for position, call in enumerate(calls):
        if not call.in_span or call.result is None:
            continue
        if call.outcome not in (CommandOutcome.FAILED, CommandOutcome.CANCELED):
            continue
        probe = _error_probe(call, calls[position + 1 :])
        probes.pop(probe.anchor, None)  # the same error again: its latest occurrence decides
        probes[probe.anchor] = probe
    yield from sorted(probes.values(), key=lambda probe: probe.line)


def _error_probe(call: _Call, after: Sequence[_Call]) -> Probe:
    assert call.result is not None
    text, line = call.result.text, call.result.line
    command = identity(call.command) if call.command else ""
    if call.outcome is CommandOutcome.CANCELED:
        target = command or call.target or call.name
        return Probe(ProbeClass.ERROR, line, rejection_reason(text), "rejected", call.outcome, target)
    signature = error_signature(text)
    kind = "failed-command" if command else "tool-error"
    target = call.target
    if not signature and not command:
        target = target or call.name
    return Probe(
        ProbeClass.ERROR, line, signature, kind, call.outcome, target, command, _resolution(call, after)
    )


def _resolution(failed: _Call, after: Sequence[_Call]) -> Resolution | None:
    """The first later call that did what the failed one could not."""
    for call in after:
        if call.outcome is not CommandOutcome.PASSED:
            continue
        if failed.command:
            if call.command and identity(call.command) == identity(failed.command):
                return Resolution(command=identity(call.command))
        elif failed.name in READ_FILE_TOOLS or failed.name in MODIFY_FILE_TOOLS:
            family = MODIFY_FILE_TOOLS if failed.name in MODIFY_FILE_TOOLS else READ_FILE_TOOLS
            if call.name in family and call.target == failed.target:
                action = FileAction.MODIFIED if family is MODIFY_FILE_TOOLS else FileAction.READ
                return Resolution(path=failed.target, action=action)
        elif call.name == failed.name and _same_input(call.call.tool_input, failed.call.tool_input):
            return Resolution(tool=call.name)
    return None


def _same_input(first: Mapping[str, FrozenJson], second: Mapping[str, FrozenJson]) -> bool:
    return dict(first) == dict(second)
