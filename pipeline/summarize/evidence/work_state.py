"""What the session did, read from tool calls (seed 001): file operations, commands, active work, todos.

Everything here is read from tool inputs and results, never from prose. The records of a prior
appendix seed the collector as the oldest records; current evidence supersedes them, newest last.
`appendix` renders these records and reads them back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Final

from pipeline.formats.evidence_tools import MODIFY_FILE_TOOLS, READ_FILE_TOOLS, SHELL, SHELL_TOOLS
from pipeline.summarize.evidence.failures import FailureRecord, run_outcome
from pipeline.summarize.evidence.items import EvidenceItem, EvidenceKind, FrozenJson, bounded_lines
from pipeline.summarize.evidence.references import Reference
from pipeline.summarize.evidence.shell import (
    CommandFacts,
    CommandOutcome,
    FileAction,
    analyze_command,
    background_id,
    outcome_of,
)

__all__ = [
    "ActiveWorkKind",
    "ActiveWorkRecord",
    "CommandRecord",
    "DeterministicState",
    "FileOperation",
    "TodoItem",
    "collect_state",
    "merged_state",
]

READ_TOOLS: Final = {**READ_FILE_TOOLS, "LS": "path", "Grep": "path"}  # a listing or search reads too
SHELL_STATUS_TOOLS: Final = {"BashOutput": "bash_id", "TaskOutput": "task_id", "KillShell": "shell_id"}
SUBAGENT_TOOLS: Final = frozenset({"Task", "Agent"})
FINISHED_STATES: Final = frozenset(
    {"completed", "failed", "killed", "error", "canceled", "cancelled", "deleted"}
)
RUNNING: Final = "running"
LABEL_CHARS: Final = 200  # a work record's label (a command line, a subagent description) is a reminder
_STATUS: Final = re.compile(r"<status>(\w+)</status>")
_TASK_ID: Final = re.compile(r"<task-id>([\w-]+)</task-id>")
_TASK_CREATED: Final = re.compile(r"Task #(\w+) created")
_ASYNC_AGENT: Final = re.compile(r"(?i)async agent launched|running in the background")
_KILLED: Final = re.compile(r"(?i)successfully killed|is not running")


class ActiveWorkKind(StrEnum):
    """Kinds of work that may still be running or pending after the summarized span."""

    BACKGROUND_SHELL = "background-shell"
    SUBAGENT = "subagent"
    TODO = "todo"
    TASK = "task"


@dataclass(frozen=True, slots=True)
class FileOperation:
    """A file the session read or modified, the tools that did it, the lines of those calls."""

    path: str
    action: FileAction
    tools: tuple[str, ...]
    lines: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class CommandRecord:
    """The latest run of one exact shell command and its outcome."""

    command: str
    outcome: CommandOutcome
    lines: tuple[int, ...]
    validation: bool


@dataclass(frozen=True, slots=True)
class ActiveWorkRecord:
    """A background shell, running subagent, unfinished todo or task."""

    kind: ActiveWorkKind
    id: str
    state: str
    label: str
    lines: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TodoItem:
    """One entry of the latest TodoWrite list."""

    content: str
    status: str
    line: int


@dataclass(frozen=True, slots=True)
class DeterministicState:
    """What the appendix and the checkpoint read from tool calls, each oldest first."""

    file_operations: tuple[FileOperation, ...] = ()
    commands: tuple[CommandRecord, ...] = ()
    active_work: tuple[ActiveWorkRecord, ...] = ()
    todos: tuple[TodoItem, ...] = ()
    references: tuple[Reference, ...] = ()  # set by the summarizer (`references`), not by `collect_state`
    failures: tuple[FailureRecord, ...] = ()  # set by the summarizer (`failures`): read once, fitted often

    @property
    def validations(self) -> tuple[CommandRecord, ...]:
        """The commands that test, lint, type-check or build."""
        return tuple(record for record in self.commands if record.validation)


@dataclass(slots=True)
class _Collector:
    """Accumulates records in order; dictionaries re-inserted on update keep newest last."""

    results: Mapping[str, EvidenceItem]
    files: dict[str, FileOperation] = field(default_factory=dict)
    commands: dict[str, CommandRecord] = field(default_factory=dict)
    work: dict[tuple[ActiveWorkKind, str], ActiveWorkRecord] = field(default_factory=dict)
    shells: dict[str, str] = field(default_factory=dict)  # background shell id -> command
    parsed: dict[str, CommandFacts] = field(default_factory=dict)  # sessions repeat their commands
    todos: tuple[TodoItem, ...] = ()

    def file(self, path: str, action: FileAction, tool: str, line: int) -> None:
        old = self.files.pop(path, None)
        if old is None:
            self.files[path] = FileOperation(path, action, (tool,), (line,))
            return
        modified = FileAction.MODIFIED if FileAction.MODIFIED in (old.action, action) else action
        tools = old.tools if tool in old.tools else (*old.tools, tool)
        self.files[path] = FileOperation(path, modified, tools, bounded_lines((*old.lines, line)))

    def command(self, record: CommandRecord) -> None:
        self.commands.pop(record.command, None)
        self.commands[record.command] = record

    def put_work(self, record: ActiveWorkRecord) -> None:
        self.work.pop((record.kind, record.id), None)
        self.work[(record.kind, record.id)] = record

    def state(self) -> DeterministicState:
        return DeterministicState(
            tuple(self.files.values()), tuple(self.commands.values()), tuple(self.work.values()), self.todos
        )


def collect_state(
    items: Sequence[EvidenceItem], prior: Iterable[DeterministicState] = ()
) -> DeterministicState:
    """File operations, commands, active work and todos from `items`, after the `prior` records."""
    results = {item.tool_id: item for item in items if item.kind is EvidenceKind.TOOL_RESULT and item.tool_id}
    collector = _Collector(results)
    for state in prior:
        _seed(collector, state)
    for item in items:
        if item.kind is EvidenceKind.TOOL_CALL:
            _call(collector, item, results.get(item.tool_id or ""))
        elif item.kind is EvidenceKind.OTHER and item.text.lstrip().startswith("<task-notification>"):
            task = _TASK_ID.search(item.text)
            if task is not None:
                _shell_status(collector, task.group(1), item.text, item.line, False)
    return collector.state()


def _seed(collector: _Collector, state: DeterministicState) -> None:
    for operation in state.file_operations:
        collector.files.pop(operation.path, None)
        collector.files[operation.path] = operation
    for record in state.commands:
        collector.command(record)
    for work in state.active_work:
        collector.put_work(work)
        if work.kind is ActiveWorkKind.BACKGROUND_SHELL:
            collector.shells[work.id] = work.label


def _call(collector: _Collector, call: EvidenceItem, result: EvidenceItem | None) -> None:
    name = call.tool_name or ""
    args = call.tool_input
    failed = result is not None and result.is_error
    if name in READ_TOOLS or name in MODIFY_FILE_TOOLS:
        path = _text(args, READ_TOOLS.get(name) or MODIFY_FILE_TOOLS[name])
        if path and not failed:
            action = FileAction.MODIFIED if name in MODIFY_FILE_TOOLS else FileAction.READ
            collector.file(path, action, name, call.line)
    elif name == "Glob":
        pattern = _text(args, "pattern")
        base = _text(args, "path")
        if pattern and not failed:
            path = f"{base.rstrip('/')}/{pattern}" if base else pattern
            collector.file(path, FileAction.READ, name, call.line)
    elif name in SHELL_TOOLS:
        _shell(collector, call, result)
    elif name in SHELL_STATUS_TOOLS:
        shell_id = _text(args, SHELL_STATUS_TOOLS[name])
        if shell_id and result is not None:
            _shell_status(collector, shell_id, result.text, result.line, name == "KillShell")
    elif name in SUBAGENT_TOOLS:
        if result is None or _ASYNC_AGENT.search(result.text):
            label = _text(args, "description") or _text(args, "subagent_type")
            collector.put_work(
                ActiveWorkRecord(
                    ActiveWorkKind.SUBAGENT, call.tool_id or "-", RUNNING, _label(label), (call.line,)
                )
            )
    elif name == "TodoWrite":
        _todos(collector, call)
    elif name in ("TaskCreate", "TaskUpdate"):
        _task(collector, call, result)


def _shell(collector: _Collector, call: EvidenceItem, result: EvidenceItem | None) -> None:
    command = _text(call.tool_input, "command")
    if not command:
        return
    facts = collector.parsed.get(command)
    if facts is None:
        facts = collector.parsed[command] = analyze_command(command)
    if result is None:
        outcome, handle = CommandOutcome.UNKNOWN, None
    else:
        output = result.text  # read once: a tool result's text is read again from the source each time
        outcome = run_outcome(output, result.is_error, validation=facts.validation)
        handle = background_id(output)
    lines = (call.line,) if result is None else (call.line, result.line)
    if outcome is not CommandOutcome.CANCELED:
        for op in facts.file_operations:
            collector.file(op.path, op.action, SHELL, call.line)
    collector.command(CommandRecord(command, outcome, lines, facts.validation))
    if handle is None and call.tool_input.get("run_in_background") is True and call.tool_id:
        handle = call.tool_id
    if handle is not None and outcome is not CommandOutcome.CANCELED:
        collector.shells[handle] = command
        shell = ActiveWorkRecord(ActiveWorkKind.BACKGROUND_SHELL, handle, RUNNING, _label(command), lines)
        collector.put_work(shell)


def _shell_status(collector: _Collector, shell_id: str, text: str, line: int, kill: bool) -> None:
    """A status report on a background shell: finish it, or note it is still running."""
    found = _STATUS.search(text)
    status = found.group(1) if found else ("killed" if kill and _KILLED.search(text) else None)
    key = (ActiveWorkKind.BACKGROUND_SHELL, shell_id)
    if status is None:
        return
    if status not in FINISHED_STATES:
        work = collector.work.get(key)
        if work is not None:
            collector.put_work(replace(work, state=status, lines=bounded_lines((*work.lines, line))))
        return
    collector.work.pop(key, None)
    run = collector.commands.get(collector.shells.pop(shell_id, ""))
    if run is not None:
        outcome = outcome_of(text, False) if status == "completed" else CommandOutcome.FAILED
        if status in ("killed", "canceled", "cancelled"):
            outcome = CommandOutcome.CANCELED
        collector.command(replace(run, outcome=outcome, lines=bounded_lines((*run.lines, line))))


def _todos(collector: _Collector, call: EvidenceItem) -> None:
    raw = call.tool_input.get("todos")
    entries = raw if isinstance(raw, tuple) else ()
    todos = []
    for entry in entries:
        if isinstance(entry, Mapping) and _text(entry, "content"):
            todos.append(TodoItem(_text(entry, "content"), _text(entry, "status") or "pending", call.line))
    collector.todos = tuple(todos)
    for key in [key for key in collector.work if key[0] is ActiveWorkKind.TODO]:
        del collector.work[key]
    for number, todo in enumerate(todos, 1):
        if todo.status == "in_progress":
            record = ActiveWorkRecord(
                ActiveWorkKind.TODO, f"#{number}", todo.status, _label(todo.content), (call.line,)
            )
            collector.put_work(record)


def _task(collector: _Collector, call: EvidenceItem, result: EvidenceItem | None) -> None:
    args = call.tool_input
    if call.tool_name == "TaskCreate":
        created = _TASK_CREATED.search(result.text) if result is not None else None
        if created is not None:
            label = _label(_text(args, "subject") or _text(args, "description"))
            collector.put_work(
                ActiveWorkRecord(ActiveWorkKind.TASK, created.group(1), "pending", label, (call.line,))
            )
        return
    task_id = _text(args, "taskId")
    status = _text(args, "status")
    key = (ActiveWorkKind.TASK, task_id)
    if not task_id or not status or (result is not None and result.is_error):
        return
    if status in FINISHED_STATES:
        collector.work.pop(key, None)
        return
    old = collector.work.get(key)
    label = old.label if old is not None else _label(_text(args, "subject"))
    lines = bounded_lines((*(old.lines if old else ()), call.line))
    collector.put_work(ActiveWorkRecord(ActiveWorkKind.TASK, task_id, status, label, lines))


def _text(mapping: Mapping[str, FrozenJson], key: str) -> str:
    value = mapping.get(key)
    return value if isinstance(value, str) else ""


def _label(text: str) -> str:
    first = text.strip().split("\n", 1)[0]
    return first if len(first) <= LABEL_CHARS else first[:LABEL_CHARS] + "..."


def merged_state(earlier: DeterministicState, later: DeterministicState) -> DeterministicState:
    """The records of two consecutive spans read apart, as one span's: newest last, a file modified
    in either is modified, the latest run of a command and of a work record wins, the later todos.

    What one span's reading links across the seam is not linked: a background shell started in
    `earlier` and finished in `later` stays running (a task alike), and a todo list emptied in
    `later` is not seen.
    References and failures are the caller's.
    """
    files = {operation.path: operation for operation in earlier.file_operations}
    for operation in later.file_operations:
        old = files.pop(operation.path, None)
        files[operation.path] = operation if old is None else _merged_file(old, operation)
    commands = {record.command: record for record in earlier.commands}
    for record in later.commands:
        commands.pop(record.command, None)
        commands[record.command] = record
    rewritten = bool(later.todos) or any(e.kind is ActiveWorkKind.TODO for e in later.active_work)
    # a todo list written later replaces the earlier one, its open items with it
    work = {
        (entry.kind, entry.id): entry
        for entry in earlier.active_work
        if not (rewritten and entry.kind is ActiveWorkKind.TODO)
    }
    for entry in later.active_work:
        before = work.pop((entry.kind, entry.id), None)
        work[(entry.kind, entry.id)] = entry if before is None else _merged_work(before, entry)
    todos = later.todos or earlier.todos
    return DeterministicState(tuple(files.values()), tuple(commands.values()), tuple(work.values()), todos)


def _merged_work(old: ActiveWorkRecord, new: ActiveWorkRecord) -> ActiveWorkRecord:
    """A work record updated in a later span: its new state, the label it was created with (an
    update may name none), every line."""
    return replace(new, label=new.label or old.label, lines=bounded_lines((*old.lines, *new.lines)))


def _merged_file(old: FileOperation, new: FileOperation) -> FileOperation:
    action = FileAction.MODIFIED if FileAction.MODIFIED in (old.action, new.action) else new.action
    tools = (*old.tools, *(tool for tool in new.tools if tool not in old.tools))
    return FileOperation(new.path, action, tools, bounded_lines((*old.lines, *new.lines)))
