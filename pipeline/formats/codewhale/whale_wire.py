"""The history CodeWhale rebuilds, as CodeWhale 0.10.2 puts it on the Chat Completions wire.

`build_chat_messages_with_reasoning` (`crates/tui/src/client/chat.rs`) for a route that replays
no reasoning (an OpenAI-compatible one with a model it does not know): text blocks joined by a
newline; an interrupted assistant's text after its marker; thinking not sent; an assistant with
neither text nor calls dropped; calls as `tool_calls` (name escaped as `to_api_tool_name` does,
arguments as compact JSON); each result a `tool` message right after its call's batch, a medium
result (1,024 characters up to the budget) repeated verbatim within one request sent as a
reference to its first copy, a result over the budget as a labelled head and tail excerpt; a
repeated `<turn_meta>` block sent as `<turn_meta_unchanged />`; and a current-form checkpoint
that follows a tool result (CodeWhale's own compaction keeps its note after the last round)
moved before the round's user prompt, the two merged into one user message. Each message is
returned as canonical JSON text (keys sorted), as the golden compares what the client sent.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from pipeline.formats.codewhale.whale_document import RESULTS, BlockKind, Message
from pipeline.formats.codewhale.whale_markers import is_runtime_owned, is_wire_checkpoint

__all__ = ["INLINE_RESULT_CHARS", "canonical", "wire_history"]

INLINE_RESULT_CHARS: Final = 100_000  # TOOL_OUTPUT_INLINE_MAX_CHARS: a window of 1M tokens or more
INTERRUPTED_PREFIX: Final = (
    "[The following assistant output was interrupted before completion and may be incomplete or wrong]\n"
)
_DEDUP_MIN_CHARS: Final = 1_024  # TOOL_RESULT_DEDUP_MIN_CHARS
_EXCERPT_FRAME_CHARS: Final = 1_024  # TOOL_RESULT_EXCERPT_FRAME_CHARS
_MUTATIONS: Final = frozenset({"write", "edit", "write_file", "edit_file", "apply_patch"})
_SPILLOVER_HINT: Final = "omitted range recovery:"  # an engine-bounded result passes untouched
_ASSISTANTS: Final = frozenset({"assistant", "assistant_interrupted"})
_CHANNELS: Final = frozenset({"user", "system", "developer"})  # any other role is omitted


def canonical(message: Mapping[str, Any]) -> str:
    """One wire message as comparable JSON text: keys sorted, compact, UTF-8 kept."""
    return json.dumps(message, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def api_tool_name(name: str) -> str:
    """`to_api_tool_name`: letters, digits and `_` kept, `-` doubled, anything else escaped."""
    out: list[str] = []
    for char in name:
        if char.isascii() and (char.isalnum() or char == "_"):
            out.append(char)
        elif char == "-":
            out.append("--")
        else:
            out.append(f"-x{ord(char):06X}-")
    return "".join(out)


def _summarized(value: object, limit: int) -> str:
    raw = value if isinstance(value, str) else orjson.dumps(value).decode()
    text = raw.replace("\n", "\\n")[:limit]
    return text + "..." if len(raw) > limit else text


def _command_or_query(arguments: object) -> str:
    if isinstance(arguments, dict):
        for key in ("command", "cmd", "query", "q", "pattern", "path", "url"):
            if key in arguments:
                return _summarized(arguments[key], 500)
    return _summarized(arguments, 500)


def _exit_status(content: str) -> str:
    try:
        value = json.loads(content)
    except ValueError:
        value = None
    if isinstance(value, dict):
        for key in ("exit_code", "exit_status", "status", "code"):
            if key in value:
                return _summarized(value[key], 120)
    for line in content.splitlines()[:20]:
        for prefix in ("Exit code:", "exit code:", "Exit status:", "exit status:"):
            if line.strip().startswith(prefix):
                return line.strip().removeprefix(prefix).strip()
    return "unknown"


@dataclass
class _Request:
    """What one request's projection remembers across messages."""

    budget: int
    out: list[dict[str, Any]] = field(default_factory=list)
    pending: dict[str, tuple[str, object]] = field(default_factory=dict)
    seen_results: dict[str, tuple[str, int]] = field(default_factory=dict)
    last_turn_meta: str | None = None

    def result(self, name: str, arguments: object, content: str, label: str) -> str:
        """`compact_tool_result_for_wire`: verbatim, a back-reference, or an excerpt."""
        chars, sha = len(content), _sha(content)
        if _DEDUP_MIN_CHARS <= chars <= self.budget and name not in _MUTATIONS:
            if sha in self.seen_results:
                first, first_chars = self.seen_results[sha]
                return (
                    f'<TOOL_RESULT_REF sha="{sha}" original_message="{first}" chars="{first_chars}">\n'
                    f"source: full content appears in {first} earlier in this request\n"
                    "</TOOL_RESULT_REF>"
                )
            self.seen_results[sha] = (label, chars)
        if chars <= self.budget or _SPILLOVER_HINT in content:
            return content
        excerpt = self.budget - _EXCERPT_FRAME_CHARS
        head, tail = content[: excerpt * 2 // 3], content[chars - (excerpt - excerpt * 2 // 3) :]
        return (
            f"[TOOL_RESULT_TRUNCATED]\ntool_name: {name}\ncommand_or_query: {_command_or_query(arguments)}\n"
            f"exit_status: {_exit_status(content)}\noriginal_chars: {chars}\nsha256: {sha}\n"
            "exact_detail: unavailable; no session-owned artifact was recorded\n"
            f"first_chars:\n{head}\n\n[... truncated {chars - len(head) - len(tail)} chars from middle ...]"
            f"\n\nlast_chars:\n{tail}"
        )

    def text(self, text: str) -> str:
        """A text block; a `<turn_meta>` block equal to the last one sent is shortened."""
        if not text.lstrip().startswith("<turn_meta>"):
            return text
        sha = _sha(text)
        if sha == self.last_turn_meta:
            return "<turn_meta_unchanged />"
        self.last_turn_meta = sha
        return text


def _is_prompt(message: Message) -> bool:
    """`classify_user_turn_prompt` is not `NotPrompt`: a user message, no result, not the
    runtime's own, no checkpoint."""
    return (
        message.role == "user"
        and not any(b.kind in RESULTS for b in message.blocks)
        and not is_runtime_owned(message)
        and not is_wire_checkpoint(message)
    )


def _order(messages: Sequence[Message]) -> tuple[list[int], int | None, int | None]:
    """The wire order: the latest checkpoint that follows a tool result moves before its round's
    prompt (or the first assistant message); its index and that target's."""
    summary = next(
        (
            i
            for i in range(len(messages) - 1, 0, -1)
            if is_wire_checkpoint(messages[i])
            and any(b.kind is BlockKind.TOOL_RESULT for b in messages[i - 1].blocks)
        ),
        None,
    )
    target = None
    if summary is not None:
        prompts = [i for i in range(summary) if _is_prompt(messages[i])]
        assistants = [i for i in range(summary) if messages[i].role in _ASSISTANTS]
        target = prompts[-1] if prompts else (assistants[0] if assistants else None)
    order: list[int] = []
    for index in range(len(messages)):
        if index == summary and target is not None:
            continue
        order.extend((summary, index) if index == target and summary is not None else (index,))
    return order, summary, target


def _assistant(request: _Request, message: Message, raw: Mapping[str, Any]) -> None:
    texts = [request.text(b["text"]) for b in raw["content"] if b.get("type") == "text"]
    content = "\n".join(texts)
    if message.role == "assistant_interrupted":
        content = INTERRUPTED_PREFIX + content
    calls = [b for b in raw["content"] if b.get("type") == "tool_use"]
    if not content.strip() and not calls:
        request.pending.clear()
        return
    wire: dict[str, Any] = {"role": "assistant", "content": content if content.strip() else None}
    request.pending.clear()
    if calls:
        wire["tool_calls"] = [_call(b) for b in calls]
        request.pending = {b["id"]: (b.get("name", ""), b.get("input")) for b in calls}
        if len(request.pending) != len(calls):  # a batch with duplicate ids is not paired
            request.pending.clear()
    request.out.append(wire)


def _call(block: Mapping[str, Any]) -> dict[str, Any]:
    arguments = orjson.dumps(block.get("input")).decode()
    call: dict[str, Any] = {
        "id": block["id"],
        "type": "function",
        "function": {"name": api_tool_name(str(block.get("name", ""))), "arguments": arguments},
    }
    if block.get("thought_signature") is not None:
        call["extra_content"] = {"google": {"thought_signature": block["thought_signature"]}}
    if isinstance(block.get("caller"), dict):
        caller = block["caller"]
        call["caller"] = {"type": caller.get("type"), "tool_id": caller.get("tool_id")}
    return call


_TOPOLOGY_EVENT: Final = (
    '<codewhale:runtime_state kind="agent_topology" schema="v1" visibility="internal">\n',
    "\n</codewhale:runtime_state>",
)
_TOPOLOGY_META: Final = (
    "<turn_meta>\nInput provenance: runtime (non-authoritative)\n"
    "Runtime state: agent_topology_v1 (authoritative)\n</turn_meta>"
)
_RESTORED_TOPOLOGY: Final = "[Codewhale restored Agent topology checkpoint]"
_RESTORED_META: Final = (
    "<turn_meta>\nInput provenance: subagent_handoff (non-authoritative)\n"
    "Restore projection: subagent_checkpoint_v1\n</turn_meta>"
)


def _topology(message: Message) -> bool:
    """`is_agent_topology_checkpoint` or `is_restored_agent_topology_checkpoint`: the runtime's
    Agent-topology note its compaction installs, which joins the note's user message on the wire."""
    blocks = message.blocks
    if (
        message.role != "user"
        or len(blocks) != 2
        or not all(b.kind is BlockKind.TEXT and b.plain for b in blocks)
    ):
        return False
    text, meta = blocks[0].text, blocks[1].text
    event = (
        meta == _TOPOLOGY_META and text.startswith(_TOPOLOGY_EVENT[0]) and text.endswith(_TOPOLOGY_EVENT[1])
    )
    return event or (meta == _RESTORED_META and text.startswith(_RESTORED_TOPOLOGY))


def _merges(message: Message, index: int, summary: int | None, target: int | None) -> bool:
    return index in (summary, target) or is_wire_checkpoint(message) or _topology(message)


def _channel(
    request: _Request,
    message: Message,
    raw: Mapping[str, Any],
    index: int,
    moved: tuple[int | None, int | None],
) -> bool:
    """A user, system or developer message; True when it put a message on the wire."""
    content = "\n".join(request.text(b["text"]) for b in raw["content"] if b.get("type") == "text")
    images = [
        {"type": "image_url", "image_url": {"url": (b.get("image_url") or {}).get("url")}}
        for b in raw["content"]
        if b.get("type") == "image_url"
    ]
    if message.role != "user":
        if content.strip():
            request.out.append({"role": message.role, "content": content})
            return True
        return False
    if not content.strip() and not images:
        return False
    wire: Any = (
        ([{"type": "text", "text": content}] if content.strip() else []) + images if images else content
    )
    previous = request.out[-1] if request.out else None
    if _merges(message, index, *moved) and previous is not None and previous["role"] == "user":
        previous["content"] = _merged(previous["content"], wire)
    else:
        request.out.append({"role": "user", "content": wire})
    return True


def _merged(left: Any, right: Any) -> Any:
    """`merge_adjacent_user_content`: two texts joined by a blank line, else one part list."""
    if isinstance(left, str) and isinstance(right, str):
        return f"{left}\n\n{right}"
    parts: list[Any] = []
    for content in (left, right):
        parts.extend(content if isinstance(content, list) else [{"type": "text", "text": content}])
    return parts


def _results(request: _Request, raw: Mapping[str, Any], index: int) -> Iterator[dict[str, Any]]:
    for block in raw["content"]:
        if block.get("type") != "tool_result" or block.get("tool_use_id") not in request.pending:
            continue
        name, arguments = request.pending.pop(block["tool_use_id"])
        content = block.get("content") if isinstance(block.get("content"), str) else ""
        sent = request.result(name, arguments, content, f"Message #{index}")
        yield {"role": "tool", "tool_call_id": block["tool_use_id"], "content": sent}


def _strip_unanswered(out: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The safety net: an assistant's calls whose results do not all follow it contiguously are
    dropped (with the message when it had nothing else), and every later result of theirs."""
    index = 0
    while index < len(out):
        calls = out[index].get("tool_calls") if out[index]["role"] == "assistant" else None
        if calls:
            ids = [call["id"] for call in calls]
            follow = []
            for later in out[index + 1 :]:
                if later["role"] != "tool":
                    break
                follow.append(later["tool_call_id"])
            if len(ids) != len(follow) or not set(ids) <= set(follow):
                tail = [m for m in out[index + 1 :] if not (m["role"] == "tool" and m["tool_call_id"] in ids)]
                stripped = {k: v for k, v in out[index].items() if k != "tool_calls"}
                keep = [] if stripped["content"] in (None, "") else [stripped]
                out[index:] = [*keep, *tail]
                index += len(keep)
                continue
        index += 1
    return out


def wire_history(messages: Sequence[Message], budget: int = INLINE_RESULT_CHARS) -> tuple[str, ...]:
    """The Chat Completions messages CodeWhale sends for `messages` (no system prompt), each as
    canonical JSON text; `budget` is the route's inline characters for one tool result."""
    request = _Request(budget)
    order, summary, target = _order(messages)
    for index in order:
        message = messages[index]
        raw = orjson.loads(message.json)
        assistant = message.role in _ASSISTANTS
        if assistant:
            _assistant(request, message, raw)
        elif message.role in _CHANNELS and _channel(request, message, raw, index, (summary, target)):
            request.pending.clear()  # user content closes the batch a call opened
        results = [b for b in raw["content"] if b.get("type") == "tool_result"]
        if results:
            request.out.extend(_results(request, raw, index))
        elif not assistant:
            request.pending.clear()
    return tuple(canonical(m) for m in _strip_unanswered(request.out))
