"""pi session lines: each physical line decoded into the entry pi loads from it, or a line kind.

pi (1.6.0, `SessionManager`) reads a session as UTF-8 text, splits it on LF and `JSON.parse`s each
line, skipping any that fail: a damaged line (two records run together, a truncated write) is
simply absent from what pi resumes, and so it is here, reported as a finding. The first
`session` record is the header; older files (no `version`, or 1) have no `id`/`parentId`, and pi
links their entries in file order when it loads them (its v1 -> v2 migration): `migrated_links`
does the same, naming each entry by its line. Raw JSON stays inside this package.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

import orjson

from pipeline.formats.line_guard import LineLimits, readable_utf8, too_deep
from pipeline.read.lines import BOM, iter_line_spans
from pipeline.vocabulary import LineKind

__all__ = ["PiEntry", "PiKind", "PiSession", "decode_session", "records_joined"]

CURRENT_VERSION: Final = 3  # pi 1.6.0 writes and migrates to version 3
_JOINED: Final = json.JSONDecoder()


class PiKind(StrEnum):
    """The `type` of a pi session line."""

    SESSION = "session"
    MESSAGE = "message"
    MODEL_CHANGE = "model_change"
    THINKING_LEVEL_CHANGE = "thinking_level_change"
    COMPACTION = "compaction"
    BRANCH_SUMMARY = "branch_summary"
    CUSTOM = "custom"
    CUSTOM_MESSAGE = "custom_message"
    LABEL = "label"
    SESSION_INFO = "session_info"
    USAGE = "usage"
    CONTEXT_EDIT = "context_edit"
    OTHER = "other"  # a JSON object of no type pi writes (it loads it and sends nothing of it)


@dataclass(frozen=True, slots=True)
class PiEntry:
    """One line pi loads: its 1-based line, kind, the id and parent pi links it by, and the record."""

    line: int
    kind: PiKind
    entry_id: str | None
    parent_id: str | None
    record: dict[str, Any]

    @property
    def role(self) -> str | None:
        """A message entry's `message.role` (v2's `hookMessage` read as v3's `custom`)."""
        message = self.record.get("message") if self.kind is PiKind.MESSAGE else None
        role = message.get("role") if isinstance(message, dict) else None
        return "custom" if role == "hookMessage" else role if isinstance(role, str) else None

    @property
    def message(self) -> dict[str, Any]:
        """A message entry's `message` object (empty for anything else)."""
        message = self.record.get("message")
        return message if isinstance(message, dict) else {}


@dataclass(frozen=True, slots=True)
class PiSession:
    """Every physical line (1-based) of one session: its kind, and the entries pi loads, in order."""

    offsets: tuple[int, ...]
    lengths: tuple[int, ...]  # bytes without the LF (a CR, if any, included)
    kinds: tuple[LineKind, ...]
    joined: frozenset[int]  # NOT_JSON lines that are two or more records run together
    replaced_utf8: frozenset[int]
    entries: tuple[PiEntry, ...]  # every JSON object line, the header included
    has_bom: bool
    crlf_lines: int
    final_newline: bool

    def __len__(self) -> int:
        return len(self.kinds)

    @property
    def header(self) -> PiEntry | None:
        """The first `session` record, which pi takes as the header wherever it is."""
        return next((entry for entry in self.entries if entry.kind is PiKind.SESSION), None)

    @property
    def version(self) -> int:
        """The header's `version` (1 when absent, as pi reads it)."""
        header = self.header
        version = header.record.get("version") if header is not None else None
        return version if isinstance(version, int) and not isinstance(version, bool) else 1

    def raw_line(self, data: bytes, line: int) -> bytes:
        """Exact bytes of a line without its LF (a CR kept; the file's BOM removed)."""
        start, length = self.offsets[line - 1], self.lengths[line - 1]
        if line == 1 and data.startswith(BOM):
            return data[start + len(BOM) : start + length]
        return data[start : start + length]


def _js_number(text: str) -> int | float:
    """An integer as JSON.parse reads it: a double once it leaves the 64-bit range orjson writes."""
    value = int(text)
    return value if -(2**63) <= value < 2**64 else float(value)


def _parse(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        # orjson refuses lone surrogate escapes and integers past 64 bits, which JSON.parse (and
        # so pi) accepts.
        return json.loads(line.decode("utf-8"), parse_int=_js_number)


def records_joined(line: bytes) -> bool:
    """Whether a line that is not one JSON value is two or more JSON objects written back to back."""
    text = line.decode("utf-8", "replace").strip()
    position, count = 0, 0
    try:
        while position < len(text):
            value, position = _JOINED.raw_decode(text, position)
            if not isinstance(value, dict):
                return False
            count += 1
    except ValueError:
        return False
    return count > 1


def _classify(line: bytes, limits: LineLimits) -> tuple[LineKind, Any]:
    if not line.strip():
        return LineKind.BLANK, None
    if len(line) > limits.max_line_bytes:
        return LineKind.TOO_LONG, None
    if too_deep(line, limits.max_json_depth):
        return LineKind.NESTING_TOO_DEEP, None
    try:
        value = _parse(line)
    except ValueError:
        stripped = line.rstrip()
        truncated = stripped.startswith(b"{") and not stripped.endswith(b"}")
        return (LineKind.TRUNCATED if truncated else LineKind.NOT_JSON), None
    return (LineKind.RECORD, value) if isinstance(value, dict) else (LineKind.NOT_OBJECT, None)


_KINDS: Final = {kind.value: kind for kind in PiKind}


def _kind(record: dict[str, Any]) -> PiKind:
    kind = record.get("type")
    return _KINDS.get(kind, PiKind.OTHER) if isinstance(kind, str) else PiKind.OTHER


def _text_id(value: object) -> str | None:
    return value if isinstance(value, str) else None


def migrated_links(records: list[tuple[int, dict[str, Any]]], version: int) -> list[PiEntry]:
    """Entries with the links pi gives them: their own below version 2, else file order."""
    entries: list[PiEntry] = []
    previous: str | None = None
    for line, record in records:
        kind = _kind(record)
        if kind is PiKind.SESSION:
            entries.append(PiEntry(line, kind, None, None, record))
        elif version < 2:
            entries.append(PiEntry(line, kind, f"L{line}", previous, record))
            previous = f"L{line}"
        else:
            entries.append(
                PiEntry(line, kind, _text_id(record.get("id")), _text_id(record.get("parentId")), record)
            )
    return entries


def _header_version(records: list[tuple[int, dict[str, Any]]]) -> int:
    header = next((record for _, record in records if record.get("type") == "session"), None)
    version = header.get("version") if header is not None else None
    return version if isinstance(version, int) and not isinstance(version, bool) else 1


def decode_session(data: bytes, limits: LineLimits) -> PiSession:
    """Index every physical line of a session's bytes."""
    offsets, lengths, kinds = [], [], []
    joined, replaced, records, crlf = set(), set(), [], 0
    for number, (start, end) in enumerate(iter_line_spans(data), 1):
        offsets.append(start)
        lengths.append(end - start)
        content_end = end - 1 if end > start and data[end - 1] == 0x0D else end
        crlf += content_end != end
        content_start = start + len(BOM) if start == 0 and data.startswith(BOM) else start
        raw = data[content_start:content_end]
        line = readable_utf8(raw)
        if line is not raw:
            replaced.add(number)
        kind, value = _classify(line, limits)
        kinds.append(kind)
        if kind is LineKind.RECORD:
            records.append((number, value))
        elif kind is LineKind.NOT_JSON and records_joined(line):
            joined.add(number)
    return PiSession(
        offsets=tuple(offsets),
        lengths=tuple(lengths),
        kinds=tuple(kinds),
        joined=frozenset(joined),
        replaced_utf8=frozenset(replaced),
        entries=tuple(migrated_links(records, _header_version(records))),
        has_bom=data.startswith(BOM),
        crlf_lines=crlf,
        final_newline=data.endswith(b"\n"),
    )
