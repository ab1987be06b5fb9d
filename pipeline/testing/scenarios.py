"""Named builder scenarios for where a session's context ends: pointers, open calls, compactions.

Each scenario is a small Claude Code session in a shape real sessions take where the seed's
strict rule and Claude Code's resume rule can disagree: a `last-prompt` pointer followed by more
turns, a session that ended mid-call, a pointer naming a record the file does not hold, a pointer
left on an abandoned branch, a pointer on one result of a parallel batch, and the same after a
prior Claude Code compaction. Tests resume each one in the real Claude Code and compare its
context with the chain `validate` selects.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType
from typing import Final

from pipeline.testing.builder import ToolSpec, TranscriptBuilder

__all__ = ["SCENARIOS", "Scenario", "build_scenario"]

Scenario = Callable[[TranscriptBuilder], None]

_MISSING_UUID: Final = "00000000-0000-4000-8000-000000000000"


def _read(path: str) -> ToolSpec:
    body = "".join(f"def step_{n}(value):\n    return value + {n}\n\n" for n in range(120))
    return ToolSpec("Read", {"file_path": path}, body)


def _bash(command: str) -> ToolSpec:
    return ToolSpec("Bash", {"command": command}, f"{command}: done\n")


def _turn(builder: TranscriptBuilder, prompt: str, reply: str, *tools: ToolSpec) -> None:
    builder.user(prompt)
    if tools:
        builder.parallel_tool_calls(list(tools))
    builder.assistant(builder.text(reply))


def _opening(builder: TranscriptBuilder) -> None:
    _turn(builder, "Look at main.py and tell me what it does.", "It returns 0.", _read("/src/main.py"))
    _turn(builder, "Run the tests.", "The tests pass.", _bash("pytest -q"))


def pointer_then_more_turns(builder: TranscriptBuilder) -> None:
    """The pointer was written, then the session went on for two more turns below it."""
    _opening(builder)
    builder.last_prompt()
    _turn(builder, "Now add a --verbose flag.", "Added the flag.", _bash("git diff --stat"))
    _turn(builder, "Thanks, that is all.", "You are welcome.")


def explicit_pointer_then_more_turns(builder: TranscriptBuilder) -> None:
    """An explicit pointer (a rewind's) stops being explicit once a row is written after it."""
    _opening(builder)
    builder.last_prompt(explicit=True)
    _turn(builder, "Now add a --verbose flag.", "Added the flag.", _bash("git diff --stat"))


def final_call_without_result(builder: TranscriptBuilder) -> None:
    """The session ended while a tool ran: the last assistant row is a tool_use with no result."""
    _opening(builder)
    builder.last_prompt()
    builder.user("Read the session log, please.")
    builder.assistant(
        builder.text("I'll read it."), builder.tool_use("Read", {"file_path": "logs/session.log"})
    )


def final_parallel_calls_without_results(builder: TranscriptBuilder) -> None:
    """Two parallel calls issued, neither answered, the pointer still on the turn before."""
    _opening(builder)
    builder.last_prompt()
    builder.user("Check both services.")
    message = builder.assistant(builder.tool_use("Bash", {"command": "systemctl status a"}))
    builder.assistant(
        builder.tool_use("Bash", {"command": "systemctl status b"}), message_id=message.message_id
    )


def pointer_names_missing_record(builder: TranscriptBuilder) -> None:
    """The pointer names a uuid the file does not hold: Claude Code resumes the last row."""
    _opening(builder)
    builder.last_prompt(leaf=_MISSING_UUID)


def pointer_on_abandoned_branch(builder: TranscriptBuilder) -> None:
    """The pointer names the end of one branch; a rewound branch written later does not descend from it."""
    _opening(builder)
    fork = builder.cursor
    _turn(builder, "Try approach one.", "Approach one works.")
    builder.last_prompt()
    builder.rewind(fork)
    _turn(builder, "Try approach two instead.", "Approach two works too.")


def pointer_on_parallel_result(builder: TranscriptBuilder) -> None:
    """The pointer names the first result of a parallel batch; the session went on from the other."""
    _opening(builder)
    builder.user("Run lint and the type checker.")
    calls = builder.parallel_tool_calls([_bash("ruff check"), _bash("mypy")])
    builder.last_prompt(leaf=calls[0].result_uuid)
    builder.assistant(builder.text("Both are clean."))
    _turn(builder, "Commit it.", "Committed.", _bash("git commit -am lint"))


def system_rows_below_pointer(builder: TranscriptBuilder) -> None:
    """A stop-hook summary and a local command were written below the pointer's leaf."""
    _opening(builder)
    builder.last_prompt()
    builder.system("stop_hook_summary", hookCount=1, hookInfos=[], hookErrors=[], preventedContinuation=False)


def after_compaction(builder: TranscriptBuilder) -> None:
    """A prior Claude Code compaction, then a pointer followed by more turns and an unanswered call."""
    _opening(builder)
    builder.compact("The user asked for a review of main.py; the tests pass.")
    _turn(builder, "Continue with the flag.", "Added the flag.", _bash("git diff"))
    builder.last_prompt()
    _turn(builder, "Document it.", "Documented in README.md.", _read("/src/README.md"))
    builder.user("Read the changelog too.")
    builder.assistant(builder.tool_use("Read", {"file_path": "/src/CHANGELOG.md"}))


SCENARIOS: Final = MappingProxyType(
    {
        name.replace("_", "-"): scenario
        for name, scenario in (
            ("pointer_then_more_turns", pointer_then_more_turns),
            ("explicit_pointer_then_more_turns", explicit_pointer_then_more_turns),
            ("final_call_without_result", final_call_without_result),
            ("final_parallel_calls_without_results", final_parallel_calls_without_results),
            ("pointer_names_missing_record", pointer_names_missing_record),
            ("pointer_on_abandoned_branch", pointer_on_abandoned_branch),
            ("pointer_on_parallel_result", pointer_on_parallel_result),
            ("system_rows_below_pointer", system_rows_below_pointer),
            ("after_compaction", after_compaction),
        )
    }
)
"""Every scenario by name (kebab-case)."""


def build_scenario(name: str, *, seed: int = 0, version: str = "2.1.39") -> bytes:
    """The bytes of one scenario's session file."""
    builder = TranscriptBuilder(seed=seed, version=version)
    SCENARIOS[name](builder)
    return builder.to_bytes()
