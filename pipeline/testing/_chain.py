"""The message chain of a transcript builder: cursor, envelope, and the non-message records on it.

``ChainWriter`` places every uuid-bearing record: it builds the version's envelope around the
body, hangs the record off the cursor and moves the cursor on. Besides that plumbing it writes
the chain records that are not conversation messages: hook ``progress``, ``attachment``,
``system`` events and Claude Code's own compaction pair. :class:`TranscriptBuilder` adds prompts,
assistant messages and tool calls on top.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any

from pipeline.testing._records import (
    Envelope,
    Feature,
    Profile,
    Stamper,
    api_error_fields,
    profile_for,
    system_body,
)
from pipeline.testing._writer import CURSOR, STEP_SIDE, RecordWriter

__all__ = ["STEP_FRAGMENT", "ChainWriter", "CompactResult"]

Json = dict[str, Any]

STEP_FRAGMENT = (250, 2_500)  # clock step (ms) before an assistant fragment or a compaction
LARGE_TOOL_RESULT_BYTES = 64 * 1024  # a tool result this large marks Feature.LARGE_TOOL_RESULT
# With a context window set, the billed context never passes this share of it: Claude Code clears
# old tool results from what it sends (microcompaction) and the calls fall back to this range.
CONTEXT_FULL_SHARE = 0.8
CONTEXT_CLEARED_SHARE = (0.3, 0.55)
COMPACT_PREAMBLE = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The summary below covers the earlier portion of the conversation.\n\n"
)
COMPACT_POSTAMBLE = (
    "\n\nPlease continue the conversation from where we left off without asking the user any "
    "further questions. Continue with the last task that you were asked to work on."
)
_NON_LATIN = re.compile(
    "[\u0400-\u04ff\u0590-\u05ff\u0600-\u06ff\u0900-\u097f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]"
)


@dataclass(frozen=True, slots=True)
class CompactResult:
    """The two records of a Claude Code compaction: the boundary root and the summary user line."""

    boundary_uuid: str
    summary_uuid: str


class ChainWriter(RecordWriter):
    """Envelope, cursor and uuid bookkeeping, plus progress/attachment/system/compaction records."""

    def __init__(
        self,
        *,
        stamp: Stamper,
        session_id: str,
        version: str,
        cwd: str,
        git_branch: str | None,
        agent_id: str | None,
        sidechain: bool,
        root_parent: str | None,
        slug: str | None,
        sink: IO[bytes] | None,
        tap: Callable[[Json], None] | None,
        context_window: int | None = None,
    ) -> None:
        super().__init__(session_id=session_id, stamp=stamp, sink=sink, tap=tap)
        self._context_window = context_window
        self._profile: Profile = profile_for(version)
        self._env = Envelope(self._profile, session_id, cwd, git_branch, agent_id)
        self._slug = slug if self._profile.slug else None
        self._slug_on = agent_id is not None  # main sessions gain the slug after the first reply
        self._sidechain = sidechain
        self._cursor = root_parent
        self._uuids: set[str] = set()
        self._tool_owner: dict[str, str] = {}  # tool_use id -> uuid of the fragment that issued it
        self._tool_name: dict[str, str] = {}
        self._last_tool_id: str | None = None
        self._prompt_id: str | None = None
        self._context_tokens = stamp.rng.randint(9_000, 24_000)  # system prompt + tools, cached
        if agent_id is not None:
            self._features.add(Feature.SUBAGENT_FILE)
        if root_parent is not None:
            self._features.add(Feature.EXTERNAL_PARENT)

    @property
    def agent_id(self) -> str | None:
        """The subagent id when this builder writes a ``subagents/agent-*.jsonl`` file."""
        return self._env.agent_id

    @property
    def version(self) -> str:
        """The Claude Code version being imitated."""
        return self._profile.version

    @property
    def cwd(self) -> str:
        """The working directory every record carries."""
        return self._env.cwd

    @property
    def git_branch(self) -> str | None:
        """The git branch every record carries (when the version writes one)."""
        return self._env.git_branch

    @property
    def slug(self) -> str | None:
        """The session slug (only versions that write one keep it)."""
        return self._slug

    def rewind(self, to_uuid: str | None, *, external: bool = False) -> None:
        """Move the cursor back so the next record forks from ``to_uuid`` (a rewind or edit).

        ``external=True`` accepts a uuid outside this file (subagent files point into their
        parent session); ``None`` starts a new root.
        """
        if to_uuid is not None and not external and to_uuid not in self._uuids:
            raise KeyError(f"unknown uuid {to_uuid}")
        self._features.add(Feature.EXTERNAL_PARENT if external else Feature.REWIND)
        self._cursor = to_uuid

    @contextmanager
    def sidechain(self, parent: str | None = None) -> Iterator[None]:
        """Write ``isSidechain: true`` records from ``parent``; restore the main chain afterwards."""
        saved = (self._cursor, self._sidechain)
        self._cursor, self._sidechain = parent, True
        try:
            yield
        finally:
            self._cursor, self._sidechain = saved

    def progress(
        self,
        hook_event: str = "PreToolUse",
        *,
        tool_use_id: str | None = None,
        parent_tool_use_id: str | None = None,
        hook_name: str | None = None,
        command: str | None = None,
        data: Json | None = None,
    ) -> str:
        """A ``progress`` record (a hook running, a subagent step, bash output) on the cursor.

        Without ``data`` it is a ``hook_progress`` for ``hook_event``; tool events default to the
        last tool_use id, session events (SessionStart, Stop) to a fresh id. ``data`` writes any
        other progress payload (``agent_progress``, ``bash_progress``) under ``tool_use_id``, with
        ``parent_tool_use_id`` naming the tool call it belongs to.
        """
        tool_id = tool_use_id
        if tool_id is None:
            tool_id = self._last_tool_id if hook_event.endswith("ToolUse") else self._stamp.uuid4()
        tool_name = self._tool_name.get(tool_id or "", "")
        if data is None:
            data = {
                "type": "hook_progress",
                "hookEvent": hook_event,
                "hookName": hook_name or (f"{hook_event}:{tool_name}" if tool_name else hook_event),
                "command": command or "${CLAUDE_PLUGIN_ROOT}/scripts/hook.sh",
            }
        uid = self._stamp.uuid4()
        rec = self._head()
        rec["type"] = "progress"
        rec["data"] = data
        ts = self._stamp.tick(*STEP_SIDE)
        if hook_event == "PreToolUse" or data.get("type") != "hook_progress":
            rec["toolUseID"] = tool_id
            rec["parentToolUseID"] = parent_tool_use_id or tool_id
            rec["uuid"] = uid
            rec["timestamp"] = ts
        else:
            rec["parentToolUseID"] = parent_tool_use_id or tool_id
            rec["toolUseID"] = tool_id
            rec["timestamp"] = ts
            rec["uuid"] = uid
        self._features.add(Feature.PROGRESS)
        return self._emit_chain(rec, uid)

    def attachment(self, kind: str, **fields: Any) -> str:
        """An ``attachment`` record (hook output, deferred tools, skills, reminders) on the cursor."""
        uid = self._stamp.uuid4()
        rec = self._head()
        rec["attachment"] = {"type": kind, **fields}
        rec["type"] = "attachment"
        rec["uuid"] = uid
        rec["timestamp"] = self._stamp.tick(*STEP_SIDE)
        self._features.add(Feature.ATTACHMENT)
        return self._emit_chain(rec, uid)

    def hook_attachment(self, hook_event: str, *, tool_use_id: str | None = None, stdout: str = "") -> str:
        """A ``hook_success`` attachment as 2.1.1xx writes after tool results and prompts."""
        tool_id = tool_use_id or self._last_tool_id or self._stamp.uuid4()
        name = self._tool_name.get(tool_id, "")
        return self.attachment(
            "hook_success",
            hookName=f"{hook_event}:{name}" if name else hook_event,
            toolUseID=tool_id,
            hookEvent=hook_event,
            content=stdout.strip(),
            stdout=stdout,
            stderr="",
            exitCode=0,
            command="${CLAUDE_PLUGIN_ROOT}/scripts/hook.sh",
            durationMs=self._stamp.rng.randint(40, 1300),
        )

    def system(self, subtype: str, content: str | None = None, **extra: Any) -> str:
        """A ``system`` record (``local_command``, ``api_error``, ``turn_duration``, …) on the cursor."""
        uid = self._stamp.uuid4()
        if subtype == "api_error":
            extra = {**api_error_fields(self._stamp), **extra}
            self._features.add(Feature.API_ERROR)
        rec = self._head()
        rec.update(system_body(subtype, content, self._stamp.tick(*STEP_SIDE), uid, dict(extra)))
        self._features.add(Feature.SYSTEM)
        return self._emit_chain(rec, uid)

    def compact(
        self,
        summary_text: str,
        *,
        trigger: str = "auto",
        pre_tokens: int | None = None,
        wrap: bool = True,
    ) -> CompactResult:
        """Claude Code's own compaction: a ``compact_boundary`` root plus the summary user record."""
        logical = self._cursor
        self._cursor = None
        boundary = self._stamp.uuid4()
        rec = self._head(logical_parent=logical)
        meta = {"trigger": trigger, "preTokens": pre_tokens or self._context_tokens}
        ts = self._stamp.tick(*STEP_FRAGMENT)
        rec.update(
            system_body("compact_boundary", "Conversation compacted", ts, boundary, {"compactMetadata": meta})
        )
        self._emit_chain(rec, boundary)
        text = COMPACT_PREAMBLE + summary_text + COMPACT_POSTAMBLE if wrap else summary_text
        uid = self._stamp.uuid4()
        rec = self._head()
        rec["type"] = "user"
        rec["message"] = {"role": "user", "content": text}
        rec["isVisibleInTranscriptOnly"] = True
        rec["isCompactSummary"] = True
        rec["uuid"] = uid
        rec["timestamp"] = self._stamp.tick(*STEP_SIDE)
        self._context_tokens = len(text) // 4 + 12_000
        self._features.add(Feature.COMPACTION)
        self._emit_chain(rec, uid)
        return CompactResult(boundary, uid)

    def _head(
        self, *, parent: Any = CURSOR, prompt_id: str | None = None, logical_parent: str | None = None
    ) -> Json:
        return self._env.head(
            self._cursor if parent is CURSOR else parent,
            self._sidechain,
            slug=self._slug if self._slug_on else None,
            prompt_id=prompt_id,
            logical_parent=logical_parent,
        )

    def _note_text(self, content: Any) -> None:
        """Mark NON_ENGLISH (non-Latin scripts in prompts or replies) and IMAGE features."""
        if isinstance(content, str):
            if not content.isascii() and _NON_LATIN.search(content):
                self._features.add(Feature.NON_ENGLISH)
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, dict):
                    if block.get("type") == "image":
                        self._features.add(Feature.IMAGE)
                    self._note_text(block.get("text"))

    def _emit_chain(self, rec: Json, uid: str, *, large_check: bool = False) -> str:
        rec = self._env.finish(rec)
        if self._sidechain:
            self._features.add(Feature.SIDECHAIN)
        size = self._emit(rec)
        self._uuids.add(uid)
        self._cursor = uid
        if rec.get("type") in ("user", "assistant"):
            self._context_tokens += size // 4
            window = self._context_window
            if window is not None and self._context_tokens > window * CONTEXT_FULL_SHARE:
                self._context_tokens = int(window * self._stamp.rng.uniform(*CONTEXT_CLEARED_SHARE))
        if large_check and size >= LARGE_TOOL_RESULT_BYTES:
            self._features.add(Feature.LARGE_TOOL_RESULT)
        return uid
