"""The summarized span of a CodeWhale session as the summarizers' evidence (the items Claude Code
sessions give them), so both summarizers summarize CodeWhale sessions unchanged.

CodeWhale's shell tool (`bash`, `exec_shell` before 0.10) is a shell command; every other call
keeps its own name. A user text that is a checkpoint (any of the three forms its compactions
wrote) is a prior summary; the messages its resume repair wrote cite the record before them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

import orjson

from pipeline.formats.bounded_text import bound_text
from pipeline.formats.codewhale.whale_document import RESULTS, Block, BlockKind
from pipeline.formats.codewhale.whale_history import Rebuilt, RebuiltMessage
from pipeline.formats.codewhale.whale_markers import is_checkpoint
from pipeline.formats.evidence_tools import SHELL
from pipeline.summarize.evidence.items import TOOL_RESULT_EVIDENCE_BYTES, EvidenceItem, EvidenceKind

__all__ = ["session_evidence"]

_SHELL_TOOLS: Final = frozenset({"bash", "exec_shell", "shell", "run_command"})  # bash since 0.10


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return {"input": text}
    return value if isinstance(value, dict) else {"input": value}


def _call(block: Block, line: int) -> EvidenceItem:
    arguments = _arguments(block.text)
    if block.name in _SHELL_TOOLS:
        command = arguments.get("command", arguments.get("cmd", ""))
        command = " ".join(map(str, command)) if isinstance(command, list) else str(command)
        return EvidenceItem(line, EvidenceKind.TOOL_CALL, "", SHELL, block.call_id, {"command": command})
    return EvidenceItem(line, EvidenceKind.TOOL_CALL, "", block.name or "tool", block.call_id, arguments)


def _block(item: RebuiltMessage, block: Block, line: int, checkpoint: bool) -> Iterator[EvidenceItem]:
    role = item.message.role
    if block.kind is BlockKind.TEXT and block.text:
        if role == "user":
            kind = EvidenceKind.PRIOR_SUMMARY if checkpoint else EvidenceKind.HUMAN_PROMPT
        elif role == "system":
            kind = EvidenceKind.OTHER
        else:
            kind = EvidenceKind.ASSISTANT_TEXT
        yield EvidenceItem(line, kind, block.text)
    elif block.kind is BlockKind.THINKING and block.text:
        yield EvidenceItem(line, EvidenceKind.THINKING, block.text)
    elif block.kind in {BlockKind.TOOL_USE, BlockKind.SERVER_TOOL_USE}:
        yield _call(block, line)
    elif block.kind in RESULTS:
        held = bound_text(block.text, TOOL_RESULT_EVIDENCE_BYTES)
        yield EvidenceItem(
            line, EvidenceKind.TOOL_RESULT, held, tool_id=block.call_id, is_error=block.is_error
        )


def session_evidence(rebuilt: Rebuilt, first_kept: int) -> tuple[EvidenceItem, ...]:
    """Evidence of the rebuilt history before `first_kept` (the summarized span), by record."""
    evidence: list[EvidenceItem] = []
    line = 1
    for item in rebuilt.messages[:first_kept]:
        line = item.record if item.record is not None else line
        checkpoint = is_checkpoint(item.message)
        blocks = item.message.blocks[:1] if checkpoint else item.message.blocks  # not its provenance
        for block in blocks:
            evidence.extend(_block(item, block, line, checkpoint))
    return tuple(evidence)
