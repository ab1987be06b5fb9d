"""The summarized span of a Qwen Code session as the summarizers' evidence (the items Claude Code
sessions give them), so the embedded summarizer and the model path summarize it unchanged.

Qwen Code's tools are named in the summarizers' vocabulary: `run_shell_command` is a shell
command, `read_file`, `write_file` and `edit` are Read, Write and Edit of their `file_path`;
every other call keeps its own name. A compression's history is a prior summary. Each item cites
the first line of the content it comes from.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

import orjson

from pipeline.formats.bounded_text import bound_text
from pipeline.formats.evidence_tools import EDIT, READ, SHELL, WRITE
from pipeline.formats.qwen_code.api_history import Entry
from pipeline.formats.qwen_code.session_analysis import QwenAnalysis
from pipeline.formats.qwen_code.session_records import Part, PartKind
from pipeline.summarize.evidence.items import TOOL_RESULT_EVIDENCE_BYTES, EvidenceItem, EvidenceKind

__all__ = ["session_evidence"]

_TOOLS: Final = {"run_shell_command": SHELL, "read_file": READ, "write_file": WRITE, "edit": EDIT}


def _arguments(part: Part) -> dict[str, Any]:
    try:
        value = orjson.loads(part.arguments)
    except orjson.JSONDecodeError:
        return {"input": part.arguments}
    return value if isinstance(value, dict) else {"input": part.arguments}


def _part_evidence(part: Part, entry: Entry, line: int) -> Iterator[EvidenceItem]:
    role = entry.content.role
    if part.kind is PartKind.TEXT and part.text:
        if entry.from_compression:
            yield EvidenceItem(line, EvidenceKind.PRIOR_SUMMARY, part.text)
        else:
            kind = EvidenceKind.HUMAN_PROMPT if role == "user" else EvidenceKind.ASSISTANT_TEXT
            yield EvidenceItem(line, kind, part.text)
    elif part.kind is PartKind.THOUGHT and part.text:
        yield EvidenceItem(line, EvidenceKind.THINKING, part.text)
    elif part.kind is PartKind.FUNCTION_CALL:
        tool = _TOOLS.get(part.name, part.name)
        yield EvidenceItem(line, EvidenceKind.TOOL_CALL, "", tool, part.call_id, _arguments(part))
    elif part.kind is PartKind.FUNCTION_RESPONSE:
        text = bound_text("\n".join((part.text, *part.nested)), TOOL_RESULT_EVIDENCE_BYTES)
        yield EvidenceItem(line, EvidenceKind.TOOL_RESULT, text, tool_id=part.call_id, is_error=part.failed)


def session_evidence(analysis: QwenAnalysis, cut_line: int) -> tuple[EvidenceItem, ...]:
    """Evidence of the history Qwen Code sends before `cut_line` (the summarized span)."""
    return tuple(
        item
        for entry in analysis.sent_history
        if entry.lines[0] < cut_line
        for part in entry.content.parts
        for item in _part_evidence(part, entry, entry.lines[0])
    )
