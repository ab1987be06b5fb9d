"""The background shells and agents Claude Code tells the model were left unfinished on resume.

On resume Claude Code 2.1.332 scans the chain it loaded (from its latest compact boundary) for
background shells: a tool result whose `toolUseResult` names a `backgroundTaskId` (with its
`stdout`) or a monitor's `taskId` (with `timeoutMs`), and a `task_status` attachment of a running
`local_bash` task, which its own compaction writes for every shell still running. A shell that a
later `<task-notification>` names (in a user record or a queued prompt, or through the
`__orphan_summary__:shell` marker of an earlier resume's notice) is done, and so is one a
TaskStop or KillShell call stopped; of the rest it says "2 background shell command tasks didn't
finish before the previous session ended" with their ids (one shell: with its tool_use id).

A compaction that summarizes the call starting such a shell would make Claude Code say nothing.
So the candidate carries, after its summary, one `task_status` record per such shell started in
the summarized span, as Claude Code's own compaction writes it, and Claude Code derives the same
notice. It also renders each record as a reminder that the shell is still running, which is what
a model reads after Claude Code's own compaction; the gate accepts that reminder only for a shell
the candidate declares (`carriedBackgroundShells`). Read off build 2.1.332 (its resume scan, its
orphan notices, its compaction's task attachments); checked against it in
`tests/jobs/test_resume_gate_state.py`.

Background agents are found by the same scan: a user record whose `toolUseResult` says
`async_launched` with an `agentId` and a `description` starts one (Claude Code reads the result
off any user record whose content is a list, with or without a tool_result in it), and a
`<task-notification>` naming it (or the `__orphan_summary__:agent` marker) ends it; of the rest
Claude Code says `Background agent "<description>" didn't finish before the previous session
ended` (several: one notice naming them all). Its own compaction writes a `task_status` of a
running `local_agent`, from which that notice is never derived again. So the candidate carries,
after the shells' records, one user record per such agent the summarized span launched: its
content an empty list (Claude Code sends no message for it), its `toolUseResult` the fields of the
launch result the scan reads (`LAUNCH_FIELDS`), so Claude Code derives the same notice. A
re-dispatch (`resumedAgentId`) is read only beside a tool_result, which no carried record can
hold, so an agent re-dispatched within the summarized span is not carried (its notice is worded
from the re-dispatch); one re-dispatched in the kept part is. Checked against
build 2.1.332 in `tests/jobs/test_resume_gate_reminders.py`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Final

from pipeline.formats.claude_code.content import parse_object
from pipeline.formats.claude_code.records import declared_by_ours

__all__ = [
    "COMMAND_CHARS",
    "DESCRIPTION_CHARS",
    "LAUNCH_FIELDS",
    "BackgroundAgent",
    "BackgroundShell",
    "LaunchValue",
    "declared_shells",
    "may_start_shells",
    "task_status",
    "unfinished_agents",
    "unfinished_shells",
]

STOP_TOOLS: Final = frozenset({"TaskStop", "KillShell", "KillBash"})
LAUNCH_TOOLS: Final = frozenset({"Bash", "Monitor"})
DESCRIPTION_CHARS: Final = 200  # Claude Code bounds a task_status description to this many UTF-16 units
COMMAND_CHARS: Final = 500  # ... and its shell command to this many
ORPHAN_MARKER: Final = "__orphan_summary"  # ids Claude Code's own notices use as scan markers
SHELLS_NOTIFIED: Final = "__orphan_summary__:shell"  # every shell known so far was reported
AGENTS_NOTIFIED: Final = "__orphan_summary__:agent"  # ... every agent known so far
LIVE_PREFIX: Final = "__orphan_summary_live__:"  # ... but this one, still running then
# Cheap byte filters: a line holding none of these plays no part in the scan.
_MARKERS: Final = (
    b'"backgroundTaskId"',
    b'"timeoutMs"',
    b'"task_status"',
    b"<task-notification>",
    b'"task_id"',
    b'"async_launched"',
    b'"resumedAgentId"',
    *(f'"{name}"'.encode() for name in sorted(LAUNCH_TOOLS | STOP_TOOLS)),
)
_STARTS: Final = (
    b'"backgroundTaskId"',
    b'"timeoutMs"',
    b'"task_status"',
    b'"async_launched"',
)  # starts a task
LAUNCHED: Final = "async_launched"  # the status of a background agent's launch result
# The fields of a launch result Claude Code's resume scan reads (2.1.332), which a candidate carries.
LAUNCH_FIELDS: Final = (
    "isAsync",
    "status",
    "agentId",
    "description",
    "outputFile",
    "canReadOutputFile",
    "canContinueAgent",
)
_TASK_ID: Final = re.compile(r"<task-id>([^<]+)</task-id>")
_ENTITY: Final = re.compile(r"&(?:amp|lt|gt);")  # the escapes Claude Code undoes in a notice's ids
_ENTITIES: Final = {"&amp;": "&", "&lt;": "<", "&gt;": ">"}
_CONTROL: Final = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")
_SPACE: Final = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class BackgroundShell:
    """A background shell no record reports finished: its ids, how it ran, what it ran, and the
    1-based line that first started it (a tool result, or a `task_status` record)."""

    task_id: str
    tool_use_id: str
    kind: str  # "bash", or "monitor"
    description: str
    command: str
    line: int


LaunchValue = str | int | float | bool  # a launch field's scalar value, as JSON holds it


@dataclass(frozen=True, slots=True)
class BackgroundAgent:
    """A background agent no record reports finished: its id, the launch result's fields the
    resume scan reads (`LAUNCH_FIELDS`, as the source holds them; a null or one that is no scalar
    reads to the scan as absent and is left out), the 1-based line of that result, and of the
    latest result that re-dispatched it (a `SendMessage` naming `resumedAgentId`), if any."""

    agent_id: str
    launch: tuple[tuple[str, LaunchValue], ...]
    line: int
    redispatched_at: int | None = None

    def launch_result(self) -> dict[str, LaunchValue]:
        """The launch result the record a candidate writes for the agent holds (`toolUseResult`)."""
        return dict(self.launch)


@dataclass(slots=True)
class _Scan:
    """What the scan has learnt so far (private to `unfinished_shells` and `unfinished_agents`)."""

    inputs: dict[str, tuple[str, str]] = field(default_factory=dict)  # tool_use id -> description, command
    stop_calls: set[str] = field(default_factory=set)
    started: dict[str, BackgroundShell] = field(default_factory=dict)  # in first-start order
    done: set[str] = field(default_factory=set)
    agents: dict[str, BackgroundAgent] = field(default_factory=dict)  # in first-launch order
    agents_done: set[str] = field(default_factory=set)
    redispatched: dict[str, int] = field(default_factory=dict)  # agent id -> line of its latest re-dispatch

    def start(self, shell: BackgroundShell) -> None:
        if shell.task_id.startswith(ORPHAN_MARKER):
            return
        first = self.started.get(shell.task_id)
        line = first.line if first is not None else shell.line
        self.started[shell.task_id] = BackgroundShell(
            shell.task_id, shell.tool_use_id, shell.kind, shell.description, shell.command, line
        )

    def notice(self, text: str) -> None:
        """A task notification: every task it names is done (a marker: every shell known so far)."""
        if "<task-notification>" not in text or "<status>" not in text:
            return
        ids = [_ENTITY.sub(lambda m: _ENTITIES[m.group(0)], found) for found in _TASK_ID.findall(text)]
        live = {task.removeprefix(LIVE_PREFIX) for task in ids if task.startswith(LIVE_PREFIX)}
        named = [task for task in ids if not task.startswith(LIVE_PREFIX)]
        self.done.update(named)
        self.agents_done.update(named)
        if SHELLS_NOTIFIED in named:
            self.done.update(set(self.started) - live)
        if AGENTS_NOTIFIED in named:
            self.agents_done.update(set(self.agents) - live)

    def launch(self, number: int, result: dict[str, Any], answered: bool) -> None:
        """A launch result of a background agent (Claude Code reads it without its tool_result), or
        a re-dispatch of one (read only beside a tool_result that is no error: `answered`)."""
        agent, resumed = result.get("agentId"), result.get("resumedAgentId")
        if answered and isinstance(resumed, str) and result.get("success") is True:
            self.agents_done.discard(resumed)  # a re-dispatch reopens it, with a notice of its own
            self.redispatched[resumed] = number
        if result.get("status") != LAUNCHED or not isinstance(agent, str) or agent.startswith(ORPHAN_MARKER):
            return
        if not isinstance(result.get("description"), str):
            return
        fields = tuple(
            (name, value)
            for name in LAUNCH_FIELDS
            if isinstance(value := result.get(name), str | int | float | bool)
        )
        first = self.agents.get(agent)
        self.agents[agent] = BackgroundAgent(agent, fields, first.line if first is not None else number)


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    items = content if isinstance(content, list) else ()
    return "\n".join(_str(item.get("text")) if isinstance(item, dict) else "" for item in items)


def _voice(record: dict[str, Any]) -> bool:
    origin = record.get("origin")
    return isinstance(origin, dict) and origin.get("kind") == "voice-call"


def _calls(scan: _Scan, content: Any) -> None:
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict) or block.get("type") != "tool_use":
            continue
        if not isinstance(block.get("id"), str):
            continue
        name, given = block.get("name"), block.get("input")
        given = given if isinstance(given, dict) else {}
        if name in STOP_TOOLS:
            scan.stop_calls.add(block["id"])
        elif name in LAUNCH_TOOLS:
            command = _str(given.get("command"))
            scan.inputs[block["id"]] = (_str(given.get("description")) or command, command)


def _results(scan: _Scan, number: int, content: Any, result: dict[str, Any]) -> None:
    """Tool results of one user record (`result` is its `toolUseResult`)."""
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict) or block.get("type") != "tool_result" or block.get("is_error"):
            continue
        call = _str(block.get("tool_use_id"))
        task, kind = _launched(result)
        if task is not None:
            description, command = scan.inputs.get(call, ("", ""))
            scan.start(BackgroundShell(task, call, kind, description, command, number))
        stopped, stopped_type = result.get("task_id"), result.get("task_type")
        if call in scan.stop_calls and isinstance(stopped, str) and isinstance(stopped_type, str):
            scan.done.add(stopped)


def _launched(result: dict[str, Any]) -> tuple[str | None, str]:
    task, timeout = result.get("taskId"), result.get("timeoutMs")
    if isinstance(result.get("backgroundTaskId"), str) and isinstance(result.get("stdout"), str):
        return result["backgroundTaskId"], "bash"
    if isinstance(task, str) and isinstance(timeout, int | float) and not isinstance(timeout, bool):
        return task, "monitor"
    return None, ""


def _attachment(scan: _Scan, number: int, record: dict[str, Any]) -> None:
    attachment = record.get("attachment")
    if not isinstance(attachment, dict):
        return
    kind = attachment.get("type")
    if kind == "queued_command" and isinstance(attachment.get("prompt"), str):
        if not _voice(attachment):
            scan.notice(attachment["prompt"])
        return
    shell, task = attachment.get("shell"), attachment.get("taskId")
    running = attachment.get("taskType") == "local_bash" and attachment.get("status") == "running"
    if kind == "task_status" and running and isinstance(shell, dict) and isinstance(task, str):
        command = _str(shell.get("command"))
        scan.start(
            BackgroundShell(
                task,
                _str(shell.get("toolUseId")),
                _str(shell.get("kind")) or "bash",
                _str(attachment.get("description")) or command,
                command,
                number,
            )
        )


def _answers(block: Any) -> bool:
    """A tool_result that is no error (what Claude Code reads a re-dispatch beside)."""
    return isinstance(block, dict) and block.get("type") == "tool_result" and not block.get("is_error")


def _record(scan: _Scan, number: int, record: dict[str, Any]) -> None:
    kind, message = record.get("type"), record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if kind == "assistant":
        _calls(scan, content)
    elif kind == "user":
        scan.notice("" if _voice(record) else _text(content))
        if isinstance(record.get("toolUseResult"), dict) and isinstance(content, list):
            _results(scan, number, content, record["toolUseResult"])
            scan.launch(number, record["toolUseResult"], any(_answers(block) for block in content))
    elif kind == "attachment":
        _attachment(scan, number, record)


def may_start_shells(data: bytes) -> bool:
    """Whether a transcript holds anything that starts a background shell or agent (most do not:
    their chain need not be scanned)."""
    return any(marker in data for marker in _STARTS)


def _scanned(rows: Iterable[tuple[int, bytes]]) -> _Scan:
    scan = _Scan()
    for number, line in rows:
        if any(marker in line for marker in _MARKERS) and (record := parse_object(line)) is not None:
            _record(scan, number, record)
    return scan


def unfinished_shells(rows: Iterable[tuple[int, bytes]]) -> tuple[BackgroundShell, ...]:
    """Of a loaded chain's (line number, line) rows, root first, the background shells Claude Code
    reports unfinished on resume, in the order it names them."""
    scan = _scanned(rows)
    return tuple(shell for task, shell in scan.started.items() if task not in scan.done)


def unfinished_agents(rows: Iterable[tuple[int, bytes]]) -> tuple[BackgroundAgent, ...]:
    """Of a loaded chain's rows, root first, the background agents Claude Code reports unfinished
    on resume, in the order it names them, each with the line that last re-dispatched it."""
    scan = _scanned(rows)
    return tuple(
        replace(agent, redispatched_at=scan.redispatched.get(agent_id))
        for agent_id, agent in scan.agents.items()
        if agent_id not in scan.agents_done
    )


def _bounded(text: str, limit: int) -> str:
    """Text as Claude Code bounds it in a task_status record: control characters dropped, spaces
    collapsed, cut to `limit` UTF-16 units (never inside a surrogate pair) with the count cut."""
    text = _SPACE.sub(" ", _CONTROL.sub("", text)).strip()
    units = text.encode("utf-16-le", "surrogatepass")
    total = len(units) // 2
    if total <= limit:
        return text
    cut = limit
    if 0xD800 <= int.from_bytes(units[2 * cut - 2 : 2 * cut], "little") <= 0xDBFF:
        cut -= 1  # the pair's second half lies beyond the limit
    kept = units[: 2 * cut].decode("utf-16-le", "surrogatepass")
    return f"{kept}\u2026 [+{total - cut} chars]"


def task_status(shell: BackgroundShell) -> dict[str, Any]:
    """The `task_status` attachment Claude Code's compaction writes for a running shell."""
    return {
        "type": "task_status",
        "taskId": shell.task_id,
        "taskType": "local_bash",
        "description": _bounded(shell.description or shell.task_id, DESCRIPTION_CHARS),
        "status": "running",
        "deltaSummary": None,
        "shell": {
            "command": _bounded(shell.command, COMMAND_CHARS),
            "kind": shell.kind,
            "toolUseId": shell.tool_use_id,
        },
    }


def declared_shells(data: bytes) -> frozenset[str]:
    """The task ids of the background shells a compaction of ours declares it carries."""
    return frozenset(
        entry["taskId"]
        for entry in declared_by_ours(data, "carriedBackgroundShells")
        if isinstance(entry, dict) and isinstance(entry.get("taskId"), str)
    )
