"""What Claude Code sends for a chain: transcript rows turned into the context it rebuilds on resume.

This models Claude Code 2.1.332, read off what it sent for every corpus file and builder scenario
(`tests/test_resume_golden.py`, `tests/test_claude_code_resume.py`): the chain's user and
assistant rows become messages; `system/local_command` rows become user text; whitespace-only
text blocks are left out; fragments of one streamed assistant message are joined across the
tool-result messages between them, so parallel calls read as one message of calls followed by
one of results; consecutive user messages are joined, a text block followed by another text
block getting a newline; a tool result that loads deferred tools gets a `Tool loaded.` text.
On resume it closes the conversation: calls left open at the end get its synthetic interrupted
result, and a conversation ending on a user message (other than a local command's output) gets
an assistant `No response requested.` before the next prompt, which otherwise joins the last
user message. Attachments and other system rows reach the model only as reminders, which a
comparison leaves out. Whether thinking blocks are sent depends on the model the session is
resumed with (`keep_thinking`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from pipeline.core.index import LineIndex
from pipeline.estimate.seed import estimate_utf8
from pipeline.formats.claude_code.content import RecordContent, read_content
from pipeline.proof.claude_code.sent_context import ContextBlock, SentContext
from pipeline.proof.context import ContextSize
from pipeline.vocabulary import RecordType, Role

__all__ = ["INTERRUPTED_RESULT", "NO_RESPONSE", "TOOL_LOADED", "expected_context", "modelled_context"]

NO_RESPONSE: Final = "No response requested."
TOOL_LOADED: Final = "Tool loaded."
INTERRUPTED_RESULT: Final = (
    "[Tool call interrupted: the session ended before this call's result was recorded, so its "
    "outcome is unknown. Check whether it took effect before relying on it or running it again.]"
)
_CAVEAT: Final = "<local-command-caveat>"
_LOCAL_COMMAND_PREFIXES: Final = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<command-name>",
    "<command-message>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
)


@dataclass(slots=True)
class _Message:
    """A message being assembled (mutable while the chain is folded, frozen into blocks after)."""

    role: str
    blocks: list[ContextBlock] = field(default_factory=list)
    message_id: str | None = None
    local_command: bool = False  # a user message made of local-command text only
    from_system: bool = False  # a `system/local_command` row sent as user text
    caveat: bool = False  # the `<local-command-caveat>` meta message that opens a command group


def _blocks(role: str, row: RecordContent, keep_thinking: bool) -> list[ContextBlock]:
    if row.string_content is not None:
        text = row.string_content
        return [ContextBlock(role, "text", text, None)] if text.strip() else []
    found: list[ContextBlock] = []
    for part in row.parts:
        kind = part.type_name
        if kind == "text":
            if part.text.strip():
                found.append(ContextBlock(role, "text", part.text, None))
        elif kind in ("thinking", "redacted_thinking"):
            if keep_thinking:
                found.append(ContextBlock(role, "thinking", part.text, None))
        elif kind in ("tool_use", "tool_result"):
            found.append(ContextBlock(role, kind, part.shown, part.tool_id))
            if part.loads_tools:
                found.append(ContextBlock(role, "text", TOOL_LOADED, None))
        else:
            found.append(ContextBlock(role, kind, "", None))
    return found


def _is_local_command(blocks: Sequence[ContextBlock]) -> bool:
    return bool(blocks) and all(
        block.kind == "text" and block.text.lstrip().startswith(_LOCAL_COMMAND_PREFIXES) for block in blocks
    )


def _row_message(row: RecordContent | None, keep_thinking: bool) -> _Message | None:
    """The message one chain row contributes, or None (attachments, hooks, other system rows)."""
    if row is None:
        return None
    if row.type == RecordType.SYSTEM and row.subtype == "local_command":
        text = row.system_text
        return (
            _Message("user", [ContextBlock("user", "text", text, None)], local_command=True, from_system=True)
            if text
            else None
        )
    if row.type not in (RecordType.USER, RecordType.ASSISTANT) or not row.has_message:
        return None
    role = row.role or row.type
    blocks = _blocks(role, row, keep_thinking)
    if not blocks:
        return None
    message_id = row.message_id if role == Role.ASSISTANT else None
    local = role == Role.USER and _is_local_command(blocks)
    caveat = local and row.is_meta and blocks[0].text.startswith(_CAVEAT)
    return _Message(role, blocks, message_id, local, caveat=caveat)


def _fold(rows: list[_Message]) -> list[_Message]:
    """Join assistant fragments across tool-result messages, then consecutive user messages."""
    folded: list[_Message] = []
    for row in rows:
        if row.role == Role.ASSISTANT and _join_fragment(folded, row):
            continue
        if row.role == Role.USER and folded and folded[-1].role == Role.USER:
            _join_user(folded[-1], row)
            continue
        folded.append(row)
    return folded


def _join_fragment(folded: list[_Message], row: _Message) -> bool:
    """Join a fragment to the assistant message it continues, across a tool-result-only message
    (which then follows the joined calls); False when it starts a message of its own."""
    if row.message_id is None:
        return False
    for message in reversed(folded):
        if message.role == Role.ASSISTANT:
            if message.message_id != row.message_id:
                return False
            message.blocks.extend(row.blocks)
            return True
        if any(block.kind != "tool_result" for block in message.blocks):
            return False
    return False


def _join_user(first: _Message, second: _Message) -> None:
    if first.blocks and second.blocks and first.blocks[-1].kind == "text" and second.blocks[0].kind == "text":
        last = first.blocks[-1]
        first.blocks[-1] = ContextBlock(last.role, last.kind, last.text + "\n", last.id)
    first.blocks.extend(second.blocks)
    first.local_command = first.local_command and second.local_command


def _close(rows: list[_Message]) -> list[_Message]:
    """What Claude Code adds at the end, before the rows are joined into messages.

    Calls left open by the last assistant row get the synthetic interrupted result; when the
    last row that is not a system row is a user row other than a local command's output, the
    assistant reply `No response requested.` follows it (system rows written later stay after).
    """
    talk = [i for i, row in enumerate(rows) if not row.from_system]
    if not talk:
        return rows
    last = talk[-1]
    if rows[last].role == Role.ASSISTANT:
        open_calls = _open_calls(rows, last)
        if not open_calls:
            return rows
        interrupted = json.dumps(INTERRUPTED_RESULT)
        results = [ContextBlock("user", "tool_result", interrupted, tool) for tool in open_calls]
        rows.insert(last + 1, _Message("user", results))
        last += 1
    elif _ends_local_command_group(rows, talk):
        return rows
    rows.insert(last + 1, _Message("assistant", [ContextBlock("assistant", "text", NO_RESPONSE, None)]))
    return rows


def _open_calls(rows: list[_Message], last: int) -> list[str | None]:
    """Calls of the last assistant message (all its fragments) that no result answers."""
    message_id = rows[last].message_id
    first = last
    while first > 0 and message_id is not None and rows[first - 1].message_id in (message_id, None):
        if rows[first - 1].role == Role.USER and any(b.kind != "tool_result" for b in rows[first - 1].blocks):
            break
        first -= 1
    answered = {block.id for row in rows for block in row.blocks if block.kind == "tool_result"}
    return [
        block.id
        for row in rows[first : last + 1]
        if row.role == Role.ASSISTANT
        for block in row.blocks
        if block.kind == "tool_use" and block.id not in answered
    ]


def _ends_local_command_group(rows: list[_Message], talk: list[int]) -> bool:
    """A conversation ending on local-command output after Claude Code 2.x's tagged caveat."""
    for position in reversed(talk):
        row = rows[position]
        if row.role != Role.USER or not row.local_command:
            return False
        if row.caveat:
            return True
    return False


def _probe_joins(messages: list[_Message]) -> list[_Message]:
    """The next prompt joins a conversation that ends on a user message, as text after text."""
    if messages and messages[-1].role == Role.USER and messages[-1].blocks[-1].kind == "text":
        last = messages[-1].blocks[-1]
        messages[-1].blocks[-1] = ContextBlock(last.role, last.kind, last.text + "\n", last.id)
    return messages


def expected_context(
    data: bytes, index: LineIndex, chain: Sequence[int], *, keep_thinking: bool = True
) -> tuple[ContextBlock, ...]:
    """The blocks Claude Code sends for a chain (root-to-leaf lines), reminders and probe aside."""
    rows = [
        message
        for line in chain
        if (message := _row_message(read_content(index.raw_line(data, line)), keep_thinking)) is not None
    ]
    messages = _probe_joins(_fold(_close(rows)))
    return tuple(block for message in messages for block in message.blocks)


def modelled_context(
    data: bytes, index: LineIndex, chain: Sequence[int], *, keep_thinking: bool
) -> SentContext:
    """The context Claude Code would send for a chain, as a `SentContext` marked `modelled`.

    For an original Claude Code cannot send whole (over the API's request limit): it holds the
    blocks and their strings only, no reminders or tool definitions, which a transcript does not
    fix. `chain` may be a suffix of the active chain that starts well before the part compared.
    """
    blocks = expected_context(data, index, chain, keep_thinking=keep_thinking)
    characters = sum(len(block.text) for block in blocks)
    turns = sum(1 for at, block in enumerate(blocks) if at == 0 or blocks[at - 1].role != block.role)
    tokens = sum(estimate_utf8(block.text.encode("utf-8", "surrogatepass")) for block in blocks)
    size = ContextSize(messages=turns, characters=characters, estimated_tokens=tokens)
    return SentContext(blocks, tuple(block.text for block in blocks), size, modelled=True)
