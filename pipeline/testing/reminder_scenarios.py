"""Named builder scenarios, one per kind of reminder Claude Code derives when it resumes a session.

Claude Code 2.1.332 derives reminders at resume time from the state a session's records hold:
background agents and shells started and never reported back, the deferred tools it announced
(MCP servers dropping and coming back, tools ToolSearch loaded), its listings of agents, skills
and MCP instructions, and the environment, model and date it last told, and the short notices
with none of those openers (the proof's `other` kind: MCP servers whose instructions it told and
that are gone, the ambient-context line after them). Each scenario puts one
kind in the older part of a session and then works on for enough turns that a compaction
summarizes it, so a test can hold the candidate's resume against the original's in the real
Claude Code: the same reminders, derived from the state the candidate carries.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType
from typing import Any, Final

from pipeline.testing._state import TASK_OUTPUT_DIR, StateWriter
from pipeline.testing.builder import TranscriptBuilder

__all__ = [
    "REMINDER_SCENARIOS",
    "ReminderScenario",
    "background_agent_result",
    "build_reminder_scenario",
]

ReminderScenario = Callable[[TranscriptBuilder], None]

WORK_TURNS: Final = 8  # turns after the state, so the cut falls after it
_PASSED: Final = "." * 900 + "\n9 passed"
_SOURCE: Final = "def f():\n    return 1\n" * 60
_SHELL_RESULT: Final = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False}


def background_agent_result(agent_id: str, description: str, prompt: str) -> dict[str, Any]:
    """The `toolUseResult` 2.1.x writes when the Agent tool launches an agent in the background."""
    return {
        "isAsync": True,
        "status": "async_launched",
        "agentId": agent_id,
        "description": description,
        "prompt": prompt,
        "outputFile": f"{TASK_OUTPUT_DIR}/{agent_id}.output",
        "canReadOutputFile": True,
        "canContinueAgent": True,
    }


def _agent(b: TranscriptBuilder, agent_id: str, description: str) -> None:
    prompt = f"{description}: report what you find, with file paths."
    b.tool_call(
        "Agent",
        {
            "description": description,
            "prompt": prompt,
            "subagent_type": "general-purpose",
            "run_in_background": True,
        },
        f"Async agent launched successfully.\nagentId: {agent_id} (use SendMessage to continue it)",
        tool_use_result=background_agent_result(agent_id, description, prompt),
    )


def _shell(b: TranscriptBuilder, task: str, command: str, description: str) -> None:
    b.tool_call(
        "Bash",
        {"command": command, "description": description, "run_in_background": True},
        f"Command running in background with ID: {task}. Output is being written to: "
        f"{TASK_OUTPUT_DIR}/{task}.output",
        tool_use_result={**_SHELL_RESULT, "backgroundTaskId": task},
    )


def _notified(b: TranscriptBuilder, task: str, summary: str) -> None:
    """The user record Claude Code writes when a background task reports back."""
    b.user(
        f"<task-notification>\n<task-id>{task}</task-id>\n<status>completed</status>\n"
        f"<summary>{summary}</summary>\n</task-notification>"
    )
    b.assistant(b.text("Noted: that background task is done."))


def _work(b: TranscriptBuilder, turns: int = WORK_TURNS, *, pointer: bool = True) -> None:
    """Ordinary turns after the state, then the pointer."""
    for turn in range(turns):
        b.user(f"Next, check module {turn} and fix what the tests report (round {turn})")
        b.tool_call("Bash", {"command": f"pytest tests/test_{turn}.py -q"}, _PASSED)
        b.tool_call("Read", {"file_path": f"/home/dev/project/src/m{turn}.py"}, _SOURCE)
        b.assistant(b.text(f"Module {turn} is fixed; its tests pass."))
    if pointer:
        b.last_prompt()


def background_agent(b: TranscriptBuilder) -> None:
    """An agent launched in the background that never reports back, and one that does."""
    b.user("Research the build and the deploy scripts in the background while we go on")
    _agent(b, "a1f0c2d3e4b5a6978", "Research the build system")
    _agent(b, "a2e1d0c9b8a7f6e54", "Review the deploy scripts")
    b.assistant(b.text("Two research agents run in the background."))
    _notified(b, "a2e1d0c9b8a7f6e54", 'Agent "Review the deploy scripts" completed')
    _work(b)


def background_agents(b: TranscriptBuilder) -> None:
    """Three agents launched in the background, two never reported back (one notice names both)."""
    b.user("Survey the tests, audit the licenses and review the API in the background")
    _agent(b, "a3c4d5e6f708192a3", "Survey the test coverage")
    _agent(b, "a4d5e6f708192a3b4", "Audit the dependency licenses")
    _agent(b, "a5e6f708192a3b4c5", "Review the public API")
    b.assistant(b.text("Three agents run in the background."))
    _notified(b, "a4d5e6f708192a3b4", 'Agent "Audit the dependency licenses" completed')
    _work(b)


def redispatched_agent(b: TranscriptBuilder) -> None:
    """An agent launched in the background early on, sent a follow-up in the last turn (Claude Code
    words its notice from the re-dispatch and the launch's description), never reported back."""
    b.user("Research the release process in the background")
    _agent(b, "a6f708192a3b4c5d6", "Research the release process")
    b.assistant(b.text("The research agent runs in the background."))
    _work(b, pointer=False)
    b.user("Ask the research agent to cover the hotfix branches too")
    b.tool_call(
        "SendMessage",
        {"to": "a6f708192a3b4c5d6", "message": "Cover the hotfix branches too."},
        "Message sent; the agent resumed in the background.",
        tool_use_result={
            "success": True,
            "message": "Cover the hotfix branches too.",
            "resumedAgentId": "a6f708192a3b4c5d6",
        },
    )
    b.assistant(b.text("The agent now covers the hotfix branches as well."))
    b.last_prompt()


def background_shells(b: TranscriptBuilder) -> None:
    """Two servers left running in the background (one notice for both), one command that
    reported back, and one stopped."""
    b.user("Start the dev server, the API mock, the tests and the watcher; stop the watcher")
    _shell(b, "b7d0e51", "npm run dev", "Start the dev server")
    _shell(b, "b7d0e52", "npm run mock-api", "Start the API mock")
    _shell(b, "b7d0e53", "npm test", "Run the tests")
    _shell(b, "b7d0e54", "npm run watch", "Watch the sources")
    b.tool_call(
        "TaskStop",
        {"task_id": "b7d0e54"},
        "Successfully stopped task: b7d0e54",
        tool_use_result={"message": "stopped", "task_id": "b7d0e54", "task_type": "local_bash"},
    )
    b.assistant(b.text("The servers and the tests run in the background; the watcher is stopped."))
    _notified(b, "b7d0e53", 'Background command "Run the tests" completed (exit code 0)')
    _work(b)


def deferred_tools(b: TranscriptBuilder) -> None:
    """The deferred tools announced at start, an MCP server that drops and comes back, and a
    tool ToolSearch loaded."""
    state = StateWriter("deferred-tools")
    state.session_start(b)
    b.user("Load the web fetch tool and look up the release notes")
    names = [f"mcp__linear__{tool}" for tool in ("search", "get_issue")]
    b.attachment("deferred_tools_delta", addedNames=[], addedLines=[], removedNames=names)
    b.tool_call(
        "ToolSearch",
        {"query": "select:WebFetch", "max_results": 1},
        [{"type": "tool_reference", "tool_name": "WebFetch"}],
        tool_use_result={"matches": ["WebFetch"], "query": "select:WebFetch", "total_deferred_tools": 12},
    )
    b.tool_call(
        "WebFetch",
        {"url": "https://example.com/releases", "prompt": "List the release notes"},
        "1.4.0: faster builds; 1.3.2: a fix for the deploy script",
    )
    b.attachment(
        "deferred_tools_delta", addedNames=names, addedLines=names, removedNames=[], readdedNames=names
    )
    b.tool_call("mcp__linear__search", {"query": "release 1.4.0"}, "LIN-42 Release 1.4.0 (open)")
    b.assistant(b.text("The release notes are read; the release issue is LIN-42."))
    _work(b)


def loaded_tool(b: TranscriptBuilder) -> None:
    """A tool ToolSearch loaded in a session that announced no deferred tools on record."""
    b.user("Load the web fetch tool and look up the release notes")
    b.tool_call(
        "ToolSearch",
        {"query": "select:WebFetch", "max_results": 1},
        [{"type": "tool_reference", "tool_name": "WebFetch"}],
        tool_use_result={"matches": ["WebFetch"], "query": "select:WebFetch", "total_deferred_tools": 12},
    )
    b.assistant(b.text("WebFetch is loaded."))
    _work(b)


def listings(b: TranscriptBuilder) -> None:
    """The agent types, skills and MCP instructions announced at start, and a skill found later."""
    StateWriter("listings").session_start(b)
    b.user("Use the release skill to prepare the notes")
    b.attachment(
        "dynamic_skill",
        skillDir="/home/dev/project/.claude/skills",
        skillNames=["release"],
        displayPath=".claude/skills",
    )
    b.assistant(b.text("The release skill is there; the notes are drafted."))
    _work(b)


def other_reminders(b: TranscriptBuilder) -> None:
    """The MCP servers' instructions announced at start (one server dropping and coming back), and
    no deferred tools, agent or skill listing on record: at resume Claude Code says the servers it
    told of are gone (the resume runs with none), followed by its ambient-context line, notices
    with no opener of their own."""
    blocks = {
        s: f"## {s}\nUse the {s} tools for {s} work; prefer search before get." for s in ("linear", "sentry")
    }
    b.attachment(
        "mcp_instructions_delta",
        addedNames=sorted(blocks),
        addedBlocks=list(blocks.values()),
        removedNames=[],
    )
    b.user("File the crash report against the release")
    b.attachment("mcp_instructions_delta", addedNames=[], addedBlocks=[], removedNames=["sentry"])
    b.assistant(b.text("The sentry server dropped; the report waits until it is back."))
    b.attachment(
        "mcp_instructions_delta", addedNames=["sentry"], addedBlocks=[blocks["sentry"]], removedNames=[]
    )
    b.assistant(b.text("Sentry is back; the crash report is filed."))
    _work(b)


REMINDER_SCENARIOS: Final = MappingProxyType(
    {
        "background-agent": background_agent,
        "background-agents": background_agents,
        "background-shells": background_shells,
        "redispatched-agent": redispatched_agent,
        "deferred-tools": deferred_tools,
        "listings": listings,
        "loaded-tool": loaded_tool,
        "other-reminders": other_reminders,
    }
)
"""Every reminder scenario by name (kebab-case): the reminder kind its older part derives."""


def build_reminder_scenario(name: str, *, seed: int = 0, version: str = "2.1.39") -> bytes:
    """The bytes of one reminder scenario's session file."""
    builder = TranscriptBuilder(seed=seed, version=version)
    REMINDER_SCENARIOS[name](builder)
    return builder.to_bytes()
