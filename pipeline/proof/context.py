"""What Claude Code sent: a captured Messages API request read as a sequence of content blocks.

A block keeps its role, kind, full text and tool id; that is what a resumed session means to the
model. Claude Code's own additions are dropped so two resumes compare on transcript content
alone: `<system-reminder>` texts, the probe prompt, and `system`-role messages (the environment
block newer builds append; no transcript row becomes one). The size of the request (messages,
characters, seed-estimated tokens) is measured over the `messages` array exactly as sent.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import orjson

from pipeline.estimate.seed import RECORD_ALLOWANCE, estimate_utf8
from pipeline.formats.claude_code.records import plain_strings

__all__ = [
    "REMINDER_PREFIX",
    "TEXT_PREFIX_CHARS",
    "ContextBlock",
    "ContextSize",
    "SentContext",
    "read_request",
]

REMINDER_PREFIX: Final = "<system-reminder>"
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


@dataclass(frozen=True, slots=True)
class ContextSize:
    """How big a request's conversation is: messages, characters of their JSON, seed tokens."""

    messages: int
    characters: int
    estimated_tokens: int


@dataclass(frozen=True, slots=True)
class SentContext:
    """The transcript content of one captured request, the strings it holds, and its size."""

    blocks: tuple[ContextBlock, ...]
    strings: tuple[str, ...]  # every string the conversation carries, tool inputs included
    size: ContextSize


def _block(role: str, block: Mapping[str, Any], probe: str) -> ContextBlock | None:
    kind = str(block.get("type"))
    if kind == "text":
        text = str(block.get("text", ""))
        if text.startswith(REMINDER_PREFIX) or text == probe:
            return None
        return ContextBlock(role, "text", text, None)
    if kind in ("thinking", "redacted_thinking"):
        return ContextBlock(role, "thinking", str(block.get("thinking") or ""), None)
    if kind == "tool_use":
        return ContextBlock(role, kind, json.dumps(block.get("input")), block.get("id"))
    if kind == "tool_result":
        shown = block["text"] if "text" in block else json.dumps(block.get("content"))
        return ContextBlock(role, kind, str(shown), block.get("tool_use_id"))
    return ContextBlock(role, kind, "", None)


def _items(content: Any) -> Iterable[Any]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else content or ()


def _size(messages: list[Any]) -> ContextSize:
    encoded = [orjson.dumps(message) for message in messages]
    return ContextSize(
        messages=len(messages),
        characters=sum(len(data.decode("utf-8")) for data in encoded),
        estimated_tokens=sum(estimate_utf8(data) + RECORD_ALLOWANCE for data in encoded),
    )


def read_request(body: Mapping[str, Any], probe: str) -> SentContext:
    """The transcript content of a Messages API request body, minus what Claude Code adds."""
    messages = [m for m in body.get("messages") or () if isinstance(m, Mapping)]
    blocks: list[ContextBlock] = []
    strings: list[str] = []
    for message in messages:
        role = str(message.get("role"))
        if role == "system":
            continue
        for item in _items(message.get("content")):
            if isinstance(item, Mapping) and (block := _block(role, item, probe)):
                blocks.append(block)
                strings.extend(plain_strings(item))
    return SentContext(tuple(blocks), tuple(strings), _size(messages))
