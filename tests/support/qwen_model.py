"""A scripted loopback model that makes the real Qwen Code write real sessions (the fixtures).

Qwen Code talks to an OpenAI-compatible server; `ScriptedModel` answers its main agent's calls
from a queue of `Reply`s (text, tool calls), its own compression call with a fixed summary, and
anything else (its memory extraction) with `ok`. `record` runs one prompt after another in one
session (`qwen -p` first, then `qwen --resume <id> -p`), with `/compress` as a prompt being Qwen
Code's own compression. Regenerate the fixtures with::

    .venv/bin/python -m tests.support.qwen_model tests/fixtures/qwen_code
    .venv/bin/python -m tests.support.qwen_model tests/fixtures/qwen_code <prefix>/node_modules/@qwen-code/qwen-code/cli.js
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pipeline.proof.chat_capture import ChatCaptureServer, ChatRequest, Reply, ToolCall
from pipeline.proof.process_group import run_in_process_group
from pipeline.proof.qwen_code.qwen_install import QwenCode, find_qwen_code, require_qwen_code
from pipeline.proof.qwen_code.resume_run import qwen_environment
from pipeline.proof.qwen_code.session_staging import sanitized_cwd

MAIN_AGENT: Final = "You are Qwen Code"  # how the main agent's system prompt opens
COMPRESSOR: Final = "You are the component that summarizes"  # Qwen Code's compression prompt
SUMMARY: Final = (
    "<state_snapshot>\n<overall_goal>Keep notes in notes.txt</overall_goal>\n"
    "<key_knowledge>notes.txt holds alpha and beta</key_knowledge>\n</state_snapshot>"
)
RUN_SECONDS: Final = 120.0


@dataclass(frozen=True, slots=True)
class Step:
    """One prompt and the main agent's replies to it, in order."""

    prompt: str
    replies: tuple[Reply, ...] = ()


class ScriptedModel:
    """Answers the main agent from a queue, the compressor with `SUMMARY`, the rest with `ok`."""

    def __init__(self) -> None:
        self.queue: deque[Reply] = deque()

    def __call__(self, _number: int, request: ChatRequest) -> Reply:
        system = request.messages[0].get("content") if request.messages else None
        opening = system if isinstance(system, str) else ""
        if opening.startswith(MAIN_AGENT):
            return self.queue.popleft() if self.queue else Reply("ok")
        return Reply(SUMMARY) if opening.startswith(COMPRESSOR) else Reply("ok")


def _sessions(home: Path, work_dir: Path) -> list[Path]:
    chats = home / ".qwen" / "projects" / sanitized_cwd(str(work_dir)) / "chats"
    return sorted(chats.glob("*.jsonl"))


def record(qwen: QwenCode, scratch: Path, steps: Sequence[Step]) -> Path:
    """Run `steps` as one session with the real Qwen Code; the session file it wrote."""
    home, work_dir = scratch / "home", scratch / "project"
    work_dir.mkdir(parents=True)
    home.mkdir()
    model = ScriptedModel()
    with ChatCaptureServer(model) as api:
        env = qwen_environment(home, f"{api.base_url}/v1")
        session: Path | None = None
        for step in steps:
            model.queue.extend(step.replies)
            resume = ("--resume", session.stem) if session else ()
            command = qwen.command(*resume, "-p", step.prompt, "--auth-type", "openai", "--yolo")
            code, _, stderr = run_in_process_group(command, cwd=work_dir, env=env, timeout=RUN_SECONDS)
            if code != 0:
                raise RuntimeError(f"qwen exited {code}: {stderr[-2000:]}")
            model.queue.clear()
            session = session or _sessions(home, work_dir)[0]
    if session is None:
        raise RuntimeError("no steps")
    return session


def _shell(command: str) -> ToolCall:
    return ToolCall("run_shell_command", {"command": command, "description": command})


def tool_steps(project: str) -> tuple[Step, ...]:
    """Two prompts with tool calls: a shell command, a failing read, a parallel pair, a re-read."""
    notes = f"{project}/notes.txt"
    return (
        Step(
            "make notes",
            (
                Reply("Let me look around.", (_shell("echo hi; ls -la"),), reasoning="The user wants notes."),
                Reply("", (ToolCall("read_file", {"file_path": f"{project}/missing.txt"}),)),
                Reply(
                    "Writing the file.",
                    (
                        ToolCall("write_file", {"file_path": notes, "content": "alpha\nbeta\n"}),
                        _shell("false"),
                    ),
                ),
                Reply("All done: notes.txt written."),
            ),
        ),
        Step(
            "now count the lines",
            (
                Reply("", (ToolCall("read_file", {"file_path": notes}),)),
                Reply("Counting.", (_shell("wc -l notes.txt"),)),
                Reply("notes.txt has 2 lines."),
            ),
        ),
    )


def compressed_steps(project: str) -> tuple[Step, ...]:
    """The tool prompts, Qwen Code's own `/compress`, then one more prompt after it."""
    after = Step(
        "add gamma", (Reply("", (_shell(f"echo gamma >> {project}/notes.txt"),)), Reply("gamma added."))
    )
    return (*tool_steps(project), Step("/compress"), after)


def long_steps(project: str) -> tuple[Step, ...]:
    """A long task: six prompts, each a command with a KB of output, a write and a closing note."""
    topics = ("parser", "lexer", "cache", "scheduler", "logger", "router")
    return tuple(
        Step(
            f"review the {topic} module and list its numbered checks",
            (
                Reply(f"Listing the {topic} checks.", (_shell(f"seq -f '{topic} check %g: ok' 1 40"),)),
                Reply(
                    "",
                    (
                        ToolCall(
                            "write_file", {"file_path": f"{project}/{topic}.md", "content": f"# {topic}\n"}
                        ),
                    ),
                ),
                Reply(f"The {topic} module passes all 40 checks; notes are in {topic}.md."),
            ),
        )
        for topic in topics
    )


def delegated_steps(project: str) -> tuple[Step, ...]:
    """A prompt the main agent hands to a general-purpose subagent in the foreground: Qwen Code
    writes the subagent's own transcript under `subagents/<sessionId>/`."""
    task = {
        "description": "count lines",
        "prompt": f"count the lines of {project}/notes.txt",
        "subagent_type": "general-purpose",
        "run_in_background": False,
    }
    return (
        Step("delegate the count", (Reply("Delegating.", (ToolCall("agent", task),)), Reply("Counted."))),
    )


def _keep_subagents(session: Path, target: Path) -> None:
    """Copy the subagents' transcripts of `session` (`subagents/<sessionId>/agent-*.jsonl`) into
    `target`/subagents."""
    transcripts = sorted((session.parent.parent / "subagents").glob(f"{session.stem}/agent-*.jsonl"))
    for transcript in transcripts:
        (target / "subagents").mkdir(exist_ok=True)
        (target / "subagents" / transcript.name).write_bytes(transcript.read_bytes())


def main(target: Path, client: Path | None = None) -> None:
    """Write the fixtures into `target` (the project directory is /tmp-based, so paths differ per
    run). With `client` (an older Qwen Code's cli.js), write `v<version>.jsonl` with it instead."""
    qwen = require_qwen_code()
    target.mkdir(parents=True, exist_ok=True)
    plans = {
        "tools.jsonl": tool_steps,
        "compressed.jsonl": compressed_steps,
        "long.jsonl": long_steps,
        "delegated.jsonl": delegated_steps,
    }
    if client is not None:
        version = json.loads((client.parent / "package.json").read_text())["version"]
        qwen = QwenCode(qwen.node, client)
        plans = {f"v{version}.jsonl": compressed_steps}
    for name, plan in plans.items():
        with tempfile.TemporaryDirectory(prefix="qwen-fixture-") as scratch:
            project = str(Path(scratch) / "project")
            session = record(qwen, Path(scratch), plan(project))
            (target / name).write_bytes(session.read_bytes())
            _keep_subagents(session, target)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else None)


def installed_qwen_code() -> QwenCode | None:
    """The pinned Qwen Code, installed by scripts/install-qwen-code when it is missing; None when
    it cannot be (no npm, no registry): the caller skips, saying why."""
    if find_qwen_code() is None:
        script = Path(__file__).resolve().parents[2] / "scripts" / "install-qwen-code"
        run_in_process_group([str(script)], cwd=script.parent, env=dict(os.environ), timeout=600.0)
    return find_qwen_code()
