"""The summarized span of a Codex rollout as the summarizers' evidence (the same items Claude Code
sessions give them), so the embedded summarizer and the model path summarize rollouts unchanged.

Codex's tools are named in the summarizers' vocabulary: its shell calls (`exec_command`, `shell`,
`shell_command`, `local_shell_call`) are shell commands, `apply_patch` an edit or a write of each
file it names; every other call keeps its own name. A prompt is a user message Codex did not
inject; earlier compactions' summaries are prior summaries. Every item cites its source line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import islice
from typing import Any, Final

import orjson

from pipeline.formats.bounded_text import bound_text
from pipeline.formats.codex.analysis import RolloutAnalysis
from pipeline.formats.codex.checkpoint_records import SUMMARY_PREFIX
from pipeline.formats.codex.item_types import CALL_TYPES, OUTPUT_TYPES, SHELL_CALL_TYPES
from pipeline.formats.codex.rollout_decode import CONTEXTUAL_PREFIXES
from pipeline.formats.codex.rollout_items import sent_pairs
from pipeline.formats.evidence_tools import EDIT, SHELL, WRITE
from pipeline.summarize.evidence.items import TOOL_RESULT_EVIDENCE_BYTES, EvidenceItem, EvidenceKind

__all__ = ["rollout_evidence"]

_SHELL_CALLS: Final = frozenset({"exec_command", "shell", "shell_command", "container.exec"})
_CODEX_SUMMARY_PREFIX: Final = "Another language model started to solve this problem"
_PATCH_FILE: Final = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$", re.MULTILINE)
_EXIT: Final = re.compile(r"(?:Process exited with code|exit_code\"?:)\s*(-?\d+)")


def _texts(item: dict[str, Any]) -> str:
    content = item.get("content")
    parts = content if isinstance(content, list) else []
    return "\n".join(p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))


def _message(item: dict[str, Any], line: int) -> Iterator[EvidenceItem]:
    text, role = _texts(item), item.get("role")
    if not text:
        return
    if role == "assistant":
        yield EvidenceItem(line, EvidenceKind.ASSISTANT_TEXT, text)
    elif role == "user" and text.startswith((SUMMARY_PREFIX, _CODEX_SUMMARY_PREFIX)):
        yield EvidenceItem(line, EvidenceKind.PRIOR_SUMMARY, text)
    elif role == "user" and not text.lstrip().startswith(CONTEXTUAL_PREFIXES):
        yield EvidenceItem(line, EvidenceKind.HUMAN_PROMPT, text)
    else:
        yield EvidenceItem(line, EvidenceKind.OTHER, bound_text(text, TOOL_RESULT_EVIDENCE_BYTES))


def _arguments(raw: object) -> dict[str, Any]:
    if isinstance(raw, str):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return {"input": raw}
        return value if isinstance(value, dict) else {"input": raw}
    return raw if isinstance(raw, dict) else {}


def _command(arguments: dict[str, Any]) -> str:
    command = arguments.get("cmd", arguments.get("command", ""))
    return " ".join(map(str, command)) if isinstance(command, list) else str(command)


def _call(item: dict[str, Any], line: int) -> Iterator[EvidenceItem]:
    kind, call_id = item.get("type"), item.get("call_id")
    name = str(item.get("name") or kind)
    if kind in SHELL_CALL_TYPES:
        action = item.get("action")
        action = action if isinstance(action, dict) else {}
        yield EvidenceItem(line, EvidenceKind.TOOL_CALL, "", SHELL, call_id, {"command": _command(action)})
        return
    arguments = _arguments(item.get("input") if kind == "custom_tool_call" else item.get("arguments"))
    if name in _SHELL_CALLS:
        yield EvidenceItem(line, EvidenceKind.TOOL_CALL, "", SHELL, call_id, {"command": _command(arguments)})
    elif name == "apply_patch":
        patch = str(item.get("input") or arguments.get("input") or "")
        for action, path in _PATCH_FILE.findall(patch):
            tool = WRITE if action == "Add" else EDIT
            yield EvidenceItem(line, EvidenceKind.TOOL_CALL, "", tool, call_id, {"file_path": path.strip()})
    else:
        yield EvidenceItem(line, EvidenceKind.TOOL_CALL, "", name, call_id, arguments)


def _output(item: dict[str, Any], line: int) -> Iterator[EvidenceItem]:
    output = item.get("output")
    text = (
        output if isinstance(output, str) else _texts({"content": output}) if isinstance(output, list) else ""
    )
    exit_code = _EXIT.search(text[:2000])
    failed = exit_code is not None and exit_code.group(1) != "0"
    held = bound_text(text, TOOL_RESULT_EVIDENCE_BYTES)
    yield EvidenceItem(line, EvidenceKind.TOOL_RESULT, held, tool_id=item.get("call_id"), is_error=failed)


def _reasoning(item: dict[str, Any], line: int) -> Iterator[EvidenceItem]:
    summary = item.get("summary")
    parts = summary if isinstance(summary, list) else []
    text = "\n".join(p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))
    if text:
        yield EvidenceItem(line, EvidenceKind.THINKING, text)


def _evidence_of(item: dict[str, Any], line: int) -> Iterator[EvidenceItem]:
    kind = item.get("type")
    if kind == "message":
        yield from _message(item, line)
    elif kind in CALL_TYPES:
        yield from _call(item, line)
    elif kind in OUTPUT_TYPES:
        yield from _output(item, line)
    elif kind == "reasoning":
        yield from _reasoning(item, line)


def rollout_evidence(analysis: RolloutAnalysis, first_kept: int) -> tuple[EvidenceItem, ...]:
    """Evidence of the sent items before `first_kept` (the summarized span), as Codex sends them."""
    pairs = islice(sent_pairs(analysis.rollout, analysis.data, analysis.rebuilt), first_kept)
    return tuple(evidence for reference, item in pairs for evidence in _evidence_of(item, reference.line))
