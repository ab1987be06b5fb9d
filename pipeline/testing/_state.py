"""The attachment records 2.1.x writes about a session's tools, listings and clock.

At session start Claude Code 2.1.x announces its deferred tools (MCP ones among them), agent
types, MCP server instructions and skills in `deferred_tools_delta`, `agent_listing_delta`,
`mcp_instructions_delta` and `skill_listing` attachments; later it writes deltas when an MCP
server disconnects or comes back, `date_change` past midnight, `queued_command` for a prompt
typed while it worked, and todo/task reminders. Now and then a turn leaves a command running in
the background (`backgroundTaskId` in its result); a later turn gap may bring the
`<task-notification>` that it finished, and a server or a watcher never reports back (Claude Code
names it unfinished on resume); a turn may launch an agent in the background (`async_launched`
in its result) that reports back later or never; a turn of a session that announced deferred tools
may load one through ToolSearch (a `tool_reference` result). Field sets follow the real records of the
shared corpus (`jazzyalex__agent-sessions__..._claude_small.jsonl`, `iansherr__..._ef958aa1...`,
`marot__spotter__..._4d5611e5...`). The draws come from a generator of their own, so a plan's
other choices do not move with them (the agents' and the tool loads' from one more each, so the
rest stay as they were).
"""

from __future__ import annotations

import random
import tempfile
from typing import Any, Protocol

__all__ = ["StateWriter"]

BUILTIN_DEFERRED = ("AskUserQuestion", "CronCreate", "EnterPlanMode", "NotebookEdit", "WebFetch", "WebSearch")
LOADABLE = ("NotebookEdit", "WebFetch", "WebSearch")  # the deferred tools a turn may load
MCP_SERVERS = ("github", "linear", "sentry")
MCP_TOOLS = ("search", "get_issue", "create_comment", "list_projects")
AGENTS = (
    ("general-purpose", "General-purpose agent for researching complex questions. (Tools: *)"),
    ("Explore", "Fast read-only search agent for locating code. (Tools: Read, Grep, Glob)"),
    ("Plan", "Software architect agent for designing implementation plans. (Tools: Read, Grep)"),
)
SKILLS = (
    ("update-config", "Use this skill to configure the Claude Code harness via settings.json."),
    ("simplify", "Review changed code for reuse, quality, and efficiency, then fix any issues found."),
    ("loop", "Run a prompt or slash command on a recurring interval (e.g. /loop 5m /foo)."),
)
CHANGE_RATE = 0.05  # share of turn gaps that bring a state change (an MCP server dropping or back)
DATE_RATE = 0.03  # share of turn gaps that cross midnight
QUEUED_RATE = 0.03  # share of turn gaps with a prompt typed while Claude Code worked
REMINDER_RATE = 0.04  # share of turn gaps with a todo or task reminder
BACKGROUND_RATE = 0.04  # share of turns that leave a command running in the background
FINISHED_RATE = 0.3  # share of turn gaps that report the oldest background command finished
# (command, description, whether it ever finishes): servers and watchers run until the session ends.
BACKGROUND_COMMANDS = (
    ("npm run dev", "Start the dev server", False),
    ("pytest -x -q", "Run the test suite", True),
    ("tail -f logs/app.log", "Follow the app log", False),
    ("cargo build --release", "Build the release binary", True),
)
LOAD_RATE = 0.03  # share of turns that load a deferred tool through ToolSearch
AGENT_RATE = 0.03  # share of turns that launch an agent in the background
AGENT_FINISHED_RATE = 0.3  # share of turn gaps that report the oldest background agent finished
# (description, whether it ever reports back): a long review may outlive the session.
BACKGROUND_AGENTS = (
    ("Research the build system", True),
    ("Review the open pull requests", False),
    ("Survey the test coverage", True),
    ("Audit the dependency licenses", False),
)
# Where Claude Code says a background task writes its output: under the temporary directory
# (os.tmpdir()), per user id and project; a transcript records the path, nothing opens it.
TASK_OUTPUT_DIR = f"{tempfile.gettempdir()}/claude-1000/-home-dev-project/tasks"


class AttachmentSink(Protocol):
    """What the writer needs of a builder: one attachment record on the cursor."""

    def attachment(self, kind: str, **fields: object) -> str: ...


class SessionSink(AttachmentSink, Protocol):
    """... and for background commands: a tool call, a prompt-like user record, a reply."""

    def tool_call(
        self,
        name: str,
        input: dict[str, Any],
        result: str | list[dict[str, Any]],
        *,
        tool_use_result: Any = None,
    ) -> Any: ...

    def user(self, content: str) -> str: ...

    def text(self, s: str) -> dict[str, Any]: ...

    def assistant(self, *blocks: dict[str, Any]) -> Any: ...


def _mcp_names(server: str) -> list[str]:
    return [f"mcp__{server}__{tool}" for tool in MCP_TOOLS]


class StateWriter:
    """Writes one session's state attachments (see the module docstring)."""

    def __init__(self, seed: str) -> None:
        self._rng = random.Random(f"state:{seed}")
        self._servers = list(self._rng.sample(MCP_SERVERS, self._rng.randint(1, len(MCP_SERVERS))))
        self._connected = set(self._servers)
        self._day = self._rng.randint(1, 27)
        self._running: list[tuple[str, str]] = []  # background commands that will report back
        # Background agents draw from a generator of their own, so the other draws stay as they were.
        self._agent_rng = random.Random(f"agents:{seed}")
        self._agents: list[tuple[str, str]] = []  # background agents that will report back
        self._load_rng = random.Random(f"loads:{seed}")  # ToolSearch loads: their own generator too
        self._deferred = list(LOADABLE)  # the built-in deferred tools not loaded yet
        self._announced = False  # deferred tools are announced (2.1.x sessions only)

    @property
    def rng(self) -> random.Random:
        """This writer's own generator (for the text of a queued prompt)."""
        return self._rng

    def session_start(self, b: AttachmentSink) -> None:
        """The announcements of a session start (or a resume): tools, agents, MCP, skills."""
        self._announced = True
        names = [*BUILTIN_DEFERRED, *(n for s in sorted(self._connected) for n in _mcp_names(s))]
        b.attachment(
            "deferred_tools_delta",
            addedNames=names,
            addedLines=names,
            removedNames=[],
            readdedNames=[],
            pendingMcpServers=[],
            needsAuthMcpServers=[],
        )
        lines = [f"- {name}: {what}" for name, what in AGENTS]
        b.attachment(
            "agent_listing_delta",
            addedTypes=[name for name, _ in AGENTS],
            addedLines=lines,
            removedTypes=[],
            isInitial=True,
            showConcurrencyNote=False,
        )
        servers = sorted(self._connected)
        blocks = [f"## {s}\nUse the {s} tools for {s} work; prefer search before get." for s in servers]
        b.attachment("mcp_instructions_delta", addedNames=servers, addedBlocks=blocks, removedNames=[])
        content = "\n".join(f"- {name}: {what}" for name, what in SKILLS)
        names_ = [name for name, _ in SKILLS]
        b.attachment("skill_listing", content=content, isInitial=True, names=names_, skillCount=len(SKILLS))

    def between_turns(self, b: AttachmentSink, prompt: str) -> None:
        """Now and then: an MCP server drops or comes back, the date changes, a queued prompt."""
        rng = self._rng
        if rng.random() < CHANGE_RATE:
            server = rng.choice(self._servers)
            gone = server in self._connected
            (self._connected.discard if gone else self._connected.add)(server)
            names = _mcp_names(server)
            fields = {"removedNames": names, "addedNames": [], "addedLines": []}
            if not gone:
                fields = {"removedNames": [], "addedNames": names, "addedLines": names, "readdedNames": names}
            b.attachment("deferred_tools_delta", **fields, pendingMcpServers=[], needsAuthMcpServers=[])
        if rng.random() < DATE_RATE:
            self._day = min(28, self._day + 1)
            b.attachment("date_change", newDate=f"2026-03-{self._day:02d}")
        if rng.random() < QUEUED_RATE:
            b.attachment("queued_command", prompt=prompt, commandMode="prompt")
        if rng.random() < REMINDER_RATE:
            kind = rng.choice(("todo_reminder", "task_reminder"))
            b.attachment(kind, content=[], itemCount=0)

    def background(self, b: SessionSink) -> None:
        """Now and then: the turn leaves a command or an agent running in the background."""
        self._background_agent(b)
        self._tool_load(b)
        if self._rng.random() >= BACKGROUND_RATE:
            return
        task = f"b{self._rng.getrandbits(24):06x}"
        command, description, finishes = self._rng.choice(BACKGROUND_COMMANDS)
        b.tool_call(
            "Bash",
            {"command": command, "description": description, "run_in_background": True},
            f"Command running in background with ID: {task}. "
            f"Output is being written to: {TASK_OUTPUT_DIR}/{task}.output",
            tool_use_result={
                "stdout": "",
                "stderr": "",
                "interrupted": False,
                "isImage": False,
                "noOutputExpected": False,
                "backgroundTaskId": task,
            },
        )
        if finishes:
            self._running.append((task, description))

    def _background_agent(self, b: SessionSink) -> None:
        rng = self._agent_rng
        if rng.random() >= AGENT_RATE:
            return
        agent = f"a{rng.getrandbits(64):016x}"
        description, reports = rng.choice(BACKGROUND_AGENTS)
        prompt = f"{description}; report what you find with file paths."
        b.tool_call(
            "Agent",
            {"description": description, "prompt": prompt, "subagent_type": "general-purpose",
             "run_in_background": True},
            f"Async agent launched successfully.\nagentId: {agent} (use SendMessage to continue it)",
            tool_use_result={
                "isAsync": True, "status": "async_launched", "agentId": agent, "description": description,
                "prompt": prompt, "outputFile": f"{TASK_OUTPUT_DIR}/{agent}.output",
                "canReadOutputFile": True, "canContinueAgent": True,
            },
        )  # fmt: skip
        if reports:
            self._agents.append((agent, description))

    def _tool_load(self, b: SessionSink) -> None:
        """Now and then: ToolSearch loads one of the deferred tools announced (Claude Code then sends
        its definition on every later request, and lists it loaded, not deferred, on resume)."""
        rng = self._load_rng
        if not self._announced or not self._deferred or rng.random() >= LOAD_RATE:
            return
        name = self._deferred.pop(rng.randrange(len(self._deferred)))
        b.tool_call(
            "ToolSearch",
            {"query": f"select:{name}", "max_results": 1},
            [{"type": "tool_reference", "tool_name": name}],
            tool_use_result={"matches": [name], "query": f"select:{name}", "total_deferred_tools": 18},
        )

    def _agent_finished(self, b: SessionSink) -> None:
        if not self._agents or self._agent_rng.random() >= AGENT_FINISHED_RATE:
            return
        agent, description = self._agents.pop(0)
        b.user(
            f"<task-notification>\n<task-id>{agent}</task-id>\n<status>completed</status>\n"
            f'<summary>Agent "{description}" completed</summary>\n</task-notification>'
        )
        b.assistant(b.text("The background agent reported back; its findings are noted."))

    def finished(self, b: SessionSink) -> None:
        """Now and then: the oldest background command or agent reports back, and the model answers."""
        self._agent_finished(b)
        if not self._running or self._rng.random() >= FINISHED_RATE:
            return
        task, description = self._running.pop(0)
        output = f"{TASK_OUTPUT_DIR}/{task}.output"
        b.user(
            f"<task-notification>\n<task-id>{task}</task-id>\n<output-file>{output}</output-file>\n"
            f'<status>completed</status>\n<summary>Background command "{description}" completed '
            f"(exit code 0)</summary>\n</task-notification>\n"
            f"Read the output file to retrieve the result: {output}"
        )
        b.assistant(b.text("The background command finished; nothing else to do for it."))
