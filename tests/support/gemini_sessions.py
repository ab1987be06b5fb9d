"""Real Gemini CLI sessions, written by the pinned Gemini CLI against a scripted loopback model.

Each scenario is a list of `gemini` runs in one throwaway home, each answered by a script of
model replies (`GeminiApiServer`): tool calls that succeed and fail, a resume that repeats the
header, Gemini CLI's own compression (forced by replies that report a huge prompt). Recording
copies every session file the runs wrote; `python -m tests.support.gemini_sessions OUT` re-records
`tests/fixtures/gemini_cli/` (see its README).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from pipeline.proof.gemini_cli.api_capture import GeminiApiServer, function_call_part, text_part
from pipeline.proof.gemini_cli.gemini_run import GeminiHome, make_home, require_gemini_cli, run_gemini
from tests.support.gemini_tty import (
    CHECKPOINT_KEYS,
    CHECKPOINT_TAG,
    REWIND_KEYS,
    REWIND_REPLIES,
    run_interactive,
)

__all__ = ["SCENARIOS", "GeminiStep", "record", "record_killed", "run_scenario"]

RUN_SECONDS: Final = 120.0
KILL_AFTER_SECONDS: Final = 20.0  # well past the first reply (under a second), before the command ends
_COMPRESSING_PROMPT: Final = 900_000  # over half of the model's 1M window: Gemini CLI compresses


@dataclass(frozen=True, slots=True)
class GeminiStep:
    """One `gemini` run: its arguments and the model's scripted replies."""

    args: tuple[str, ...]
    replies: tuple[tuple[Mapping[str, Any], ...], ...] = ()
    prompt_tokens: int = 10


@dataclass(frozen=True, slots=True)
class Scenario:
    """A named list of runs in one home; `files` seeds the work directory."""

    name: str
    steps: tuple[GeminiStep, ...]
    files: Mapping[str, str] = field(default_factory=dict)


_RESUME: Final = ("--resume", "latest")
_SOURCE: Final = "def parse(line):\n    return line.split(',')\n" * 6  # a source file's text
_REPORT: Final = {
    "SummaryOfFindings": "notes.txt says hello",
    "ExplorationTrace": ["read notes.txt"],
    "RelevantLocations": [],
}
_YOLO: Final = ("--approval-mode", "yolo")

SCENARIOS: Final = (
    Scenario(
        "tools",
        (
            GeminiStep(
                ("-p", "look at the project and say hello", *_YOLO),
                (
                    (
                        text_part("I will list the files."),
                        function_call_part("list_directory", {"dir_path": "."}),
                    ),
                    (function_call_part("read_file", {"file_path": "missing.txt"}),),
                    (function_call_part("read_file", {"file_path": "notes.txt"}),),
                    (function_call_part("run_shell_command", {"command": "echo hello-from-shell"}),),
                    (text_part("The notes say hello. Done."),),
                ),
            ),
            GeminiStep(
                ("-p", "now write a summary file", *_RESUME, *_YOLO),
                (
                    (function_call_part("write_file", {"file_path": "summary.txt", "content": "hello\n"}),),
                    (text_part("Wrote summary.txt."),),
                ),
            ),
            GeminiStep(("-p", "thanks, that is all", *_RESUME), ((text_part("You are welcome."),),)),
        ),
        files={"notes.txt": "hello from the notes\n"},
    ),
    Scenario(
        "subagent",
        (
            GeminiStep(
                ("-p", "ask an investigator about the notes", *_YOLO),
                (
                    (
                        function_call_part(
                            "invoke_agent",
                            {"agent_name": "codebase_investigator", "prompt": "read notes.txt"},
                        ),
                    ),
                    (function_call_part("read_file", {"file_path": "notes.txt"}),),
                    (function_call_part("complete_task", {"report": _REPORT}),),
                    (text_part("The investigator read the notes."),),
                ),
            ),
        ),
        files={"notes.txt": "notes for the investigator\n"},
    ),
    Scenario(
        "long",
        tuple(
            GeminiStep(
                ("-p", f"part {run} of the long task: read the sources", *(_RESUME if run else ()), *_YOLO),
                (
                    *(
                        (function_call_part("read_file", {"file_path": f"src{run}_{n}.txt"}),)
                        for n in range(4)
                    ),
                    (text_part(f"Part {run} is read: the sources define the parser."),),
                ),
            )
            for run in range(3)
        ),
        files={f"src{run}_{n}.txt": _SOURCE for run in range(3) for n in range(4)},
    ),
    Scenario(
        "compressed",
        (
            GeminiStep(("-p", "start a long task"), ((text_part("Step one is done."),),)),
            GeminiStep(
                ("-p", "continue the long task", *_RESUME, *_YOLO),
                (
                    (function_call_part("read_file", {"file_path": "notes.txt"}),),
                    (text_part("Step two is done."),),
                ),
                prompt_tokens=_COMPRESSING_PROMPT,
            ),
            GeminiStep(("-p", "finish the long task", *_RESUME), ((text_part("Step three is done."),),)),
        ),
        files={"notes.txt": "the long task's notes\n"},
    ),
)


def run_scenario(script: Path, scenario: Scenario, scratch: Path) -> GeminiHome:
    """Run every step of `scenario` in a fresh home under `scratch`; the home as left."""
    staged = make_home(scratch)
    for name, text in scenario.files.items():
        (staged.work_dir / name).write_text(text)
    for step in scenario.steps:
        with GeminiApiServer(replies=step.replies, prompt_tokens=step.prompt_tokens) as api:
            run = run_gemini(script, staged, step.args, base_url=api.base_url, timeout=RUN_SECONDS)
        if run.returncode != 0:
            raise RuntimeError(
                f"{scenario.name}: gemini {' '.join(step.args)} exited {run.returncode}: {run.stderr[-2000:]}"
            )
    return staged


def record_rewound(out: Path) -> Path:
    """Record `rewound.jsonl`: two prompts, `/rewind` to the second, the rewound prompt sent again
    (typed into the interactive Gemini CLI: `-p` has no `/rewind`)."""
    script = require_gemini_cli()
    with tempfile.TemporaryDirectory(prefix="gemini-record-") as scratch:
        staged = make_home(Path(scratch))
        run_interactive(script, staged, REWIND_KEYS, REWIND_REPLIES)
        (session,) = staged.chats.glob("*.jsonl")
        target = out / "rewound.jsonl"
        shutil.copyfile(session, target)
    return target


def record_checkpoint(out: Path) -> Path:
    """Record `checkpoint-fixture-tag.json`: one exchange, then `/chat save fixture-tag` (typed:
    `-p` runs no `/chat save`)."""
    script = require_gemini_cli()
    with tempfile.TemporaryDirectory(prefix="gemini-record-") as scratch:
        staged = make_home(Path(scratch))
        run_interactive(script, staged, CHECKPOINT_KEYS, REWIND_REPLIES)
        saved = staged.project_dir / f"checkpoint-{CHECKPOINT_TAG}.json"
        target = out / saved.name
        shutil.copyfile(saved, target)
    return target


# The model answers with text and two calls in one reply: a read that ends at once, a command
# that runs for 30 s (Gemini CLI starts it in a process group of its own, which outlives the kill:
# it ends by itself soon after); the run is killed while the command runs.
_KILLED_REPLIES: Final = (
    (
        text_part("I will read the notes and run the build."),
        function_call_part("read_file", {"file_path": "notes.txt"}),
        function_call_part("run_shell_command", {"command": "sleep 30"}),
    ),
)


def record_killed(out: Path) -> Path:
    """Record `killed.jsonl`: a `-p` run killed (its process group, SIGKILL) while one of the two
    calls of a reply still runs, as a user's closed terminal or an out-of-memory kill ends it."""
    script = require_gemini_cli()
    args = ("-p", "read the notes, then run the slow build", *_YOLO)
    with tempfile.TemporaryDirectory(prefix="gemini-record-") as scratch:
        staged = make_home(Path(scratch))
        (staged.work_dir / "notes.txt").write_text("hello from the notes\n")
        with GeminiApiServer(replies=_KILLED_REPLIES) as api:
            try:
                run_gemini(script, staged, args, base_url=api.base_url, timeout=KILL_AFTER_SECONDS)
            except subprocess.TimeoutExpired:
                pass  # killed, as meant
            else:
                raise RuntimeError("the killed run ended by itself")
        (session,) = staged.chats.glob("*.jsonl")
        target = out / "killed.jsonl"
        shutil.copyfile(session, target)
    return target


def _fixture_name(scenario: str, session: Path, chats: Path, index: int) -> str:
    """`<scenario>.jsonl` for the main session, `<scenario>-subagent[-n].jsonl` for one under
    `chats/<parent>/`."""
    nested = session.parent != chats
    base = f"{scenario}-subagent" if nested else scenario
    return f"{base}{f'-{index}' if index else ''}{session.suffix}"


def record(out: Path, scenarios: Sequence[Scenario] = SCENARIOS) -> list[Path]:
    """Run the scenarios and copy each session file written into `out`, named by scenario."""
    script = require_gemini_cli()
    written: list[Path] = []
    for scenario in scenarios:
        with tempfile.TemporaryDirectory(prefix="gemini-record-") as scratch:
            staged = run_scenario(script, scenario, Path(scratch))
            mains = sorted(staged.chats.glob("*.json*"))
            nested = sorted(p for p in staged.chats.glob("*/*.json*"))
            for group in (mains, nested):
                for index, session in enumerate(group):
                    target = out / _fixture_name(scenario.name, session, staged.chats, index)
                    shutil.copyfile(session, target)
                    written.append(target)
    return written


if __name__ == "__main__":
    names = sys.argv[2:]
    chosen = [s for s in SCENARIOS if s.name in names] if names else SCENARIOS
    for path in record(Path(sys.argv[1]), chosen):
        print(path)
    if not names or "rewound" in names:
        print(record_rewound(Path(sys.argv[1])))
    if not names or "checkpoint" in names:
        print(record_checkpoint(Path(sys.argv[1])))
    if not names or "killed" in names:
        print(record_killed(Path(sys.argv[1])))
