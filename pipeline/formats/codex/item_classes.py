"""What one Codex item is, as a content class of the token benchmark.

The classes mirror Claude Code's where the roles match (a person's prompt, the agent's text, its
reasoning, a tool's call and its output by tool name) and name Codex's own kinds where they do
not: `context` for what Codex injects itself (developer instructions, AGENTS.md, the environment),
`summary` for compactions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pipeline.formats.codex.rollout_decode import is_user_turn

__all__ = ["item_class", "visible_text"]


def _texts(item: Mapping[str, Any]) -> list[str]:
    content = item.get("content")
    parts = content if isinstance(content, list) else []
    return [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]


def _message_class(item: Mapping[str, Any]) -> str:
    role = item.get("role")
    if role == "assistant":
        return "assistant"
    if role == "user" and is_user_turn(role, _texts(item)):
        return "human"
    return "context"


_CALLS: Final = frozenset({"function_call", "custom_tool_call", "local_shell_call", "tool_search_call"})
_OUTPUTS: Final = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output"})
_FIXED: Final = {"reasoning": "reasoning", "compaction": "summary", "context_compaction": "summary"}


def item_class(item: Mapping[str, Any], tools: Mapping[str, str]) -> tuple[str, str | None]:
    """(class, tool name or None) of one item; `tools` names each call_id's tool."""
    kind = item.get("type")
    if kind == "message":
        return _message_class(item), None
    if kind in _FIXED:
        return _FIXED[str(kind)], None
    if kind in _CALLS:
        return "tool_use", str(item.get("name") or kind)
    if kind in _OUTPUTS:
        return "tool_result", tools.get(str(item.get("call_id")), "unknown")
    if kind == "web_search_call":
        return "tool_use", "web_search"
    return "other", str(kind)


def visible_text(item: Mapping[str, Any]) -> str:
    """The text of an item a tokenizer can count: its messages, call arguments and outputs, and a
    reasoning item's summary (its encrypted content is the model's own state, not text)."""
    kind = item.get("type")
    if kind == "reasoning":
        summary = item.get("summary")
        return "\n".join(_texts({"content": summary if isinstance(summary, list) else []}))
    if kind == "message":
        return "\n".join(_texts(item))
    pieces = [item.get(key) for key in ("name", "arguments", "input", "output", "action")]
    output = item.get("output")
    if isinstance(output, list):
        pieces.append("\n".join(_texts({"content": output})))
    return "\n".join(
        p if isinstance(p, str) else "" if p is None or isinstance(p, list) else str(p) for p in pieces
    )
