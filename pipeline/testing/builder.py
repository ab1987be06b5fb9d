"""Write realistic Claude Code JSONL transcripts, record by record, for tests and benchmarks.

``TranscriptBuilder`` keeps a *cursor* (the uuid the next chain record hangs off) and writes each
record in the key order and compact serialization real Claude Code uses, for the version it is
given. Identifiers and timestamps come from one seeded RNG, so the same calls give the same bytes.

Shapes reproduced from the corpus: assistant turns streamed as one line per content block sharing
``message.id``; tool results hanging off the fragment that issued them (so parallel tool calls
fork the chain); progress/attachment hook records on the chain; ``compact_boundary`` roots with a
``logicalParentUuid``; file-history snapshots, queue operations, titles, modes, ``last-prompt`` and
``summary`` pointers without uuids; sidechains and ``subagents/agent-*.jsonl`` files.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import IO, Any

from pipeline.testing._chain import STEP_FRAGMENT, ChainWriter, CompactResult
from pipeline.testing._records import Feature, Layout, Stamper, assistant_message, usage_block
from pipeline.testing._writer import STEP_SIDE

__all__ = [
    "AssistantMessage",
    "CompactResult",
    "ToolCall",
    "ToolSpec",
    "TranscriptBuilder",
]

Json = dict[str, Any]

DEFAULT_START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)  # seeded sessions start within 60 days of it
START_SPREAD_MS = 60 * 24 * 3600 * 1000
STEP_PROMPT = (4_000, 90_000)  # clock steps (ms): a human prompt comes after a pause ...
STEP_RESULT = (40, 2_000)  # ... a tool result after the tool ran


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    """One streamed assistant message: its ``message.id`` and the uuid of each fragment line."""

    message_id: str
    uuids: tuple[str, ...]

    @property
    def uuid(self) -> str:
        """The last fragment's uuid (where the chain continues)."""
        return self.uuids[-1]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool_use fragment and the tool_result record that answered it."""

    tool_use_id: str
    assistant_uuid: str
    result_uuid: str
    message_id: str


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool call to write: name, input, result content, and how the result is reported."""

    name: str
    input: Json
    result: str | list[Json]
    is_error: bool = False
    tool_use_result: Any = None


class TranscriptBuilder(ChainWriter):
    """Append Claude Code records to one transcript (a session file or a subagent file).

    Every chain record hangs off :attr:`cursor` and becomes the new cursor, except tool results,
    which hang off the assistant fragment that issued their tool_use. Control records
    (snapshots, pointers, titles, modes, queue operations) carry no uuid and leave the cursor.
    With ``sink`` set, lines stream to that binary file instead of being kept in memory.

    ``version`` selects the record shapes (key order, envelope placement, optional fields) of that
    Claude Code release; ``seed`` fixes every uuid, id and timestamp. A subagent file is written
    with ``agent_id`` and ``sidechain=True``; ``root_parent`` lets its first record point into the
    parent session. ``tap`` sees every record dict just before it is serialized.
    ``context_window`` keeps the context its ``usage`` fields bill within that window, as a
    long real session's calls stay (without it the billed context grows with the file).
    """

    def __init__(
        self,
        session_id: str | None = None,
        *,
        seed: int = 0,
        cwd: str = "/home/dev/project",
        version: str = "2.1.39",
        git_branch: str | None = "main",
        agent_id: str | None = None,
        sidechain: bool = False,
        root_parent: str | None = None,
        slug: str | None = None,
        model: str | None = None,
        start: datetime | None = None,
        sink: IO[bytes] | None = None,
        tap: Callable[[Json], None] | None = None,
        context_window: int | None = None,
    ) -> None:
        rng = random.Random(seed)
        start_ms = int((start or DEFAULT_START).timestamp() * 1000)
        if start is None:
            start_ms += rng.randrange(START_SPREAD_MS)
        stamp = Stamper(rng, start_ms)
        super().__init__(
            stamp=stamp,
            session_id=session_id or stamp.uuid4(),
            version=version,
            cwd=cwd,
            git_branch=git_branch,
            agent_id=agent_id,
            sidechain=sidechain,
            root_parent=root_parent,
            slug=slug,
            sink=sink,
            tap=tap,
            context_window=context_window,
        )
        self._model = model or self._profile.model
        self._messages: dict[str, tuple[str, Json, bool]] = {}  # id -> requestId, usage, had tool_use

    # ------------------------------------------------------------------ blocks
    def text(self, s: str) -> Json:
        """A ``text`` content block."""
        return {"type": "text", "text": s}

    def thinking(self, s: str, *, signature: str | None = None) -> Json:
        """A ``thinking`` block with a signature (generated when not given)."""
        sig = signature if signature is not None else self._stamp.signature(len(s))
        return {"type": "thinking", "thinking": s, "signature": sig}

    def tool_use(self, name: str, input: Json, *, tool_use_id: str | None = None) -> Json:
        """A ``tool_use`` block with a fresh ``toolu_01…`` id."""
        block: Json = {
            "type": "tool_use",
            "id": tool_use_id or self._stamp.api_id("toolu_01"),
            "name": name,
            "input": input,
        }
        if self._profile.caller:
            block["caller"] = {"type": "direct"}
        return block

    def image(self, data_b64: str, media_type: str = "image/png") -> Json:
        """A base64 ``image`` block (user prompts and tool results carry these)."""
        return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data_b64}}

    # ------------------------------------------------------------------ chain records
    def user(
        self, content: str | list[Json], *, uuid: str | None = None, human: bool = True, **extra: Any
    ) -> str:
        """A human prompt on the cursor; returns its uuid.

        ``human=False`` writes a plain user line without the prompt-only fields (slash-command
        echoes such as ``<command-name>/exit</command-name>`` and their stdout). A
        ``permissionMode`` keyword is written only by versions that record it; other ``extra``
        keys are appended as given.
        """
        uid = uuid or self._take_reserved() or self._stamp.uuid4()
        if human and self._profile.layout is Layout.TRAILING:
            self._prompt_id = self._stamp.uuid4()
        rec = self._head(prompt_id=self._prompt_id)
        rec["type"] = "user"
        rec["message"] = {"role": "user", "content": content}
        rec["uuid"] = uid
        rec["timestamp"] = self._stamp.tick(*(STEP_PROMPT if human else STEP_SIDE))
        if human and self._profile.prompt_todos:
            rec["thinkingMetadata"] = {"maxThinkingTokens": 31999}
            rec["todos"] = []
        mode = extra.pop("permissionMode", "default")  # dropped by versions that do not record it
        if human and self._profile.prompt_permission_mode:
            rec["permissionMode"] = mode
        rec.update(extra)
        self._note_text(content)
        if human and isinstance(content, str):
            self._last_prompt = content
        return self._emit_chain(rec, uid)

    def meta_user(self, content: str | list[Json], **extra: Any) -> str:
        """An ``isMeta`` user record (system reminders, command caveats, skill bodies)."""
        uid = self._stamp.uuid4()
        rec = self._head(prompt_id=self._prompt_id)
        rec["type"] = "user"
        rec["message"] = {"role": "user", "content": content}
        rec["isMeta"] = True
        rec["uuid"] = uid
        rec["timestamp"] = self._stamp.tick(*STEP_SIDE)
        rec.update(extra)
        self._features.add(Feature.META_USER)
        return self._emit_chain(rec, uid)

    def assistant(
        self,
        *blocks: Json,
        message_id: str | None = None,
        model: str | None = None,
        usage: Json | None = None,
        tool_follows: bool = False,
        **extra: Any,
    ) -> AssistantMessage:
        """Stream an assistant message: one line per block, each the child of the previous line.

        Pass the ``message_id`` of the previous call to continue the same message (Claude Code
        keeps writing fragments of one message after running its tools). ``tool_follows`` says a
        later call adds a tool_use to this message: 2.1.1xx repeats the final ``stop_reason``
        (``tool_use``) on every fragment.
        """
        return self._stream(blocks, message_id, model, usage, extra, tool_follows=tool_follows)

    def tool_result(
        self,
        tool_use_id: str,
        content: str | list[Json],
        *,
        is_error: bool = False,
        tool_use_result: Any = None,
    ) -> str:
        """A user record answering ``tool_use_id``; its parent is the fragment that issued it."""
        owner = self._tool_owner.get(tool_use_id)
        parent = owner if owner is not None else self._cursor
        name = self._tool_name.get(tool_use_id, "")
        if is_error:
            block: Json = {
                "type": "tool_result",
                "content": content,
                "is_error": True,
                "tool_use_id": tool_use_id,
            }
            self._features.add(Feature.TOOL_ERROR)
            if tool_use_result is None and isinstance(content, str):
                tool_use_result = "Error: " + content.removeprefix("<tool_use_error>").removesuffix(
                    "</tool_use_error>"
                )
        else:
            block = {"tool_use_id": tool_use_id, "type": "tool_result", "content": content}
            if name == "Bash":
                block["is_error"] = False
        uid = self._stamp.uuid4()
        rec = self._head(parent=parent, prompt_id=self._prompt_id)
        rec["type"] = "user"
        rec["message"] = {"role": "user", "content": [block]}
        rec["uuid"] = uid
        rec["timestamp"] = self._stamp.tick(*STEP_RESULT)
        if tool_use_result is not None:
            rec["toolUseResult"] = tool_use_result
        if self._profile.source_tool_uuid and owner is not None:
            rec["sourceToolAssistantUUID"] = owner
        return self._emit_chain(rec, uid, large_check=True)

    def tool_call(
        self,
        name: str,
        input: Json,
        result: str | list[Json],
        *,
        is_error: bool = False,
        tool_use_result: Any = None,
        lead: Sequence[Json] = (),
        message_id: str | None = None,
        hooks: bool = False,
    ) -> ToolCall:
        """One tool_use fragment (after optional ``lead`` blocks of the same message) and its result.

        ``hooks`` adds the hook records of the version: Pre/PostToolUse ``progress`` lines between
        the fragment and its result (leading layout) or a PostToolUse ``hook_success`` attachment
        after the result (trailing layout).
        """
        spec = ToolSpec(name, input, result, is_error, tool_use_result)
        return self.parallel_tool_calls([spec], lead=lead, message_id=message_id, hooks=hooks)[0]

    def parallel_tool_calls(
        self,
        calls: Sequence[ToolSpec | tuple[Any, ...]],
        *,
        lead: Sequence[Json] = (),
        message_id: str | None = None,
        hooks: bool = False,
        order: Sequence[int] | None = None,
    ) -> tuple[ToolCall, ...]:
        """Several tool calls of one message, in the real fork shape.

        Fragments chain one after another (through PreToolUse progress when ``hooks``); then each
        result is written as the child of the fragment that issued it, in ``order`` (indexes into
        ``calls``; default: as given). The cursor ends on the last result written.
        """
        specs = [c if isinstance(c, ToolSpec) else ToolSpec(*c) for c in calls]
        if not specs:
            raise ValueError("parallel_tool_calls needs at least one call")
        blocks = [self.tool_use(s.name, s.input) for s in specs]
        mid = message_id
        frag_uuids: list[str] = []
        if lead:
            mid = self._stream(lead, mid, None, None, {}, tool_follows=True).message_id
        for block in blocks:
            msg = self.assistant(block, message_id=mid)
            mid = msg.message_id
            frag_uuids.append(msg.uuid)
            if hooks and self._profile.layout is Layout.LEADING:
                self.progress("PreToolUse", tool_use_id=block["id"])
        if len(specs) > 1:
            self._features.add(Feature.PARALLEL_TOOLS)
        assert mid is not None
        results: dict[int, str] = {}
        for i in order if order is not None else range(len(specs)):
            spec, tid = specs[i], blocks[i]["id"]
            if hooks and self._profile.layout is Layout.LEADING:
                self.progress("PostToolUse", tool_use_id=tid)
            results[i] = self.tool_result(
                tid, spec.result, is_error=spec.is_error, tool_use_result=spec.tool_use_result
            )
            if hooks and self._profile.layout is Layout.TRAILING:
                self.hook_attachment("PostToolUse", tool_use_id=tid)
        return tuple(ToolCall(blocks[i]["id"], frag_uuids[i], results[i], mid) for i in sorted(results))

    # ------------------------------------------------------------------ internals
    def _stream(
        self,
        blocks: Sequence[Json],
        message_id: str | None,
        model: str | None,
        usage: Json | None,
        extra: Json,
        *,
        tool_follows: bool,
    ) -> AssistantMessage:
        """Write ``blocks`` as fragments; ``tool_follows`` says a tool_use of this message is next."""
        if not blocks:
            raise ValueError("an assistant message needs at least one content block")
        continuing = message_id is not None and message_id in self._messages
        mid, request_id, usage_obj, had_tool = self._message_state(message_id, blocks, usage)
        has_tool = had_tool or tool_follows or any(b.get("type") == "tool_use" for b in blocks)
        self._messages[mid] = (request_id, usage_obj, has_tool)
        uuids = tuple(
            self._fragment(
                block,
                mid=mid,
                request_id=request_id,
                usage=usage_obj,
                model=model,
                has_tool=has_tool,
                extra=extra,
            )
            for block in blocks
        )
        if len(uuids) > 1 or continuing:
            self._features.add(Feature.SPLIT_ASSISTANT)
        self._slug_on = True
        return AssistantMessage(mid, uuids)

    def _message_state(
        self, message_id: str | None, blocks: Sequence[Json], usage: Json | None
    ) -> tuple[str, str, Json, bool]:
        known = self._messages.get(message_id) if message_id is not None else None
        if known is not None and message_id is not None:
            return message_id, known[0], usage or known[1], known[2]
        mid = message_id or self._stamp.api_id("msg_01")
        out = sum(len(b.get("text") or b.get("thinking") or "") for b in blocks) // 4 + 12 * len(blocks)
        usage_obj = usage or usage_block(self._profile, self._stamp.rng, self._context_tokens, max(1, out))
        return mid, self._stamp.api_id("req_011C", 20), usage_obj, False

    def _fragment(
        self,
        block: Json,
        *,
        mid: str,
        request_id: str,
        usage: Json,
        model: str | None,
        has_tool: bool,
        extra: Json,
    ) -> str:
        kind = block.get("type")
        if kind == "tool_use":
            self._last_tool_id = block["id"]
            self._tool_name[block["id"]] = block["name"]
        elif kind == "thinking":
            self._features.add(Feature.THINKING)
        elif kind == "text":
            self._note_text(block.get("text", ""))
        uid = self._stamp.uuid4()
        rec = self._head()
        rec["message"] = assistant_message(
            self._profile,
            message_id=mid,
            block=block,
            usage=usage,
            model=model or self._model,
            has_tool=has_tool,
        )
        rec["requestId"] = request_id
        rec["type"] = "assistant"
        rec["uuid"] = uid
        rec["timestamp"] = self._stamp.tick(*STEP_FRAGMENT)
        rec.update(extra)
        if kind == "tool_use":
            self._tool_owner[block["id"]] = uid
        return self._emit_chain(rec, uid)
