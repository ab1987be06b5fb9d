"""What Claude Code sent: a captured Messages API request read as a sequence of content blocks.

A block keeps its role, kind, full text and tool id; that is what a resumed session means to the
model. Claude Code's own additions are read apart so two resumes compare on transcript content:
the probe prompt is dropped; `<system-reminder>` text blocks, `system`-role messages (no
transcript row becomes one) and the reminders closing a tool_result become `Reminder`s that
remember where they stood (`pipeline.proof.claude_code.reminders`). The size of the request (messages,
characters, seed-estimated tokens) is measured over the `messages` array exactly as sent
(`pipeline.proof.context`, as every judge measures it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from pipeline.formats.claude_code.records import plain_strings
from pipeline.proof.claude_code.reminders import REMINDER_PREFIX, Reminder, folded_reminders, normalized
from pipeline.proof.context import ContextSize, json_size

__all__ = [
    "SYNTHETIC_REPLY",
    "TEXT_PREFIX_CHARS",
    "ContextBlock",
    "SentContext",
    "closing_prompt",
    "read_request",
]

TEXT_PREFIX_CHARS: Final = 120  # the golden file's `text_prefix` length


@dataclass(frozen=True, slots=True)
class ContextBlock:
    """One content block: role, kind (`text`, `thinking`, `tool_use`, `tool_result`, ...), text, id.

    `text` is the block's text; for a tool_use the JSON of its input, for a tool_result its `text`
    key when present, else the JSON of its content (the golden harness's reading).
    """

    role: str
    kind: str
    text: str
    id: str | None

    @classmethod
    def from_golden(cls, entry: Mapping[str, Any]) -> ContextBlock:
        """One element of a golden entry's `context` (its text is a 120-character prefix)."""
        return cls(str(entry["role"]), str(entry["kind"]), str(entry["text_prefix"]), entry.get("id"))

    def golden(self) -> ContextBlock:
        """This block as the golden file records it: the text cut to its first 120 characters."""
        return ContextBlock(self.role, self.kind, self.text[:TEXT_PREFIX_CHARS], self.id)

    def label(self) -> str:
        """Content-free description: `user/tool_result toolu_x (312 chars)`."""
        ident = f" {self.id}" if self.id else ""
        return f"{self.role}/{self.kind}{ident} ({len(self.text)} chars)"


# The reply Claude Code 2.1.332 inserts after a session's trailing user record when it loads it to
# answer a new prompt (model `<synthetic>`); its own compaction request goes without it.
SYNTHETIC_REPLY: Final = ContextBlock("assistant", "text", "No response requested.", None)


@dataclass(frozen=True, slots=True)
class SentContext:
    """The transcript content of one captured request, the strings it holds, and its size."""

    blocks: tuple[ContextBlock, ...]
    strings: tuple[str, ...]  # every string the conversation carries, tool inputs included
    size: ContextSize
    reminders: tuple[Reminder, ...] = ()
    compacted_on_resume: bool = False  # Claude Code compacted first: this is its compaction request's
    tools: tuple[str, ...] = ()  # the names of the tools whose definitions the request sends, sorted
    modelled: bool = (
        False  # not sent: what Claude Code would rebuild, as `pipeline.proof.claude_code.expected` models it
    )


def _block(role: str, block: Mapping[str, Any], probe: str) -> ContextBlock | None:
    kind = str(block.get("type"))
    if kind == "text":
        text = str(block.get("text", ""))
        return None if text == probe else ContextBlock(role, "text", text, None)
    if kind in ("thinking", "redacted_thinking"):
        return ContextBlock(role, "thinking", str(block.get("thinking") or ""), None)
    if kind == "tool_use":
        return ContextBlock(role, kind, json.dumps(block.get("input")), block.get("id"))
    if kind == "tool_result":
        shown = block["text"] if "text" in block else json.dumps(block.get("content"))
        return ContextBlock(role, kind, str(shown), block.get("tool_use_id"))
    return ContextBlock(role, kind, "", None)


def _reminder(role: str, item: Mapping[str, Any], position: int) -> list[Reminder]:
    """The reminders one content item is or carries (`position`: the blocks sent before it)."""
    if item.get("type") == "text":
        text = str(item.get("text", ""))
        if role == "system" or text.startswith(REMINDER_PREFIX):
            return [Reminder(position, text)]
        return []
    if item.get("type") == "tool_result":
        shown = item["text"] if "text" in item else json.dumps(item.get("content"))
        return [Reminder(position, text, inside=True) for text in folded_reminders(str(shown))]
    return []


def _items(content: Any) -> Iterable[Any]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else content or ()


def read_request(body: Mapping[str, Any], probe: str, scratch: tuple[str, ...] = ()) -> SentContext:
    """The transcript content of a Messages API request body, its reminders apart, minus the probe.

    `scratch` are the throwaway home's paths, written `<scratch>` in reminders.
    """
    messages = [m for m in body.get("messages") or () if isinstance(m, Mapping)]
    blocks: list[ContextBlock] = []
    strings: list[str] = []
    reminders: list[Reminder] = []
    for message in messages:
        role = str(message.get("role"))
        for item in _items(message.get("content")):
            if not isinstance(item, Mapping):
                continue
            found = _reminder(role, item, len(blocks))
            reminders += (normalized(reminder, scratch) for reminder in found)
            if role == "system" or (found and item.get("type") == "text"):
                continue
            if block := _block(role, item, probe):
                blocks.append(block)
                strings.extend(plain_strings(item))
    tools = sorted({str(t.get("name")) for t in body.get("tools") or () if isinstance(t, Mapping)})
    return SentContext(
        tuple(blocks), tuple(strings), json_size(messages), tuple(reminders), tools=tuple(tools)
    )


def closing_prompt(body: Mapping[str, Any]) -> str | None:
    """The text of the last block of the last message not of the `system` role (Claude Code's
    compaction instructions: a reminder it sends as a system message, such as the date, may follow)."""
    messages = [m for m in body.get("messages") or () if isinstance(m, Mapping) and m.get("role") != "system"]
    last = messages[-1] if messages else {}
    content = last.get("content")
    if isinstance(content, str):
        return content
    final = content[-1] if isinstance(content, list) and content else None
    return str(final["text"]) if isinstance(final, Mapping) and isinstance(final.get("text"), str) else None
