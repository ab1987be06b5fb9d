"""Identifiers and the last state of the work: the probes read from what was said and left open.

Identifiers come from human text, assistant text and tool inputs (never tool output, and never the
file contents a tool input carries): URLs, issue and ticket numbers, versions, ports, each once.
The last state is what a resumed agent needs to carry on: the span's last assistant message,
the open todos of its latest todo list (unless the kept tail writes a newer list), and the
background shells, subagents and tasks still open at the end of the chain.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Final

from pipeline.fidelity.probe_value import Probe, ProbeClass
from pipeline.fidelity.text import human_text, identity
from pipeline.formats.evidence_tools import SHELL_TOOLS
from pipeline.summarize.evidence.items import EvidenceItem, EvidenceKind, FrozenJson
from pipeline.summarize.evidence.work_state import ActiveWorkKind, collect_state

__all__ = ["CONTENT_KEYS", "IDENTIFIER_PATTERNS", "identifier_probes", "identifiers_in", "state_probes"]

CONTENT_KEYS: Final = frozenset(
    {"content", "new_string", "old_string", "edits", "new_source", "old_source", "file_text", "todos"}
)
"""Tool input members that hold file contents or lists: their versions and numbers are the file's."""
NOT_TICKETS: Final = frozenset({"UTF", "UCS", "ISO", "SHA", "MD", "AES", "RSA", "TLS", "SSL", "DES", "CP"})
"""Prefixes of names that look like tickets and are encodings or algorithms (`UTF-8`, `SHA-256`)."""
IDENTIFIER_PATTERNS: Final = (
    # (kind, what a text must hold for the pattern to be worth running: a fast scan, the pattern)
    ("url", re.compile(r"://"), re.compile(r"\bhttps?://[^\s\"'<>`()\[\]{}|\\^“”‘’«»]+")),  # noqa: RUF001
    ("issue", re.compile(r"#\d"), re.compile(r"(?<![\w&#/])#\d{1,6}\b")),
    ("ticket", re.compile(r"[A-Z]-\d"), re.compile(r"\b([A-Z][A-Z0-9]{1,9})-\d{1,6}\b")),
    (
        "version",
        re.compile(r"\d\.\d"),
        re.compile(
            r"(?<![\w.])(?:v?\d{1,4}\.\d{1,4}\.\d{1,6}(?:-[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?|v\d{1,4}\.\d{1,4})"
            r"(?![\w-]|\.\d)"
        ),
    ),
    (
        "port",
        re.compile(r"localhost:|\]:"),
        re.compile(r"(?<![\w.:-])(?:localhost|\[::1?\]):(\d{2,5})(?!\d)"),
    ),
    (
        "port",
        re.compile(r"\d\.\d{1,3}:\d"),
        re.compile(r"(?<![\w.:-])(?:\d{1,3}\.){3}\d{1,3}:(\d{2,5})(?!\d)"),
    ),
    ("port", re.compile(r"://"), re.compile(r"://[\w.-]+:(\d{2,5})(?!\d)")),
    (
        "port",
        re.compile(r"\b[Pp]ort\s|--port|PORT="),
        re.compile(r"(?i:\bport\s+|--port[= ])(\d{2,5})\b|\bPORT=(\d{2,5})\b"),
    ),
)
"""How each kind of identifier is written (URLs with typographic quotes ending them); a port
probe's fact is its number, in a URL, after a local host or address, or named as a port."""
_TRAILING: Final = ".,:;!?*_~"  # markdown emphasis and sentence stops after a URL
_BACKGROUND: Final = re.compile(r"running in background with ID: ")
_OPEN_TODO: Final = frozenset({"pending", "in_progress"})
_OPEN_WORK: Final = (ActiveWorkKind.BACKGROUND_SHELL, ActiveWorkKind.SUBAGENT, ActiveWorkKind.TASK)


def identifiers_in(text: str) -> Iterator[tuple[str, str]]:
    """(kind, identifier) of every identifier a text writes, in the order of the patterns."""
    for kind, hint, pattern in IDENTIFIER_PATTERNS:
        if hint.search(text) is None:
            continue  # no identifier of this pattern can be there: it is not run
        for match in pattern.finditer(text):
            if kind == "ticket" and match.group(1) in NOT_TICKETS:
                continue
            if kind == "port":
                yield kind, next(group for group in match.groups() if group is not None)
            elif kind == "url":
                yield kind, match.group(0).rstrip(_TRAILING)
            else:
                yield kind, match.group(0)


def _input_strings(value: FrozenJson | Mapping[str, FrozenJson], key: str = "") -> Iterator[str]:
    if key in CONTENT_KEYS:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, tuple):
        for member in value:
            yield from _input_strings(member, key)
    elif isinstance(value, MappingProxyType | dict):  # frozen inputs: never an ABC check per value
        for name, member in value.items():
            yield from _input_strings(member, name)


def _said(item: EvidenceItem) -> Iterator[str]:
    if item.kind is EvidenceKind.HUMAN_PROMPT:
        yield human_text(item.text)
    elif item.kind is EvidenceKind.ASSISTANT_TEXT:
        yield item.text
    elif item.kind is EvidenceKind.TOOL_CALL:
        yield from _input_strings(item.tool_input)


def identifier_probes(span: Sequence[EvidenceItem]) -> Iterator[Probe]:
    """Every identifier of the span, once, at the line that first wrote it."""
    seen: set[tuple[str, str]] = set()
    for item in span:
        for text in _said(item):
            for kind, value in identifiers_in(text):
                if (kind, value) not in seen:
                    seen.add((kind, value))
                    yield Probe(ProbeClass.IDENTIFIER, item.line, value, kind)


def _work_items(items: Sequence[EvidenceItem]) -> list[EvidenceItem]:
    """The items that start, report on or end work: shell commands only when run in the background
    (the rest would only be lexed for their file operations), every other call, results, notices."""
    background = {
        item.tool_id
        for item in items
        if item.kind is EvidenceKind.TOOL_RESULT and item.tool_id and _BACKGROUND.search(item.text)
    }
    return [
        item
        for item in items
        if item.kind is not EvidenceKind.TOOL_CALL
        or item.tool_name not in SHELL_TOOLS
        or item.tool_id in background
        or item.tool_input.get("run_in_background") is True
    ]


def state_probes(span: Sequence[EvidenceItem], later: Sequence[EvidenceItem] = ()) -> Iterator[Probe]:
    """The last assistant message, the open todos and the work still open, at the cut."""
    last = next((item for item in reversed(span) if item.kind is EvidenceKind.ASSISTANT_TEXT), None)
    if last is not None and (key := identity(last.text)):
        yield Probe(ProbeClass.LAST_STATE, last.line, key, "latest-message")
    state = collect_state(_work_items(span))
    replaced = any(item.kind is EvidenceKind.TOOL_CALL and item.tool_name == "TodoWrite" for item in later)
    if not replaced:
        for todo in state.todos:
            if todo.status in _OPEN_TODO and (key := identity(todo.content)):
                yield Probe(ProbeClass.LAST_STATE, todo.line, key, "todo")
    open_work = [work for work in state.active_work if work.kind in _OPEN_WORK]
    if not open_work:
        return
    still_open = {(work.kind, work.id) for work in collect_state(_work_items([*span, *later])).active_work}
    for work in open_work:
        if (work.kind, work.id) in still_open:
            label = identity(work.label.removesuffix("..."))
            if label:
                yield Probe(ProbeClass.LAST_STATE, work.lines[0], label, work.kind.value)
