"""One synthetic coding session, turn by turn, written through a :class:`TranscriptBuilder`.

A :class:`SessionPlan` fixes what a session will contain (version, byte budget, human language,
hooks, thinking, rewinds, compactions, subagents, pointer style); :class:`SessionScenario` plays
it: prompts, streamed replies, single and parallel tool calls, subagents in their own files (or
inline sidechains for old versions), Claude Code compactions, rewinds that leave excluded
branches, and the side records each version writes around them.
"""

from __future__ import annotations

import base64
import random
import uuid
from collections import deque
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from enum import StrEnum
from typing import IO, Any

from pipeline.testing._records import Feature, Layout, profile_for
from pipeline.testing._state import StateWriter
from pipeline.testing._subagent import Delegation, SubagentOutcome, write_compact_agent, write_subagent
from pipeline.testing._textbank import TextBank
from pipeline.testing._tools import Project, ToolKit
from pipeline.testing.builder import TranscriptBuilder

__all__ = ["LastPromptStyle", "SessionOutcome", "SessionPlan", "SessionScenario"]

OpenSubagent = Callable[[str], AbstractContextManager[IO[bytes]]]

MAX_MESSAGES_PER_TURN = 12  # assistant messages (tool rounds) in one turn
TURN_SHARE = (0.03, 0.25)  # a turn uses a random share of the remaining budget, in this range
TURN_MAX_BYTES = 900_000  # ... and never more than this, so big sessions have many turns
COMPACT_MIN_BYTES = 150_000  # at least this many bytes between two compactions
PARALLEL_RATE = 0.22  # share of tool rounds issued as parallel calls
HOOK_COMMANDS = (
    "${CLAUDE_PLUGIN_ROOT}/scripts/pre-tool-capture.sh",
    "cd ${CLAUDE_PLUGIN_ROOT}/hooks && bun run ./guardian.ts",
    "/home/dev/.claude/hooks/tmux-waiting.sh clear",
    "bd prime",
)


class LastPromptStyle(StrEnum):
    """Which ``last-prompt`` records a session writes."""

    NONE = "none"
    TEXT = "text"  # lastPrompt only (observed in 2.1.114)
    LEAF = "leaf"  # lastPrompt + leafUuid


@dataclass(frozen=True, slots=True)
class SessionPlan:
    """Everything decided about a session before it is written."""

    version: str
    budget: int
    lang: str
    hooks: bool
    thinking: bool
    rewind_rate: float
    compaction: bool
    subagent_rate: float
    image_rate: float
    last_prompt: LastPromptStyle
    head_summaries: tuple[tuple[str, str], ...] = ()
    tail_summary: bool = False
    slug: str | None = None
    big_output_rate: float = 0.06
    compact_every: tuple[float, float] = (0.2, 0.45)  # bytes between compactions, as budget shares
    compact_until: float = 0.9  # no compaction once this share of the budget is written
    turn_max_bytes: int = TURN_MAX_BYTES


@dataclass(frozen=True, slots=True)
class SessionOutcome:
    """What a written session leaves behind for the fleet manifest and later sessions."""

    leaf_uuid: str | None
    subagents: tuple[SubagentOutcome, ...]


class SessionScenario:
    """Play a :class:`SessionPlan` into a builder (see the module docstring)."""

    def __init__(
        self,
        *,
        rng: random.Random,
        bank: TextBank,
        project: Project,
        plan: SessionPlan,
        builder: TranscriptBuilder,
        open_subagent: OpenSubagent,
    ) -> None:
        self._rng = rng
        self._bank = bank
        self._project = project
        self._plan = plan
        self._b = builder
        self._open_subagent = open_subagent
        self._profile = profile_for(plan.version)
        self._trailing = self._profile.layout is Layout.TRAILING
        self._modern = self._profile.source_tool_uuid  # 2.1.x: subagent files, turn durations
        self._tools = ToolKit(
            rng,
            bank,
            project,
            verbose_edits=self._modern and not self._trailing,
            big_rate=plan.big_output_rate,
        )
        self._subagents: list[SubagentOutcome] = []
        self._recent: deque[str] = deque(maxlen=24)
        self._compact_every = max(COMPACT_MIN_BYTES, int(plan.budget * rng.uniform(*plan.compact_every)))
        self._last_compact_at = 0
        self._permission_mode = rng.choice(("default", "default", "acceptEdits", "bypassPermissions"))
        # Seeded from the generator's words, not hash(getstate()): that tuple ends in None, whose
        # hash is its address before Python 3.12, so fleets differed from one process to the next.
        self._state = StateWriter(str(rng.getstate()[1][:8]))  # draws nothing from `rng`

    # ------------------------------------------------------------------ session
    def run(self) -> SessionOutcome:
        """Write the whole session and return its outcome."""
        self._open()
        turn_parents: list[str | None] = []
        edited: str | None = None
        continuing = False
        first = True  # a session has a first turn, however small its budget
        while first or self._written() < self._plan.budget:
            first = False
            parent = self._b.cursor
            self._turn(edited, prompt=not continuing)
            edited, continuing = None, False
            turn_parents.append(parent)
            if self._maybe_compact():
                # Auto-compaction strikes mid-task: the agent resumes from the summary unprompted.
                turn_parents.clear()
                continuing = True
                continue
            if self._maybe_rewind(turn_parents):
                edited = self._edit_prompt(self._b.last_prompt_text or "")
            self._between_turns()
        self._close()
        return SessionOutcome(self._b.cursor, tuple(self._subagents))

    def _open(self) -> None:
        b, rng, plan = self._b, self._rng, self._plan
        for summary, leaf in plan.head_summaries:
            b.summary_record(summary, leaf)
        if self._trailing:
            b.permission_mode(self._permission_mode)
            if plan.hooks:
                b.attachment(
                    "hook_success",
                    hookName="SessionStart:startup",
                    toolUseID=self._uuid(),
                    hookEvent="SessionStart",
                    content="",
                    stdout="",
                    stderr="",
                    exitCode=0,
                    command=HOOK_COMMANDS[2],
                    durationMs=rng.randint(50, 1500),
                )
            self._state.session_start(b)
            if rng.random() < 0.15:
                b.custom_title(self._bank.sentences(rng, 1)[:60])
        elif plan.hooks and self._modern:
            tool_id = self._uuid()
            for command in rng.sample(HOOK_COMMANDS, rng.randint(1, 4)):
                b.progress(
                    "SessionStart", tool_use_id=tool_id, hook_name="SessionStart:startup", command=command
                )

    def _close(self) -> None:
        b, rng = self._b, self._rng
        if rng.random() < 0.2:
            self._local_command("/exit", "See ya!")
        if self._plan.tail_summary:
            b.summary_record(self._bank.sentences(rng, 1)[:70], b.cursor)
        if self._plan.last_prompt is not LastPromptStyle.NONE:
            b.last_prompt(with_leaf=self._plan.last_prompt is LastPromptStyle.LEAF)

    # ------------------------------------------------------------------ turns
    def _turn(self, edited: str | None, *, prompt: bool = True) -> None:
        b, rng, plan = self._b, self._rng, self._plan
        remaining = max(2_000, plan.budget - self._written())
        if prompt:
            self._prompt(edited)
        if rng.random() < 0.02:
            b.system("api_error")
        budget = min(plan.turn_max_bytes, int(remaining * rng.uniform(*TURN_SHARE)))
        rounds = 0 if budget < 3_000 else min(MAX_MESSAGES_PER_TURN, int(rng.expovariate(1 / 2.8)) + 1)
        cap = max(600, budget // max(1, rounds))
        for _ in range(rounds):
            self._tool_message(cap, budget)
        if self._trailing:
            self._state.background(self._b)
        self._final_message(min(budget, 6_000))
        self._end_turn()

    def _prompt(self, edited: str | None) -> None:
        """The human prompt opening a turn, with the snapshot and hook records around it."""
        b, rng, plan = self._b, self._rng, self._plan
        if self._profile.model_first:
            b.file_history_snapshot()
        text = edited or self._bank.prompt(rng, plan.lang)
        if rng.random() < plan.image_rate:
            data = base64.b64encode(rng.randbytes(rng.randint(1_000, 30_000))).decode()
            b.user([b.text(text), b.image(data)], permissionMode=self._permission_mode)
        else:
            b.user(text, permissionMode=self._permission_mode)
        if self._trailing and plan.hooks:
            b.hook_attachment("UserPromptSubmit", stdout="Status set to busy\n")

    def _lead(self) -> list[dict[str, Any]]:
        """Blocks streamed before a message's first tool call: blank text, thinking, a sentence."""
        b, rng = self._b, self._rng
        lead: list[dict[str, Any]] = []
        if self._modern and rng.random() < 0.25:
            lead.append(b.text("\n\n"))
        if self._plan.thinking and rng.random() < 0.5:
            lead.append(self._thinking_block(self._bank.thinking(rng, rng.randint(1, 8))))
        if rng.random() < 0.6:
            lead.append(b.text(self._bank.sentences(rng, rng.randint(1, 3), self._plan.lang)))
        return lead

    def _tool_message(self, cap: int, big_cap: int) -> None:
        """One assistant message: lead blocks, then 1-4 tool rounds sharing its message id."""
        b, rng, plan = self._b, self._rng, self._plan
        lead = self._lead()
        mid: str | None = None
        for _ in range(rng.randint(1, 4)):
            if rng.random() < plan.subagent_rate:
                mid = self._task(mid, lead)
            elif rng.random() < PARALLEL_RATE:
                n = rng.randint(2, 5)
                specs = [self._tools.pick(max(300, cap // n), big_cap=big_cap // n) for _ in range(n)]
                order = list(range(n))
                if rng.random() < 0.3:
                    rng.shuffle(order)
                calls = b.parallel_tool_calls(specs, lead=lead, message_id=mid, hooks=plan.hooks, order=order)
                mid = calls[0].message_id
                self._recent.extend(c.result_uuid for c in calls)
            else:
                spec = self._tools.pick(cap, big_cap=big_cap)
                (call,) = b.parallel_tool_calls([spec], lead=lead, message_id=mid, hooks=plan.hooks)
                mid = call.message_id
                self._recent.append(call.result_uuid)
            lead = []

    def _final_message(self, size: int) -> None:
        b, rng, lang = self._b, self._rng, self._plan.lang
        blocks: list[dict[str, Any]] = []
        if self._plan.thinking and rng.random() < 0.3:
            blocks.append(self._thinking_block(self._bank.thinking(rng, rng.randint(1, 5))))
        if size > 1_500 and rng.random() < 0.4:
            body = self._bank.markdown(rng, rng.randint(400, size), lang, self._project.language)
        else:
            body = self._bank.sentences(rng, rng.randint(1, 6), lang)
        blocks.append(b.text(body))
        self._recent.append(b.assistant(*blocks).uuid)

    def _end_turn(self) -> None:
        b, rng, plan = self._b, self._rng, self._plan
        if plan.hooks and self._modern and not self._trailing:
            tool_id = self._uuid()
            b.progress("Stop", tool_use_id=tool_id, hook_name="Stop", command=HOOK_COMMANDS[2])
            b.system(
                "stop_hook_summary",
                hookCount=1,
                hookInfos=[{"command": HOOK_COMMANDS[2]}],
                hookErrors=[],
                preventedContinuation=False,
                stopReason="",
                hasOutput=True,
                toolUseID=tool_id,
            )
        if self._modern and rng.random() < 0.7:
            extra: dict[str, Any] = {"messageCount": rng.randint(4, 80)} if self._trailing else {}
            b.system("turn_duration", durationMs=rng.randint(2_000, 900_000), **extra)
        if plan.last_prompt is not LastPromptStyle.NONE and rng.random() < 0.5:
            b.last_prompt(with_leaf=plan.last_prompt is LastPromptStyle.LEAF)

    # ------------------------------------------------------------------ events between turns
    def _between_turns(self) -> None:
        b, rng = self._b, self._rng
        b.pause(rng.uniform(5, 900))
        if self._profile.model_first and rng.random() < 0.06:
            b.queue_operation("enqueue", self._bank.prompt(rng, self._plan.lang))
            b.queue_operation("dequeue")
        if rng.random() < 0.04:
            self._local_command("/model", "Kept model as Default (recommended)")
        if self._trailing:
            self._state.between_turns(b, self._bank.sentences(self._state.rng, 1))
            self._state.finished(b)

    def _maybe_rewind(self, turn_parents: list[str | None]) -> bool:
        """Fork the next prompt from before one of the last turns (a rewind or an edited prompt)."""
        if len(turn_parents) < 2 or self._rng.random() >= self._plan.rewind_rate:
            return False
        back = self._rng.randint(1, min(3, len(turn_parents) - 1))
        target = turn_parents[-back]
        if target is None:
            return False
        self._b.rewind(target)
        del turn_parents[-back:]
        return True

    def _maybe_compact(self) -> bool:
        b, rng, plan = self._b, self._rng, self._plan
        if not plan.compaction or not self._profile.model_first:
            return False
        since = b.byte_count - self._last_compact_at
        if since < self._compact_every or b.byte_count > plan.budget * plan.compact_until:
            return False
        summary = self._bank.markdown(rng, rng.randint(3_000, 18_000), plan.lang, self._project.language)
        if self._modern and not self._trailing and self._recent and rng.random() < 0.5:
            self._subagents.append(
                write_compact_agent(self._b, rng, tuple(self._recent), summary, self._open_subagent)
            )
        b.compact(summary, pre_tokens=rng.randint(150_000, 190_000))
        if plan.hooks and self._modern and not self._trailing:
            tool_id = self._uuid()
            for command in HOOK_COMMANDS[2:]:
                b.progress(
                    "SessionStart", tool_use_id=tool_id, hook_name="SessionStart:compact", command=command
                )
        self._last_compact_at = b.byte_count
        return True

    def _local_command(self, name: str, stdout: str) -> None:
        b = self._b
        if self._modern and not self._trailing and self._rng.random() < 0.5:
            b.system(
                "local_command",
                f"<command-name>{name}</command-name>\n            <command-message>"
                f"{name[1:]}</command-message>\n            <command-args></command-args>",
            )
            b.system("local_command", f"<local-command-stdout>{stdout}</local-command-stdout>")
            return
        b.meta_user(
            "<local-command-caveat>Caveat: The messages below were generated by the user while running "
            "local commands. DO NOT respond to these messages or otherwise consider them in your "
            "response unless the user explicitly asks you to.</local-command-caveat>"
        )
        echo = (
            f"<command-name>{name}</command-name>\n"
            f"            <command-message>{name[1:]}</command-message>\n"
            "            <command-args></command-args>"
        )
        b.user(echo, human=False)
        b.user(f"<local-command-stdout>{stdout}</local-command-stdout>", human=False)

    # ------------------------------------------------------------------ subagents
    def _task(self, mid: str | None, lead: list[dict[str, Any]]) -> str:
        """Delegate to a subagent (own file for 2.1.x, inline sidechain before); return the message id."""
        b, rng = self._b, self._rng
        if lead:
            mid = b.assistant(*lead, message_id=mid, tool_follows=True).message_id
        prompt = (
            self._bank.delegation(rng)
            + "\n\nKey files:\n"
            + "\n".join("- " + p for p in rng.sample(self._project.paths, min(4, len(self._project.paths))))
        )
        name = "Agent" if self._trailing else "Task"
        block = b.tool_use(
            name,
            {
                "description": rng.choice(("Explore", "Investigate", "Summarize", "Map"))
                + " "
                + self._bank.identifier(rng).replace("_", " "),
                "subagent_type": rng.choice(("Explore", "general-purpose")),
                "prompt": prompt,
            },
        )
        msg = b.assistant(block, message_id=mid)
        report = self._bank.markdown(rng, rng.randint(800, 9_000), "en", self._project.language)
        outcome = write_subagent(
            b,
            rng,
            Delegation(prompt, report, msg.message_id, block["id"]),
            tools=self._tools,
            open_subagent=self._open_subagent if self._modern else None,
            hooks=self._plan.hooks,
        )
        if outcome is not None:
            self._subagents.append(outcome)
            b.mark(Feature.HAS_SUBAGENTS)
        return msg.message_id

    def _edit_prompt(self, text: str) -> str:
        return (text + " " + self._bank.sentences(self._rng, 1, self._plan.lang)).strip()

    def _thinking_block(self, text: str) -> dict[str, Any]:
        """A thinking block; 2.1.1xx stores thinking redacted (empty text, signature only)."""
        return self._b.thinking("" if self._trailing else text)

    def _written(self) -> int:
        """Bytes written for this session so far, its subagent files included."""
        return self._b.byte_count + sum(s.bytes for s in self._subagents)

    def _uuid(self) -> str:
        return str(uuid.UUID(int=self._rng.getrandbits(128), version=4))
