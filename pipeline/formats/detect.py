"""Recognize which agent wrote a file from its first records and its path, without reading it all.

Every agent in the registry declares its own positive identification (`identity.Signature`);
detection only shows each of them the same head of the file, in this order: the first JSON
lines (the first line one agent alone claims decides; a line two agents claim decides nothing),
then the whole file as one JSON document, then its first text line, and last the rest of the
JSON lines (a damaged head must not hide a transcript). No agent is ever the default: a file
none of them claims is `UNKNOWN`, and `why_not_a_transcript` says what it holds instead.
"""

from __future__ import annotations

import re
from enum import StrEnum
from pathlib import PurePath
from typing import Final

import orjson

from pipeline.formats.identity import Record
from pipeline.formats.registry import RECOGNIZED
from pipeline.vocabulary import SourceFormat

__all__ = ["NotTranscript", "detect_format", "why_not_a_transcript"]

_SNIFF_LINES: Final = 64
_BOM: Final = b"\xef\xbb\xbf"
_NOT_SPACE: Final = re.compile(rb"[^ \t\n\r\x0b\x0c]")  # what `bytes.strip` keeps
_BINARY_PROBE: Final = 65536  # NUL bytes or many invalid sequences here: not text at all
_WHOLE_DOCUMENT_LIMIT: Final = 256 * 1024 * 1024  # agents that write one JSON document per session
_TEXT_LINE_LIMIT: Final = 4096  # a text signature reads the first non-blank line, this far at most
_RECORDS: Final = tuple((s.format, s.record) for s in RECOGNIZED if s.record is not None)
_DOCUMENTS: Final = tuple((s.format, s.document) for s in RECOGNIZED if s.document is not None)
_TEXTS: Final = tuple((s.format, s.text) for s in RECOGNIZED if s.text is not None)


class NotTranscript(StrEnum):
    """What a file holds when it is no agent's transcript."""

    EMPTY = "empty"
    BINARY = "binary"
    JSON_DOCUMENT = "json-document"  # one JSON value, not JSON lines
    UNKNOWN_RECORDS = "json-lines-of-no-known-agent"
    TEXT = "text"  # lines, none of them a JSON object


def _claimed(record: Record) -> SourceFormat | None:
    """The one agent whose record this is; None when no agent, or more than one, claims it."""
    owners = [fmt for fmt, claims in _RECORDS if claims(record)]
    return owners[0] if len(owners) == 1 else None


def _records(body: bytes, start: int, limit: int | None) -> tuple[SourceFormat | None, int, int]:
    """The first agent a line is claimed by, from `start`, within `limit` lines; objects seen; end."""
    objects, seen = 0, 0
    while start < len(body) and (limit is None or seen < limit):
        end = body.find(b"\n", start)
        line = body[start:] if end < 0 else body[start:end]
        seen += 1
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            record = None
        if isinstance(record, dict):
            objects += 1
            verdict = _claimed(record)
            if verdict is not None:
                return verdict, objects, start
        if end < 0:
            return None, objects, len(body)
        start = end + 1
    return None, objects, start


def _document(data: memoryview, path: PurePath | None) -> SourceFormat | None:
    """The agent whose document a file is, when the whole file is one JSON value."""
    if len(data) > _WHOLE_DOCUMENT_LIMIT:
        return None
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    owners = [fmt for fmt, claims in _DOCUMENTS if claims(document, path)]
    return owners[0] if len(owners) == 1 else None


def _text(data: bytes, first: int, path: PurePath | None) -> SourceFormat | None:
    """The agent whose text file this is, from its first non-blank line."""
    end = data.find(b"\n", first, first + _TEXT_LINE_LIMIT)
    line = data[first : end if end >= 0 else first + _TEXT_LINE_LIMIT]
    opening = line.decode("utf-8", "replace").rstrip()
    owners = [fmt for fmt, claims in _TEXTS if claims(opening, path)]
    return owners[0] if len(owners) == 1 else None


def detect_format(data: bytes, path: PurePath | None = None) -> SourceFormat:
    """Name the agent that wrote a whole file's bytes (read in place: a session can be 1 GB).

    `path` (the file's own, when known) helps only the agents whose content is a generic shape.
    """
    start = len(_BOM) if data.startswith(_BOM) else 0
    first = _NOT_SPACE.search(data, start)
    if first is None:
        return SourceFormat.EMPTY
    verdict, _, resume_at = _records(data, start, _SNIFF_LINES)
    if verdict is None and data.startswith((b"{", b"["), first.start()):
        verdict = _document(memoryview(data)[start:], path)
    if verdict is None:
        verdict = _text(data, first.start(), path)
    if verdict is None:  # a damaged head must not hide a transcript: read on until a line says
        verdict, _, _ = _records(data, resume_at, None)
    return verdict if verdict is not None else SourceFormat.UNKNOWN


def why_not_a_transcript(data: bytes) -> NotTranscript:
    """What a file that no agent claims as its transcript holds instead."""
    body = data[3:] if data.startswith(_BOM) else data
    if not body.strip():
        return NotTranscript.EMPTY
    head = body[:_BINARY_PROBE]
    if b"\x00" in head or head.decode("utf-8", "replace").count("\ufffd") > len(head) // 100:
        return NotTranscript.BINARY
    stripped = body.strip()
    if stripped[:1] in (b"[", b"{") and len(stripped) <= _WHOLE_DOCUMENT_LIMIT:
        try:
            orjson.loads(stripped)
        except orjson.JSONDecodeError:
            pass
        else:
            return NotTranscript.JSON_DOCUMENT
    _, objects, _ = _records(body, 0, None)
    return NotTranscript.UNKNOWN_RECORDS if objects else NotTranscript.TEXT
