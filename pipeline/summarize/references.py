"""Identifiers a span wrote (seed 001's exact references): URLs, issue and ticket numbers, versions, ports.

A resumed agent asked about "the PR", "the ticket" or "the port we moved to" needs the exact
string, and a quote cut to its head loses it. Identifiers are read from what the human and the
assistant wrote and from tool inputs (the command run, the URL fetched), never from tool output
and never from the file contents a tool input carries (their version numbers are the file's).
Each identifier is one record, at the line that first wrote it; the records of a prior appendix
come first, so a session compressed again keeps them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from pipeline.summarize.evidence import EvidenceItem, EvidenceKind, FrozenJson

__all__ = ["Reference", "collect_references", "references_in"]

FILE_CONTENT_KEYS: Final = frozenset(
    {"content", "new_string", "old_string", "edits", "new_source", "old_source", "file_text", "todos"}
)
"""Tool input members that carry file contents or lists, not what the agent referred to."""
NOT_TICKET_PREFIXES: Final = frozenset(
    {"UTF", "UCS", "ISO", "SHA", "MD", "AES", "RSA", "TLS", "SSL", "DES", "CP", "HTTP", "X"}
)
"""Prefixes of `ABC-123` names that are encodings, algorithms or protocols (`UTF-8`, `SHA-256`)."""
_CLIENT_CONTEXT: Final = re.compile(r"<(system-reminder|ide_[a-z_]+)>.*?</\1>", re.S)
_URL_TAIL: Final = ".,:;!?*_~"  # sentence stops and markdown emphasis after a URL are not part of it
_PATTERNS: Final = (
    # (kind, a literal the text must hold for the pattern to be worth running, the pattern)
    ("url", "://", re.compile(r"\bhttps?://[^\s\"'<>`()\[\]{}|\\^“”‘’«»]+")),  # noqa: RUF001
    ("issue", "#", re.compile(r"(?<![\w&#/])#\d{1,6}\b")),
    ("ticket", "-", re.compile(r"\b([A-Z][A-Z0-9]{1,9})-\d{1,6}\b")),
    (
        "version",
        ".",
        re.compile(
            r"(?<![\w.])(?:v?\d{1,4}\.\d{1,4}\.\d{1,6}(?:-[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?|v\d{1,4}\.\d{1,4})"
            r"(?![\w-]|\.\d)"
        ),
    ),
    ("port", ":", re.compile(r"(?<![\w.:-])(?:localhost|\[::1?\]|(?:\d{1,3}\.){3}\d{1,3}):(\d{2,5})(?!\d)")),
    ("port", "://", re.compile(r"://[\w.-]+:(\d{2,5})(?!\d)")),
    ("port", "ort", re.compile(r"(?i:\bport\s+|--port[= ])(\d{2,5})\b|\bPORT=(\d{2,5})\b")),
)


@dataclass(frozen=True, slots=True)
class Reference:
    """One identifier (`kind`: url, issue, ticket, version, port) and the line that first wrote it."""

    kind: str
    value: str
    line: int

    def text(self) -> str:
        """How the appendix writes it: `url https://...`, `port 8080`."""
        return f"{self.kind} {self.value}"


def references_in(text: str) -> Iterator[tuple[str, str]]:
    """(kind, value) of every identifier `text` writes, kind by kind."""
    for kind, literal, pattern in _PATTERNS:
        if literal not in text:
            continue
        for match in pattern.finditer(text):
            if kind == "ticket" and match.group(1) in NOT_TICKET_PREFIXES:
                continue
            if kind == "port":
                yield kind, next(group for group in match.groups() if group is not None)
            elif kind == "url":
                yield kind, match.group(0).rstrip(_URL_TAIL)
            else:
                yield kind, match.group(0)


def _input_texts(value: FrozenJson | Mapping[str, FrozenJson], key: str = "") -> Iterator[str]:
    if key in FILE_CONTENT_KEYS:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, tuple):
        for member in value:
            yield from _input_texts(member, key)
    elif isinstance(value, MappingProxyType | dict):
        for name, member in value.items():
            yield from _input_texts(member, name)


def _written(item: EvidenceItem) -> Iterator[str]:
    if item.kind is EvidenceKind.HUMAN_PROMPT:
        yield _CLIENT_CONTEXT.sub(" ", item.text)
    elif item.kind is EvidenceKind.ASSISTANT_TEXT:
        yield item.text
    elif item.kind is EvidenceKind.TOOL_CALL:
        yield from _input_texts(item.tool_input)


def collect_references(
    items: Sequence[EvidenceItem], prior: Iterable[Reference] = ()
) -> tuple[Reference, ...]:
    """The `prior` references, then every identifier `items` write that they do not hold, once each."""
    found: dict[tuple[str, str], Reference] = {}
    for reference in prior:
        found.setdefault((reference.kind, reference.value), reference)
    for item in items:
        for text in _written(item):
            for kind, value in references_in(text):
                found.setdefault((kind, value), Reference(kind, value, item.line))
    return tuple(found.values())
