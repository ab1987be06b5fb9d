"""The messages pi makes of its context entries, before any provider sees them (pi 1.6.0).

Each context entry gives pi's own messages (`sessionEntryToContextMessages`, then the latest
`context_edit` of it applied), which `convertToLlm` turns into the model's roles: a compaction
becomes its checkpoint and a user message wrapping its summary, a branch summary and a custom
message become user messages, a `bashExecution` the text of the command and its output. Every
message keeps the line it came from.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from pipeline.formats.pi.session_decode import PiEntry, PiKind

__all__ = [
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "AgentMessage",
    "agent_messages",
    "compaction_summary_text",
]

COMPACTION_SUMMARY_PREFIX: Final = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX: Final = "\n</summary>"
BRANCH_SUMMARY_PREFIX: Final = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX: Final = "</summary>"
_EDITABLE: Final = frozenset({"user", "assistant", "toolResult", "custom"})
_EMPTY_WHEN_NULL: Final = frozenset({"user", "assistant", "toolResult"})


@dataclass(frozen=True, slots=True)
class AgentMessage:
    """One message of pi's context and the line it came from; `summary`: a compaction's summary."""

    line: int
    body: dict[str, Any]
    summary: bool = False


def compaction_summary_text(summary: str) -> str:
    """The user text pi sends for a compaction summary."""
    return COMPACTION_SUMMARY_PREFIX + summary + COMPACTION_SUMMARY_SUFFIX


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _entry_messages(entry: PiEntry, first: bool) -> list[dict[str, Any]]:
    """`sessionEntryToContextMessages`, the roles already as `convertToLlm` leaves them."""
    record = entry.record
    if entry.kind is PiKind.MESSAGE:
        message = dict(entry.message)
        role = entry.role
        message["role"] = role
        if message.get("content") is None and role in _EMPTY_WHEN_NULL:
            message["content"] = []
        return [message]
    if entry.kind is PiKind.CUSTOM_MESSAGE:
        content = record.get("content")
        return [{"role": "custom", "content": [] if content is None else content}]
    if entry.kind is PiKind.BRANCH_SUMMARY and record.get("summary"):
        return [{"role": "branchSummary", "summary": record["summary"]}]
    if entry.kind is PiKind.COMPACTION and first:
        summary = {"role": "compactionSummary", "summary": record.get("summary")}
        checkpoint = record.get("systemMessage")
        return [checkpoint, summary] if isinstance(checkpoint, dict) else [summary]
    return []


def _edited(messages: list[dict[str, Any]], edit: PiEntry | None) -> list[dict[str, Any]]:
    if edit is None:
        return messages
    replacement = edit.record.get("replacement")
    if replacement is None:
        return []
    content = replacement.get("content") if isinstance(replacement, dict) else None
    edited = []
    for message in messages:
        role = message.get("role")
        if role not in _EDITABLE:
            edited.append(message)
            continue
        if role in ("assistant", "toolResult") and isinstance(content, str):
            edited.append({**message, "content": [_text_part(content)]})
        else:
            edited.append({**message, "content": content})
    return edited


def _bash_text(message: dict[str, Any]) -> str:
    text = f"Ran `{message.get('command')}`\n"
    output = message.get("output")
    text += f"```\n{output}\n```" if output else "(no output)"
    exit_code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif isinstance(exit_code, int) and exit_code != 0:
        text += f"\n\nCommand exited with code {exit_code}"
    if message.get("truncated") and message.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {message.get('fullOutputPath')}]"
    return text


def _to_llm(message: dict[str, Any]) -> dict[str, Any] | None:
    """`convertToLlm`: pi's own roles as user messages; unknown roles dropped."""
    role = message.get("role")
    if role == "bashExecution":
        excluded = message.get("excludeFromContext")
        return None if excluded else {"role": "user", "content": [_text_part(_bash_text(message))]}
    if role == "custom":
        content = message.get("content")
        if isinstance(content, str):
            return {"role": "user", "content": [_text_part(content)]}
        return {"role": "user", "content": content}
    if role == "branchSummary":
        text = BRANCH_SUMMARY_PREFIX + str(message.get("summary")) + BRANCH_SUMMARY_SUFFIX
        return {"role": "user", "content": [_text_part(text)]}
    if role == "compactionSummary":
        return {"role": "user", "content": [_text_part(compaction_summary_text(str(message.get("summary"))))]}
    return message if role in ("system", "user", "assistant", "toolResult") else None


def agent_messages(context: tuple[PiEntry, ...]) -> Iterator[AgentMessage]:
    """pi's LLM messages for a branch's context entries, in order, each with its line."""
    edits = {
        entry.record.get("targetId"): entry
        for entry in context
        if entry.kind is PiKind.CONTEXT_EDIT and isinstance(entry.record.get("targetId"), str)
    }
    for index, entry in enumerate(context):
        messages = _entry_messages(entry, first=index == 0)
        for message in _edited(messages, edits.get(entry.entry_id)):
            converted = _to_llm(message)
            if converted is not None:
                summary = entry.kind is PiKind.COMPACTION and converted.get("role") == "user"
                yield AgentMessage(entry.line, converted, summary)
