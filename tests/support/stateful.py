"""Sessions whose older part holds every kind of state Claude Code derives resume reminders from.

`stateful_session` writes a 2.1.x builder session that opens with the state records 2.1.x writes
(deferred tools, agent and skill listings, MCP instructions) and a few Claude Code writes more
rarely (an output style, a language, MCP tools it dropped, skills it found), and loads a deferred tool
through ToolSearch. The real Claude Code then resumes it once and appends what it writes itself
(its environment, model, date, session context and attribution records, its listings, its own
turn); the builder goes on with three background commands (one reported finished, one stopped,
one that never reports back) and more turns, so that a compaction's summarized part holds all of
it. `ORPHAN_TASK` is the background command left unfinished, `LOADED_TOOL` the deferred
tool ToolSearch loaded, `CANARY` the text of a rewound branch (excluded from any compaction).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from pipeline.proof.claude_code.client import resume
from pipeline.testing._state import TASK_OUTPUT_DIR, StateWriter
from pipeline.testing.builder import TranscriptBuilder
from tests.support.resolved import resolve

__all__ = [
    "BUILD_LOG_LINE",
    "CANARY",
    "LOADED_TOOL",
    "ORPHAN_TASK",
    "background_shell",
    "billed_session",
    "stateful_session",
    "stop_task",
    "task_notification",
]

VERSION: Final = "2.1.39"
ORPHAN_TASK: Final = "b0dd5e1"
FINISHED_TASK: Final = "b0dd5e2"
STOPPED_TASK: Final = "b0dd5e3"
LOADED_TOOL: Final = "WebFetch"
CANARY: Final = "rewound plan: drop the users table and start over"
TIMEOUT_SECONDS: Final = 240.0
SHELL_RESULT: Final = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False}
SKILLS: Final = "/home/dev/project/.claude/skills"
PASSED: Final = "." * 900 + "\n9 passed"
SOURCE: Final = "def f():\n    return 1\n" * 60
BUILD_LOG_LINE: Final = "[build] compiling src/module.rs ... ok (warnings: none, 0.12s elapsed)\n"


def background_shell(b: TranscriptBuilder, task: str, command: str, description: str) -> str:
    """A Bash call run in the background, as 2.1.x records it; its tool_use id."""
    output = f"{TASK_OUTPUT_DIR}/{task}.output"
    return b.tool_call(
        "Bash",
        {"command": command, "description": description, "run_in_background": True},
        f"Command running in background with ID: {task}. Output is being written to: {output}",
        tool_use_result={**SHELL_RESULT, "backgroundTaskId": task},
    ).tool_use_id


def stop_task(b: TranscriptBuilder, task: str) -> None:
    """A TaskStop call that stopped a background shell."""
    b.tool_call(
        "TaskStop",
        {"task_id": task},
        f"Successfully stopped task: {task}",
        tool_use_result={"message": "stopped", "task_id": task, "task_type": "local_bash"},
    )


def task_notification(b: TranscriptBuilder, task: str, description: str = "the command") -> str:
    """The user record Claude Code writes when a background command reports it finished."""
    return b.user(
        f"<task-notification>\n<task-id>{task}</task-id>\n<status>completed</status>\n"
        f'<summary>Background command "{description}" completed (exit code 0)</summary>\n'
        "</task-notification>"
    )


def _rare_state(b: TranscriptBuilder) -> None:
    """State records Claude Code writes when a user set them up: shapes of build 2.1.332's readers."""
    b.attachment("output_style_instructions", style={"name": "Explanatory", "prompt": "Explain each choice."})
    b.attachment("language", language="French")
    b.attachment("mcp_dropped_tools_delta", addedEntries=["mcp__sentry__bulk_export (a tuple schema)"])
    b.attachment("dynamic_skill", skillDir=SKILLS, skillNames=["release"], displayPath=".claude/skills")


def _opening(b: TranscriptBuilder) -> None:
    """The part before Claude Code's resume: state records, a rewound branch, a tool loaded."""
    StateWriter("stateful").session_start(b)
    _rare_state(b)
    prompt = b.user("Plan the migration and load the web fetch tool")
    b.assistant(b.text(CANARY))
    b.rewind(prompt)  # the user edited the prompt: the branch above is excluded
    b.user(f"Plan the migration without touching the schema, then load {LOADED_TOOL}")
    query = f"select:{LOADED_TOOL}"
    b.tool_call(
        "ToolSearch",
        {"query": query, "max_results": 1},
        [{"type": "tool_reference", "tool_name": LOADED_TOOL}],
        tool_use_result={"matches": [LOADED_TOOL], "query": query, "total_deferred_tools": 12},
    )
    b.assistant(b.text(f"{LOADED_TOOL} is loaded; the plan keeps the schema as it is."))
    b.last_prompt()


def _shells(b: TranscriptBuilder) -> None:
    """Three background commands: one reported finished, one stopped, one that never reports."""
    b.user("Start the dev server, the tests and the watcher in the background; stop the watcher")
    background_shell(b, ORPHAN_TASK, "npm run dev", "Start the dev server")
    background_shell(b, FINISHED_TASK, "npm test", "Run the tests")
    background_shell(b, STOPPED_TASK, "npm run watch", "Watch the sources")
    stop_task(b, STOPPED_TASK)
    b.assistant(b.text("The dev server and the tests run in the background; the watcher is stopped."))
    task_notification(b, FINISHED_TASK, "Run the tests")
    b.assistant(b.text("The tests finished and passed."))


def _going_on(b: TranscriptBuilder, turns: int) -> None:
    """More work after Claude Code's resume, enough for the cut to fall after all of the above."""
    _shells(b)
    for turn in range(turns):
        b.user(f"Next, check module {turn} and fix what the tests report (round {turn})")
        for step in range(3):
            b.tool_call("Bash", {"command": f"pytest tests/test_{turn}_{step}.py -q"}, PASSED)
        b.tool_call("Read", {"file_path": f"/home/dev/project/src/m{turn}.py"}, SOURCE)
        b.assistant(b.text(f"Module {turn} is fixed; its tests pass."))
    b.last_prompt()


def stateful_session(path: Path, executable: Path, *, turns: int = 8, seed: int = 7) -> Path:
    """Write the session (see the module docstring) to `path`; Claude Code resumes it midway."""
    first = TranscriptBuilder(seed=seed, version=VERSION)
    _opening(first)
    opening = path.with_suffix(".opening.jsonl")
    first.write(opening)
    result = resume(opening, executable=executable, timeout=TIMEOUT_SECONDS, keep=path)
    assert result.resumed, result.stderr[-2000:]
    resumed = path.read_bytes()
    leaf = resolve(resumed).topology.leaf_uuid
    rest = TranscriptBuilder(
        first.session_id, seed=seed + 1, version=VERSION, root_parent=leaf, start=datetime.now(UTC)
    )
    _going_on(rest, turns)
    path.write_bytes(resumed + rest.to_bytes())
    opening.unlink()
    return path


def billed_session(path: Path, billed: int, log_bytes: int = 0, *, seed: int = 4) -> Path:
    """Ten 2.1.x turns whose last call was billed for `billed` context tokens, then, when
    `log_bytes`, a turn that ends on a build log of that size (the session stopped there): how
    big Claude Code finds a session on resume, against its window."""
    b = TranscriptBuilder(seed=seed, version=VERSION)
    for turn in range(10):
        b.user(f"Request number {turn}: please look at module {turn} and report.")
        b.tool_call("Read", {"file_path": f"/home/dev/project/m{turn}.py"}, "x = 1\n" * 400)
        read = billed - 1_100 - 1_000 * (9 - turn)  # each call bills a little more than the last
        usage = {"input_tokens": 3, "cache_creation_input_tokens": 500, "cache_read_input_tokens": read}
        b.assistant(b.text(f"Module {turn} looks fine."), usage={**usage, "output_tokens": 97})
    if log_bytes:
        b.user("Here is the full build log; find the first error")
        b.tool_call("Bash", {"command": "cat build.log"}, BUILD_LOG_LINE * (log_bytes // len(BUILD_LOG_LINE)))
    b.last_prompt()
    b.write(path)
    return path
