"""A scripted loopback model that makes the real CodeWhale write real sessions (the fixtures).

CodeWhale talks to an OpenAI-compatible server (`pipeline/proof/chat_capture.py`); `ScriptedModel`
answers its agent's turns (requests offering tools it may call) from a queue of `Reply`s, its own
compaction request (the history, then "Write a handoff note ...") with a fixed handoff note, and
anything else with `ok`. `record` runs one prompt after another in one session in a throwaway home
(`pipeline/proof/codewhale/whale_home.py`): `codewhale exec --auto PROMPT` first, then
`codewhale exec --auto --resume <id> PROMPT`; CodeWhale runs the tools itself in the workspace.
Regenerate the fixtures (ids, times and paths change; the tests read shapes, not ids) with::

    .venv/bin/python -m tests.support.codewhale_model tests/fixtures/codewhale
"""

from __future__ import annotations

import sys
import tempfile
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pipeline.proof.chat_capture import ChatCaptureServer, ChatRequest, Reply, ToolCall
from pipeline.proof.codewhale.whale_client import require_codewhale
from pipeline.proof.codewhale.whale_home import JUDGE_WINDOW, MODEL, WhaleHome, codewhale_environment
from pipeline.proof.process_group import run_in_process_group

COMPACT_OPENING: Final = "Write a handoff note so this session's work can continue"  # COMPACT_PROMPT_OPENING
HANDOFF: Final = (
    "## Objective\nKeep the module reviews in notes.\n\n## User direction\nNone\n\n"
    "## Permissions and limits\nNone\n\n## Done\nThe parser, lexer and cache modules pass their checks; "
    "each has its notes file.\n\n## Changed files\nparser.md, lexer.md, cache.md created.\n\n"
    "## Still running\nNone\n\n## Verification left\nNone\n\n## Open questions\nNone\n\n"
    "## Next action\nReview the next module.\n\n## Reference\nEach review runs `seq` over 1..400."
)
ANCHOR: Final = "notes.txt must never be deleted"
COMPACT_WINDOW: Final = 40_000  # at 14% of it the third review's output passes the trigger
RUN_SECONDS: Final = 300.0  # one prompt, tools and all, on a 2-core machine shared with others


@dataclass(frozen=True, slots=True)
class Step:
    """One prompt and the agent's replies to it, in order."""

    prompt: str
    replies: tuple[Reply, ...] = ()


@dataclass(frozen=True, slots=True)
class Recipe:
    """A fixture: its steps, and the window and threshold its run compacts at (None: never)."""

    steps: tuple[Step, ...]
    window: int | None = None  # None: the judge's window, where nothing compacts
    compact_at_percent: float | None = None
    anchors: tuple[str, ...] = ()


def _last_user_text(request: ChatRequest) -> str:
    users = [m for m in request.messages if isinstance(m, dict) and m.get("role") == "user"]
    content = users[-1].get("content") if users else ""
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


class ScriptedModel:
    """Answers the agent's turns from a queue, its compaction with `HANDOFF`, the rest with `ok`."""

    def __init__(self) -> None:
        self.queue: deque[Reply] = deque()

    def __call__(self, _number: int, request: ChatRequest) -> Reply:
        if _last_user_text(request).startswith(COMPACT_OPENING):
            return Reply(HANDOFF)
        agent_turn = bool(request.body.get("tools")) and request.body.get("tool_choice") != "none"
        return self.queue.popleft() if agent_turn and self.queue else Reply("ok")


def _pin(workspace: Path, anchors: Sequence[str]) -> None:
    """The anchors file as `/anchor <text>` appends to it (`\\n---\\n<text>\\n` each)."""
    if anchors:
        (workspace / ".codewhale").mkdir(exist_ok=True)
        (workspace / ".codewhale" / "anchors.md").write_text("".join(f"\n---\n{a}\n" for a in anchors))


def record(executable: Path, scratch: Path, recipe: Recipe) -> Path:
    """Run `recipe` as one session with the real CodeWhale; the session document it wrote."""
    window = recipe.window or JUDGE_WINDOW
    home = WhaleHome(scratch / "home", scratch / "project", window, recipe.compact_at_percent)
    home.stage()
    (home.workspace / "notes.txt").write_text("alpha\nbeta\n")
    _pin(home.workspace, recipe.anchors)
    model = ScriptedModel()
    session: Path | None = None
    with ChatCaptureServer(model, model=MODEL) as api:
        env = codewhale_environment(home, f"{api.base_url}/v1")
        for step in recipe.steps:
            model.queue.extend(step.replies)
            resume = ("--resume", session.stem) if session else ()
            command = [str(executable), "exec", "--auto", *resume, "--model", MODEL, "--", step.prompt]
            code, _, stderr = run_in_process_group(command, cwd=home.workspace, env=env, timeout=RUN_SECONDS)
            if code != 0:
                raise RuntimeError(f"codewhale exited {code}: {stderr[-3000:]}")
            if model.queue:
                raise RuntimeError(f"{len(model.queue)} scripted replies unused after {step.prompt!r}")
            session = session or _only_session(home)
    if session is None:
        raise RuntimeError("a recipe needs a step")
    return session


def _only_session(home: WhaleHome) -> Path:
    found = [p for p in sorted(home.sessions.glob("*.json")) if p.stem.count("-") == 4]  # <uuid>.json
    if len(found) != 1:
        raise RuntimeError(f"expected one session document, found {[p.name for p in found]}")
    return found[0]


def _shell(command: str) -> ToolCall:
    return ToolCall("bash", {"command": command})


def tool_steps() -> tuple[Step, ...]:
    """Two prompts: a shell command, a failing read, a parallel write and failing command, a re-read."""
    return (
        Step(
            "make notes",
            (
                Reply("Let me look around.", (_shell("echo hi; ls"),), reasoning="The user wants notes."),
                Reply("", (ToolCall("read_file", {"path": "missing.txt"}),)),
                Reply(
                    "Writing the file.",
                    (ToolCall("write_file", {"path": "todo.txt", "content": "one\ntwo\n"}), _shell("false")),
                ),
                Reply("All done: todo.txt written."),
            ),
        ),
        Step(
            "now count the lines",
            (
                Reply("", (ToolCall("read_file", {"path": "todo.txt"}),)),
                Reply("Counting.", (_shell("wc -l todo.txt notes.txt"),)),
                Reply("todo.txt has 2 lines, notes.txt 2."),
            ),
        ),
    )


def _review(topic: str, checks: int) -> Step:
    return Step(
        f"review the {topic} module and list its numbered checks",
        (
            Reply(f"Listing the {topic} checks.", (_shell(f"seq -f '{topic} check %g: ok' 1 {checks}"),)),
            Reply(
                "", (ToolCall("write_file", {"path": f"{topic}.md", "content": f"# {topic}\nall pass\n"}),)
            ),
            Reply(f"The {topic} module passes all {checks} checks; notes are in {topic}.md."),
        ),
    )


def long_steps() -> tuple[Step, ...]:
    """A long task: six reviews, each a command with KBs of output, a write and a closing note."""
    topics = ("parser", "lexer", "cache", "scheduler", "logger", "router")
    return tuple(_review(topic, 400) for topic in topics)


def compacted_recipe() -> Recipe:
    """Six reviews in a small window with an anchor pinned: CodeWhale compacts itself during the
    third (its handoff note after that round, the anchor restated, its Agent-topology note), then
    three more reviews follow."""
    topics = ("parser", "lexer", "cache", "scheduler", "logger", "router")
    steps = tuple(_review(topic, 400) for topic in topics)
    return Recipe(steps, window=COMPACT_WINDOW, compact_at_percent=14.0, anchors=(ANCHOR,))


BIG_MODULES: Final = (
    "parser", "lexer", "cache", "scheduler", "logger", "router", "auth", "storage",
    "metrics", "config", "plugins", "network", "queue", "render",
)  # fmt: skip


def _audit(topic: str, checks: int) -> Step:
    """One module of the audit: a command with about 12 KB of output, a write, a count, a note."""
    return Step(
        f"audit the {topic} module: list its numbered checks and keep notes",
        (
            Reply(f"Listing the {topic} checks.", (_shell(f"seq -f '{topic} check %g: passed' 1 {checks}"),)),
            Reply(
                "", (ToolCall("write_file", {"path": f"{topic}.md", "content": f"# {topic}\nall pass\n"}),)
            ),
            Reply("Checking the notes.", (_shell(f"wc -l {topic}.md notes.txt"),)),
            Reply(f"The {topic} module passes all {checks} checks; notes are in {topic}.md."),
        ),
    )


def big_steps() -> tuple[Step, ...]:
    """A session over the default token floor, as users' long tasks are: fourteen audits, each a
    command with KBs of output, a write, a count and a closing note, then a small last round (the
    one seed 000 protects), a listing and a one-line answer."""
    audits = tuple(_audit(topic, 500) for topic in BIG_MODULES)
    last = Step(
        "which modules have notes now?",
        (Reply("", (_shell("ls *.md"),)), Reply(f"All {len(BIG_MODULES)} audited modules have notes.")),
    )
    return (*audits, last)


RECIPES: Final = {
    "tools.json": lambda: Recipe(tool_steps()),
    "long.json": lambda: Recipe(long_steps()),
    "compacted.json": compacted_recipe,
    "big.json": lambda: Recipe(big_steps()),
}


def main(target: Path, names: Sequence[str] = ()) -> None:
    """Write the fixtures (or those named) into `target`."""
    executable = require_codewhale()
    target.mkdir(parents=True, exist_ok=True)
    for name, recipe in RECIPES.items():
        if names and name not in names:
            continue
        with tempfile.TemporaryDirectory(prefix="codewhale-fixture-") as scratch:
            session = record(executable, Path(scratch), recipe())
            (target / name).write_bytes(session.read_bytes())


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
