"""The resumed context a candidate gives: its summary text(s) and its kept records, as passages.

Probes are looked up here, never in the original. A passage is one unit a reader takes in at
once: in a summary, a top-level list item with its indented lines, a heading, or a paragraph;
in the kept records, one message's text, or one tool call with its input and result. Facts that
must stand together (a command and its outcome, an error and what it was about) are looked for
within one passage. A kept tool call is also read as a structured run (tool, command, target,
outcome), since a resumed agent sees its result exactly. Thinking is left out: whether a
client sends it on resume depends on the model.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from pipeline.fidelity.outcome import call_outcome
from pipeline.fidelity.text import human_text, identity, normalize
from pipeline.formats.evidence_tools import SHELL_TOOLS, TARGET_KEYS
from pipeline.summarize.evidence.items import EvidenceItem, EvidenceKind, FrozenJson
from pipeline.summarize.evidence.shell import CommandOutcome, is_validation_command

_ESCAPE: Final = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # a terminal's colours: not words a model reads

__all__ = ["KeptCall", "ResumedContext", "resumed_context", "summary_passages"]

_ITEM_START: Final = re.compile(r"^(?:#{1,6}\s|[-*+]\s|\d+[.)]\s)")
_HEADING: Final = re.compile(r"^#{1,6}\s")
_TEXT_KINDS: Final = frozenset(
    {EvidenceKind.HUMAN_PROMPT, EvidenceKind.ASSISTANT_TEXT, EvidenceKind.COMMAND, EvidenceKind.OTHER}
)


@dataclass(frozen=True, slots=True)
class KeptCall:
    """A tool call the resumed context holds with its result: what a resumed agent sees it did."""

    tool: str
    command: str  # the command's identity, "" for other tools
    target: str  # a file path or URL the call names, "" when none
    outcome: CommandOutcome


@dataclass(frozen=True, slots=True)
class ResumedContext:
    """The passages of one resumed context, its whole text and its kept calls.

    `text` holds each summary and each kept record's text whole (normalized), one a line: a fact
    is found in it when it stands in one of them (a quoted instruction spans paragraphs).
    """

    text: str
    passages: tuple[str, ...]  # normalized, none empty
    summary_lines: tuple[str, ...]  # the summary texts' lines, stripped, for short human messages
    calls: tuple[KeptCall, ...]
    # The kept human messages, whole (as `human_text` reads them): a short one kept as a human
    # message of its own is carried (a masked middle keeps every one), not only as a summary line.
    prompts: frozenset[str] = frozenset()


def summary_passages(text: str) -> Iterator[str]:
    """A summary's passages: top-level list items (with their indented lines), headings, paragraphs."""
    current: list[str] = []
    blank = False
    for line in text.splitlines():
        if not line.strip():
            blank = True
            continue
        starts = not line[:1].isspace() and (blank or _ITEM_START.match(line) is not None)
        if current and (starts or _HEADING.match(current[0])):
            yield normalize(" ".join(current))
            current = []
        current.append(line)
        blank = False
    if current:
        yield normalize(" ".join(current))


def _strings(value: FrozenJson, key: str = "") -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, tuple):
        for member in value:
            yield from _strings(member, key)
    elif value is not None and not isinstance(value, bool | int | float):
        for name, member in value.items():
            yield from _strings(member, name)


def _kept_call(
    call: EvidenceItem, result: EvidenceItem | None, validations: dict[str, bool], cleared_marker: str | None
) -> tuple[KeptCall, str]:
    tool = call.tool_name or ""
    command = call.tool_input.get("command")
    command = command if isinstance(command, str) and tool in SHELL_TOOLS else ""
    target = next((v for k in TARGET_KEYS if isinstance(v := call.tool_input.get(k), str)), "")
    text = result.text if result is not None else None
    if text is not None and cleared_marker is not None and text.strip() == cleared_marker:
        text = None  # a cleared output says nothing of how its call ended (a masking strategy's)

    def test_run() -> bool:
        if command not in validations:
            validations[command] = is_validation_command(command)
        return validations[command]

    error = result.is_error if result is not None else False
    outcome = call_outcome(text, error, test_run=test_run if command else None)
    inputs = " ".join(_strings(call.tool_input))
    passage = normalize(f"{tool} {inputs} {_ESCAPE.sub('', text or '')}")
    return KeptCall(tool, identity(command) if command else "", target, outcome), passage


def resumed_context(items: Sequence[EvidenceItem], cleared_marker: str | None = None) -> ResumedContext:
    """The context a resumed agent starts from, read from the evidence of its records;
    `cleared_marker`: the text that stands for a cleared tool output in its format, if it has one."""
    results = {i.tool_id: i for i in items if i.kind is EvidenceKind.TOOL_RESULT and i.tool_id}
    called = {i.tool_id for i in items if i.kind is EvidenceKind.TOOL_CALL and i.tool_id}
    summaries: list[str] = []
    summary_parts: list[str] = []
    records: list[str] = []
    lines: list[str] = []
    calls: list[KeptCall] = []
    validations: dict[str, bool] = {}  # kept tails repeat their commands: each is lexed once
    for item in items:
        if item.kind is EvidenceKind.PRIOR_SUMMARY:
            summaries.append(normalize(item.text))
            summary_parts.extend(summary_passages(item.text))
            lines.extend(line.strip() for line in item.text.splitlines() if line.strip())
        elif item.kind in _TEXT_KINDS:
            records.append(normalize(item.text))
        elif item.kind is EvidenceKind.TOOL_CALL:
            result = results.get(item.tool_id) if item.tool_id else None
            call, passage = _kept_call(item, result, validations, cleared_marker)
            calls.append(call)
            records.append(passage)
        elif item.kind is EvidenceKind.TOOL_RESULT and item.tool_id not in called:
            records.append(normalize(item.text))
    records = [record for record in records if record]
    prompts = frozenset(human_text(i.text) for i in items if i.kind is EvidenceKind.HUMAN_PROMPT)
    return ResumedContext(
        "\n".join((*summaries, *records)), (*summary_parts, *records), tuple(lines), tuple(calls), prompts
    )
