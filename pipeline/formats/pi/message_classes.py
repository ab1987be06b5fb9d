"""What one pi message is, as a content class of the token benchmark, over the file and over
what pi sends.

The classes are Claude Code's and Codex's where the roles match: `human` for a person's prompt,
`assistant` for the agent's text, `tool_use` and `tool_result` by tool name, `summary` for a
compaction's or a branch's summary, `context` for what pi or its extensions inject (system
prompts, custom messages, `!` bash executions). The file side counts every message entry as it is
written (its `message` object), the sent side each message as pi sends it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Final

import orjson

from pipeline.formats.context_items import ClassTallies, Key, Tally
from pipeline.formats.pi.agent_messages import BRANCH_SUMMARY_PREFIX, COMPACTION_SUMMARY_PREFIX
from pipeline.formats.pi.chat_form import ChatMessage
from pipeline.formats.pi.session_decode import PiKind, PiSession

__all__ = ["class_tallies", "message_class", "visible_text"]

_SUMMARY_PREFIXES: Final = (COMPACTION_SUMMARY_PREFIX, BRANCH_SUMMARY_PREFIX)
_ROLE_CLASS: Final = {
    "system": "context",
    "custom": "context",
    "bashExecution": "context",
    "hookMessage": "context",
}


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    parts = content if isinstance(content, list) else []
    return [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]


def _calls(message: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(id, name) of each call an assistant message makes, in either form (pi's or the wire's)."""
    blocks = message.get("content")
    calls = [
        (str(b.get("id")), str(b.get("name")))
        for b in (blocks if isinstance(blocks, list) else [])
        if isinstance(b, dict) and b.get("type") == "toolCall"
    ]
    wire = message.get("tool_calls")
    for call in wire if isinstance(wire, list) else []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            calls.append((str(call.get("id")), str(function.get("name"))))
    return calls


def message_class(message: Mapping[str, Any], tools: Mapping[str, str]) -> Key:
    """(class, tool name or None) of one message; `tools` names each call id's tool."""
    role = message.get("role")
    if role == "assistant":
        calls = _calls(message)
        return ("tool_use", calls[0][1]) if calls else ("assistant", None)
    if role in ("toolResult", "tool"):
        call_id = message.get("toolCallId", message.get("tool_call_id"))
        return "tool_result", tools.get(str(call_id), "unknown")
    if role == "user":
        texts = _texts(message.get("content"))
        summary = bool(texts) and texts[0].startswith(_SUMMARY_PREFIXES)
        return ("summary" if summary else "human"), None
    if role in ("compactionSummary", "branchSummary"):
        return "summary", None
    return _ROLE_CLASS.get(str(role), "other"), None


def visible_text(message: Mapping[str, Any]) -> str:
    """The text a tokenizer counts: message texts, thinking, call names and arguments, outputs."""
    pieces = _texts(message.get("content"))
    blocks = message.get("content")
    for block in blocks if isinstance(blocks, list) else []:
        if isinstance(block, dict) and block.get("type") == "thinking":
            pieces.append(str(block.get("thinking") or ""))
        elif isinstance(block, dict) and block.get("type") == "toolCall":
            pieces += [str(block.get("name")), orjson.dumps(block.get("arguments")).decode()]
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            pieces += [str(function.get("name")), str(function.get("arguments"))]
    if isinstance(message.get("summary"), str):
        pieces.append(message["summary"])
    return "\n".join(pieces)


def _file_messages(session: PiSession) -> Iterator[Mapping[str, Any]]:
    for entry in session.entries:
        if entry.kind is PiKind.MESSAGE:
            yield entry.message
        elif entry.kind is PiKind.COMPACTION:
            yield {"role": "compactionSummary", "summary": entry.record.get("summary")}
        elif entry.kind is PiKind.BRANCH_SUMMARY:
            yield {"role": "branchSummary", "summary": entry.record.get("summary")}
        elif entry.kind is PiKind.CUSTOM_MESSAGE:
            yield {"role": "custom", "content": entry.record.get("content")}


def _tally(
    messages: Iterable[Mapping[str, Any]],
    tools: Mapping[str, str],
    counters: Mapping[str, Callable[[Mapping[str, Any]], int]],
) -> dict[Key, Tally]:
    table: dict[Key, Tally] = defaultdict(Tally)
    for message in messages:
        kind, name = message_class(message, tools)
        counts = {estimator: count(message) for estimator, count in counters.items()}
        for key in ((kind, None), (kind, name)) if name else ((kind, None),):
            table[key].items += 1
            for estimator, value in counts.items():
                table[key].tokens[estimator] += value
    return table


def _pi_estimate(message: Mapping[str, Any]) -> int:
    return math.ceil(len(orjson.dumps(message)) / 4)


def class_tallies(
    session: PiSession,
    sent: Iterable[ChatMessage],
    estimate: str,
    tokenizers: Mapping[str, Callable[[str], int]],
) -> ClassTallies:
    """Tokens by class over the file's messages and over what pi sends, by the JSON-bytes / 4
    estimate (named `estimate`) and by each tokenizer over a message's visible text."""
    counters: dict[str, Callable[[Mapping[str, Any]], int]] = {estimate: _pi_estimate}
    for name, count in tokenizers.items():
        counters[name] = lambda message, count=count: count(visible_text(message))  # type: ignore[misc]
    tools = {call_id: name for message in _file_messages(session) for call_id, name in _calls(message)}
    file = _tally(_file_messages(session), tools, counters)
    return ClassTallies(file, _tally((m.body for m in sent), tools, counters))
