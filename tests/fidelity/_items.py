"""Evidence items for the probe tests: the format-neutral pieces an adapter hands the probes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pipeline.fidelity import FidelityScore, ResumedContext, extract_probes, resumed_context, score_probes
from pipeline.summarize.evidence.items import EvidenceItem, EvidenceKind


def prompt(line: int, text: str) -> EvidenceItem:
    return EvidenceItem(line, EvidenceKind.HUMAN_PROMPT, text)


def say(line: int, text: str) -> EvidenceItem:
    return EvidenceItem(line, EvidenceKind.ASSISTANT_TEXT, text)


def summary(text: str, line: int = 2) -> EvidenceItem:
    return EvidenceItem(line, EvidenceKind.PRIOR_SUMMARY, text)


def call(
    line: int, tool: str, arguments: Mapping[str, Any], result: str | None, *, is_error: bool = False
) -> list[EvidenceItem]:
    """A tool call on `line` and, unless `result` is None, its result on the next line."""
    tool_id = f"toolu_{line:04d}"
    items = [
        EvidenceItem(
            line, EvidenceKind.TOOL_CALL, tool_name=tool, tool_id=tool_id, tool_input=dict(arguments)
        )
    ]
    if result is not None:
        items.append(
            EvidenceItem(
                line + 1, EvidenceKind.TOOL_RESULT, result, tool_name=tool, tool_id=tool_id, is_error=is_error
            )
        )
    return items


def bash(line: int, command: str, result: str | None = "", *, is_error: bool = False) -> list[EvidenceItem]:
    return call(line, "Bash", {"command": command}, result, is_error=is_error)


def context(text: str, *kept: EvidenceItem, cleared_marker: str | None = None) -> ResumedContext:
    """A resumed context: one summary text, then kept records (in a format whose cleared tool
    outputs read `cleared_marker`, if given)."""
    return resumed_context([summary(text), *kept], cleared_marker)


def scored(
    span: list[EvidenceItem], resumed: list[EvidenceItem], later: list[EvidenceItem] | None = None
) -> FidelityScore:
    return score_probes(extract_probes(span, later or []), resumed_context(resumed))
