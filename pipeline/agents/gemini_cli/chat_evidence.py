"""The summarized span of a Gemini CLI session as the summarizers' evidence.

Gemini CLI's tools are named in the summarizers' vocabulary where they match (`run_shell_command`
is a shell command, `write_file` a write, `replace` an edit, `read_file` a read); every other
call keeps its own name. Every item cites the line its message came from.
"""

from __future__ import annotations

from typing import Final

from pipeline.formats.bounded_text import bound_text
from pipeline.formats.evidence_tools import EDIT, READ, SHELL, WRITE
from pipeline.formats.gemini_cli.chat_analysis import ChatAnalysis
from pipeline.formats.gemini_cli.span import SpanBlock, SpanKind, span_blocks
from pipeline.summarize.evidence.items import TOOL_RESULT_EVIDENCE_BYTES, EvidenceItem, EvidenceKind

__all__ = ["chat_evidence"]

_TOOL_NAMES: Final = {
    "run_shell_command": SHELL,
    "write_file": WRITE,
    "replace": EDIT,
    "read_file": READ,
}
_TEXT_KINDS: Final = {
    SpanKind.PROMPT: EvidenceKind.HUMAN_PROMPT,
    SpanKind.MODEL_TEXT: EvidenceKind.ASSISTANT_TEXT,
    SpanKind.PRIOR_SUMMARY: EvidenceKind.PRIOR_SUMMARY,
}


def _evidence(block: SpanBlock) -> EvidenceItem:
    if block.kind is SpanKind.CALL:
        tool = _TOOL_NAMES.get(block.tool_name or "", block.tool_name)
        arguments = {"command": block.arguments.get("command", "")} if tool == SHELL else block.arguments
        return EvidenceItem(block.line, EvidenceKind.TOOL_CALL, "", tool, block.tool_id, arguments)
    if block.kind is SpanKind.RESULT:
        held = bound_text(block.text, TOOL_RESULT_EVIDENCE_BYTES)
        return EvidenceItem(
            block.line, EvidenceKind.TOOL_RESULT, held, tool_id=block.tool_id, is_error=block.is_error
        )
    return EvidenceItem(block.line, _TEXT_KINDS[block.kind], block.text)


def chat_evidence(analysis: ChatAnalysis, first_kept: int) -> tuple[EvidenceItem, ...]:
    """Evidence of the sent items before `first_kept` (the summarized span), as Gemini CLI sends them."""
    return tuple(_evidence(block) for block in span_blocks(analysis, first_kept))
