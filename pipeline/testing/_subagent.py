"""Subagent transcripts of a synthetic session: Task/Agent delegations and compaction agents.

Claude Code 2.1.x writes each subagent to ``<session>/subagents/agent-<id>.jsonl`` (every record
``isSidechain: true`` with an ``agentId``), mirrors its first steps into the parent as
``agent_progress`` records, and answers the parent's tool call with the agent's report. Older
versions wrote the subagent inline, as a sidechain of the session file itself. Compaction agents
(``agent-acompact-*``) hang their first records off uuids of the parent session.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import IO, Any

from pipeline.testing._records import Feature, Layout, profile_for
from pipeline.testing._tools import ToolKit
from pipeline.testing.builder import TranscriptBuilder

__all__ = ["COMPACT_INSTRUCTIONS", "Delegation", "SubagentOutcome", "write_compact_agent", "write_subagent"]

OpenSubagent = Callable[[str], AbstractContextManager[IO[bytes]]]

MIRRORED_STEPS = 6  # agent_progress records mirroring the subagent's first records in the parent
SUBAGENT_RESULT_CAP = 24_000  # largest single tool result inside a subagent
COMPACT_INSTRUCTIONS = (
    "Your task is to create a detailed summary of the conversation so far, paying close attention to "
    "the user's explicit requests and your previous actions.\nThis summary should be thorough in "
    "capturing technical details, code patterns, and architectural decisions that would be essential "
    "for continuing development work without losing context."
)


@dataclass(frozen=True, slots=True)
class Delegation:
    """A parent's Task/Agent call: what it asks, what the agent will report, which call it answers."""

    prompt: str
    report: str
    message_id: str
    tool_use_id: str


@dataclass(frozen=True, slots=True)
class SubagentOutcome:
    """A subagent file that was written: its id and what it contains."""

    agent_id: str
    lines: int
    bytes: int
    features: frozenset[Feature]


def _child(
    parent: TranscriptBuilder, rng: random.Random, agent_id: str, sink: IO[bytes], **kw: Any
) -> TranscriptBuilder:
    """A builder for a subagent file that shares the parent's session, cwd, version and clock."""
    return TranscriptBuilder(
        parent.session_id,
        seed=rng.getrandbits(63),
        cwd=parent.cwd,
        version=parent.version,
        git_branch=parent.git_branch,
        agent_id=agent_id,
        sidechain=True,
        slug=parent.slug,
        start=parent.now,
        sink=sink,
        **kw,
    )


def _work(sb: TranscriptBuilder, rng: random.Random, call: Delegation, *, tools: ToolKit, hooks: bool) -> int:
    """The subagent's own conversation; returns how many tool calls it made."""
    sb.user(call.prompt, human=False)
    made = 0
    mid: str | None = None
    for _ in range(rng.randint(2, 9)):
        n = rng.randint(2, 4) if rng.random() < 0.35 else 1
        specs = [tools.pick(SUBAGENT_RESULT_CAP // n, read_only=True) for _ in range(n)]
        lead = [sb.text("I'll look at the relevant files.")] if made == 0 else []
        calls = sb.parallel_tool_calls(specs, lead=lead, message_id=mid, hooks=hooks)
        mid = calls[0].message_id if rng.random() < 0.6 else None
        made += n
    sb.assistant(sb.text(call.report))
    return made


def _mirror(record: dict[str, Any]) -> dict[str, Any]:
    """The copy of a subagent record that an ``agent_progress`` payload carries."""
    if record.get("type") == "assistant":
        return {
            "type": "assistant",
            "timestamp": record["timestamp"],
            "message": record["message"],
            "requestId": record.get("requestId"),
            "uuid": record["uuid"],
        }
    return {
        "type": "user",
        "message": record["message"],
        "uuid": record["uuid"],
        "timestamp": record["timestamp"],
    }


def write_subagent(
    b: TranscriptBuilder,
    rng: random.Random,
    call: Delegation,
    *,
    tools: ToolKit,
    open_subagent: OpenSubagent | None,
    hooks: bool,
) -> SubagentOutcome | None:
    """Run a subagent for the parent's delegating tool call and write that call's result.

    Without ``open_subagent`` (versions before 2.1) the subagent is written inline as a sidechain
    of ``b`` and ``None`` is returned.
    """
    if open_subagent is None:
        _write_inline(b, rng, call, tools)
        return None
    trailing = profile_for(b.version).layout is Layout.TRAILING
    agent_id = "a" + (f"{rng.getrandbits(64):016x}" if trailing else f"{rng.getrandbits(24):06x}")
    seen: list[dict[str, Any]] = []
    start_ms = int(b.now.timestamp() * 1000)

    def tap(rec: dict[str, Any]) -> None:
        if len(seen) < MIRRORED_STEPS and rec.get("type") in ("user", "assistant"):
            seen.append(rec)

    with open_subagent(agent_id) as sink:
        sb = _child(b, rng, agent_id, sink, tap=tap)
        made = _work(sb, rng, call, tools=tools, hooks=hooks)
    elapsed = int(sb.now.timestamp() * 1000) - start_ms
    if hooks and not trailing:
        _mirror_progress(b, call, agent_id, seen)
    b.pause(elapsed / 1000)
    _write_report(b, rng, call, agent_id, made, elapsed)
    return SubagentOutcome(agent_id, sb.line_count, sb.byte_count, sb.features)


def _write_inline(b: TranscriptBuilder, rng: random.Random, call: Delegation, tools: ToolKit) -> None:
    """Before 2.1: the subagent's steps are a sidechain of the parent file."""
    with b.sidechain():
        made = _work(b, rng, call, tools=tools, hooks=False)
    b.tool_result(
        call.tool_use_id,
        [{"type": "text", "text": call.report}],
        tool_use_result={
            "content": [{"type": "text", "text": call.report}],
            "totalDurationMs": rng.randint(10_000, 400_000),
            "totalTokens": rng.randint(8_000, 90_000),
            "totalToolUseCount": made,
        },
    )


def _mirror_progress(
    b: TranscriptBuilder, call: Delegation, agent_id: str, seen: Sequence[dict[str, Any]]
) -> None:
    """The parent's agent_progress rows that mirror the subagent's first steps."""
    for rec in seen:
        b.progress(
            data={
                "message": _mirror(rec),
                "normalizedMessages": [],
                "type": "agent_progress",
                "prompt": call.prompt,
                "agentId": agent_id,
            },
            tool_use_id="agent_" + call.message_id,
            parent_tool_use_id=call.tool_use_id,
        )


def _write_report(
    b: TranscriptBuilder, rng: random.Random, call: Delegation, agent_id: str, made: int, elapsed: int
) -> None:
    """The delegating call's result: the subagent's report and its usage note."""
    tokens = rng.randint(8_000, 120_000)
    usage_note = (
        f"agentId: {agent_id} (for resuming to continue this agent's work if needed)\n"
        f"<usage>total_tokens: {tokens}\ntool_uses: {made}\nduration_ms: {elapsed}</usage>"
    )
    result = {
        "status": "completed",
        "prompt": call.prompt,
        "agentId": agent_id,
        "content": [{"type": "text", "text": call.report}],
        "totalDurationMs": elapsed,
        "totalTokens": tokens,
        "totalToolUseCount": made,
    }
    b.tool_result(
        call.tool_use_id,
        [{"type": "text", "text": call.report}, {"type": "text", "text": usage_note}],
        tool_use_result=result,
    )


def write_compact_agent(
    b: TranscriptBuilder,
    rng: random.Random,
    parent_uuids: Sequence[str],
    summary: str,
    open_subagent: OpenSubagent,
) -> SubagentOutcome:
    """The ``agent-acompact-*`` file of a compaction: reminders and the summarizing request.

    Its user records hang off uuids of the parent session (absent from this file), as in the
    corpus; only the final assistant reply has its parent inside the file.
    """
    agent_id = f"acompact-{rng.getrandbits(24):06x}"
    with open_subagent(agent_id) as sink:
        sb = _child(b, rng, agent_id, sink, root_parent=parent_uuids[-1])
        for parent in rng.sample(list(parent_uuids), min(len(parent_uuids), rng.randint(0, 4))):
            sb.rewind(parent, external=True)
            sb.meta_user(
                "<system-reminder>\nPostToolUse:Edit hook additional context: formatter ran, "
                "1 file changed\n</system-reminder>"
            )
        sb.rewind(parent_uuids[-1], external=True)
        sb.user(COMPACT_INSTRUCTIONS, human=False)
        sb.assistant(
            sb.text(
                "\n\n<analysis>\nLet me chronologically analyze the conversation.\n</analysis>\n\n"
                "<summary>\n" + summary + "\n</summary>"
            )
        )
    return SubagentOutcome(agent_id, sb.line_count, sb.byte_count, sb.features)
