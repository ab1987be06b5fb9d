"""The scripted loopback model that makes the real pi write sessions, and the recipes of the
pi fixtures (tests/fixtures/pi/).

A recipe is a list of prompts, each with the replies the model gives in that turn, in order: a
tool call makes pi run the tool and call again, so the n-th call of a turn gets the n-th reply.
Requests without tools are pi's own summarization calls (compaction): they get a fixed summary.
Run as a module to re-record the fixtures with the pinned pi::

    .venv/bin/python -m tests.support.pi_sessions tests/fixtures/pi
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from pipeline.proof.chat_capture import ChatCaptureServer, ChatRequest, Reply, ReplyScript, ToolCall, Usage
from pipeline.proof.pi.pi_process import FAKE_MODEL, PiInstallation, require_pi, run_pi, write_agent_dir

__all__ = ["RECIPES", "Recipe", "Turn", "record", "scripted_model"]

SUMMARY: Final = "## Goal\nKeep the notes tidy.\n\n## Progress\n- Read notes.txt; check.sh fails with exit 3."
_TIMEOUT_SECONDS: Final = 120.0


def bash(call_id: str, command: str) -> ToolCall:
    """A call of pi's `bash` tool."""
    return ToolCall("bash", {"command": command}, call_id)


def read(call_id: str, path: str) -> ToolCall:
    """A call of pi's `read` tool."""
    return ToolCall("read", {"path": path}, call_id)


@dataclass(frozen=True, slots=True)
class Turn:
    """One prompt and the model's replies to the calls pi makes for it, in order."""

    prompt: str
    replies: tuple[Reply, ...]


@dataclass(frozen=True, slots=True)
class Recipe:
    """A session to record: its turns, and the model's window and pi's compaction settings."""

    name: str
    turns: tuple[Turn, ...]
    context_window: int = 2_000_000
    compaction: Mapping[str, int] = field(default_factory=dict)
    navigate_after: int | None = None  # turns after which pi's SessionManager branches the session


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else ()
    return "".join(part.get("text", "") for part in parts if isinstance(part, dict))


def scripted_model(turns: Sequence[Turn]) -> ReplyScript:
    """The script of a `ChatCaptureServer`: the reply for the prompt the request ends its last
    user message with, picked by how many assistant messages follow that message."""
    by_prompt = {turn.prompt: turn.replies for turn in turns}

    def reply(_number: int, request: ChatRequest) -> Reply:
        messages = list(request.messages)
        if not request.body.get("tools"):
            return Reply(SUMMARY, usage=Usage(prompt_tokens=900, completion_tokens=40))
        users = [
            i
            for i, m in enumerate(messages)
            if m.get("role") == "user" and _text(m.get("content")) in by_prompt
        ]
        if not users:
            return Reply("ok")
        last = users[-1]
        step = sum(1 for m in messages[last + 1 :] if m.get("role") == "assistant")
        replies = by_prompt[_text(messages[last].get("content"))]
        chosen = replies[step] if step < len(replies) else Reply("done")
        usage = Usage(sum(len(json.dumps(m)) // 4 for m in messages), max(1, len(chosen.text) // 4))
        return replace(chosen, usage=usage)

    return reply


_TOOLS: Final = Recipe(
    "tools",
    (
        Turn(
            "Look at the project and read notes.txt",
            (
                Reply("Listing first.", calls=(bash("call_ls", "ls"),)),
                Reply(calls=(read("call_read", "notes.txt"),)),
                Reply("notes.txt lists three tasks: tidy, test, ship."),
            ),
        ),
        Turn(
            "Run the check script",
            (
                Reply(calls=(bash("call_check", "sh check.sh"),)),
                Reply(
                    "It failed; two probes in parallel.",
                    calls=(bash("call_one", "echo one"), bash("call_two", "echo two")),
                ),
                Reply("check.sh exits 3: the ship step is missing."),
            ),
        ),
        Turn("Try the deploy", (Reply("upstream rejected the request", status=400),)),
        Turn("Summarize where we are", (Reply("Tidy done, test failing (exit 3), ship blocked."),)),
    ),
)

_LONG = tuple(
    Turn(
        f"Step {n}: print the numbers of batch {n}",
        (
            Reply(calls=(bash(f"call_seq_{n}", f"seq {n * 10000} {n * 10000 + 700}"),)),
            Reply(f"Batch {n} printed: {n * 10000} to {n * 10000 + 700}."),
        ),
    )
    for n in range(1, 7)
)
_COMPACTED: Final = Recipe(
    "compacted",
    _LONG,
    context_window=6000,
    compaction={"reserveTokens": 1500, "keepRecentTokens": 1200},
)
_BRANCHED: Final = Recipe(
    "branched",
    (*_TOOLS.turns[:2], Turn("Continue on the branch", (Reply("Back on the notes branch."),))),
    navigate_after=2,
)
RECIPES: Final = (_TOOLS, _COMPACTED, _BRANCHED)

# What pi's `/tree` and its extensions do, through pi's own SessionManager (the package's export):
# a label, a branch back to the first answer with a summary of the abandoned path, an extension's
# custom message, a `!` bash execution, a context edit of the first answer, and a session name.
_NAVIGATE: Final = """
const { SessionManager } = await import(process.env.PI_INDEX);
const manager = SessionManager.open(process.env.PI_SESSION);
const messages = manager.getEntries().filter((e) => e.type === "message");
const prompt = messages.find((e) => e.message.role === "user");
const answer = messages.find((e) => e.message.role === "assistant"
  && !e.message.content.some((b) => b.type === "toolCall"));
manager.appendLabelChange(prompt.id, "start");
manager.branchWithSummary(answer.id, "The abandoned branch ran check.sh: it exits 3.");
manager.appendCustomMessageEntry("notes-ext", "Extension note: ship is tracked in notes.txt", true);
manager.appendMessage({ role: "bashExecution", command: "cat notes.txt", output: "tasks: tidy test ship",
  exitCode: 0, cancelled: false, truncated: false, timestamp: Date.now() });
manager.appendContextEdit(answer.id, { content: "notes.txt: tidy, test, ship (edited)" });
manager.appendSessionInfo("branched notes session");
"""


def _navigate(pi: PiInstallation, session: Path) -> None:
    """Branch `session` with pi's own SessionManager, as `/tree` and extensions do."""
    index = pi.cli.parents[1] / "index.js"
    environment = {"PATH": os.environ.get("PATH", ""), "PI_INDEX": index.as_uri(), "PI_SESSION": str(session)}
    command = [str(pi.node), "--input-type=module", "-e", _NAVIGATE]
    subprocess.run(command, env=environment, check=True, capture_output=True, timeout=_TIMEOUT_SECONDS)


def _project(work_dir: Path) -> None:
    work_dir.mkdir(parents=True, exist_ok=True)
    (work_dir / "notes.txt").write_text("tasks:\n- tidy\n- test\n- ship\n")
    (work_dir / "check.sh").write_text("echo checking; echo 'ship step missing' >&2; exit 3\n")


def record(recipe: Recipe, pi: PiInstallation, scratch: Path) -> Path:
    """Drive pi through `recipe` against the scripted model; the session file it wrote."""
    agent_dir, work_dir = scratch / "agent", scratch / "work"
    _project(work_dir)
    with ChatCaptureServer(scripted_model(recipe.turns)) as api:
        write_agent_dir(agent_dir, f"{api.base_url}/v1", model_window=recipe.context_window)
        if recipe.compaction:
            (agent_dir / "settings.json").write_text(json.dumps({"compaction": dict(recipe.compaction)}))
        session: Path | None = None
        for number, turn in enumerate(recipe.turns):
            if session is not None and number == recipe.navigate_after:
                _navigate(pi, session)
            resume = ["--session", str(session)] if session else []
            run_pi(
                pi,
                ["-p", "--model", FAKE_MODEL, *resume, turn.prompt],
                agent_dir=agent_dir,
                work_dir=work_dir,
                timeout=_TIMEOUT_SECONDS,
            )
            session = session or next((agent_dir / "sessions").glob("*/*.jsonl"))
    if session is None:
        raise RuntimeError(f"pi wrote no session for {recipe.name}")
    return session


def main(target: Path) -> None:
    """Record every recipe into `target/<name>.jsonl`."""
    pi = require_pi()
    for recipe in RECIPES:
        with tempfile.TemporaryDirectory(prefix="pi-record-") as scratch:
            written = record(recipe, pi, Path(scratch))
            shutil.copyfile(written, target / f"{recipe.name}.jsonl")
            print(target / f"{recipe.name}.jsonl")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
