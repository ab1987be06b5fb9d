"""Codex rollout lines: decoding each physical line into the compact facts the pipeline keeps.

Raw JSON stays inside this package. A line is decoded with msgspec into `LineHead`, so message and
tool-output bodies are validated but never materialized; what is kept per line is a small frozen
`RolloutEntry`. Lines that are not JSON objects, or that Python's readers cannot take (too long,
nested too deep), become line kinds that validation reports as findings, as for Claude Code.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

import msgspec
import orjson

from pipeline.formats.codex.item_types import ENVELOPE_KINDS, LEGACY_ITEM_TYPES
from pipeline.formats.codex.rollout_schema import (
    NULL,
    ContentHead,
    LineHead,
    PayloadHead,
    TokenInfoHead,
    TokenUsageHead,
)
from pipeline.formats.line_guard import LineLimits, readable_utf8, too_deep
from pipeline.read.lines import BOM, content_span, iter_line_spans
from pipeline.vocabulary import LineKind

__all__ = [
    "CONTEXTUAL_PREFIXES",
    "Rollout",
    "RolloutEntry",
    "RolloutKind",
    "decode_rollout",
    "is_user_turn",
]

_HEAD = msgspec.json.Decoder(LineHead)
_CONTENT = msgspec.json.Decoder(list[ContentHead])
_INFO = msgspec.json.Decoder(TokenInfoHead)
_USAGE = msgspec.json.Decoder(TokenUsageHead)
CONTEXTUAL_PREFIXES: Final = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions for ",
    "<user_shell_command>",
    "<turn_aborted>",
    "<skill>",
    "<subagent_notification>",
)
"""User-role texts Codex injects itself: they are context, not a user turn (no rollback target)."""


class RolloutKind(StrEnum):
    """What one rollout record is."""

    SESSION_META = "session_meta"
    RESPONSE_ITEM = "response_item"
    COMPACTED = "compacted"
    TURN_CONTEXT = "turn_context"
    EVENT_MSG = "event_msg"
    TOKEN_USAGE_RECORD = "token_usage_record"  # 0.171: what one model response billed
    WORLD_STATE = "world_state"  # 0.171: the context baseline (AGENTS.md, environment, tools)
    INTER_AGENT_COMMUNICATION_METADATA = "inter_agent_communication_metadata"  # 0.171: {trigger_turn}
    LEGACY_META = "legacy_meta"  # the 0.2x first line: {id, timestamp, instructions, git}
    LEGACY_STATE = "legacy_state"  # the 0.2x {"record_type": "state"} lines
    LEGACY_ITEM = "legacy_item"  # a 0.2x bare response item
    OTHER = "other"  # a JSON object of no kind Codex writes (Codex skips it)


class RolloutEntry(msgspec.Struct, frozen=True, gc=False):
    """Everything kept about one JSON-object line."""

    kind: RolloutKind
    item: str | None = None  # the payload's own `type` (response item or event kind)
    role: str | None = None
    call_id: str | None = None
    turn_id: str | None = None
    user_turn: bool = False  # a user message that opens a user turn (rollbacks count these)
    rollback: int = 0  # `thread_rolled_back.num_turns`
    replacement: bool = False  # a `compacted` record that carries `replacement_history`
    version: str | None = None
    usage: tuple[int, int, int, int] | None = None  # input, cached, output, reasoning (one request)
    total_usage: tuple[int, int, int, int] | None = None  # the same, summed by Codex over the thread
    replaced_utf8: bool = False
    ordinal: int | None = None  # a numbered record's place in the thread (paginated history mode)

    @property
    def is_item(self) -> bool:
        """A response item (either layout), the records Codex replays into its history."""
        return self.kind in (RolloutKind.RESPONSE_ITEM, RolloutKind.LEGACY_ITEM)


@dataclass(frozen=True, slots=True)
class Rollout:
    """Every physical line of one rollout (1-based), with its kind and, for records, its facts."""

    offsets: tuple[int, ...]
    lengths: tuple[int, ...]  # bytes without the LF (a CR, if any, included)
    kinds: tuple[LineKind, ...]
    entries: tuple[RolloutEntry | None, ...]
    has_bom: bool
    crlf_lines: int
    final_newline: bool
    legacy: bool  # the 0.2x layout, which no current Codex resumes

    def __len__(self) -> int:
        return len(self.kinds)

    def entry(self, line: int) -> RolloutEntry | None:
        return self.entries[line - 1]

    def raw_line(self, data: bytes, line: int) -> bytes:
        """Exact bytes of a line without its terminator (CR and the file's BOM removed)."""
        start, end = content_span(data, self.offsets[line - 1], self.lengths[line - 1], first=line == 1)
        return data[start:end]

    @property
    def numbered(self) -> bool:
        """Whether Codex numbers this thread's records (`ordinal`): what it appends must be too."""
        return any(entry is not None and entry.ordinal is not None for entry in self.entries)

    def lines_where(self, kind: RolloutKind) -> Iterator[int]:
        return (n for n, entry in enumerate(self.entries, 1) if entry is not None and entry.kind is kind)


def is_user_turn(role: object, texts: list[str]) -> bool:
    """Whether a message opens a user turn: a user message none of whose texts Codex injected."""
    if role != "user" or not texts:
        return False
    return not any(text.lstrip().startswith(CONTEXTUAL_PREFIXES) for text in texts)


def _texts(content: msgspec.Raw) -> list[str]:
    if content == NULL:
        return []
    try:
        items = _CONTENT.decode(content)
    except msgspec.ValidationError:
        return []
    return [item.text for item in items if isinstance(item.text, str)]


def _counts(usage: TokenUsageHead | None) -> tuple[int, int, int, int] | None:
    if usage is None:
        return None
    values = (
        usage.input_tokens,
        usage.cached_input_tokens,
        usage.output_tokens,
        usage.reasoning_output_tokens,
    )
    return tuple(v if isinstance(v, int) and not isinstance(v, bool) else 0 for v in values)  # type: ignore[return-value]


def _usage(info: msgspec.Raw) -> tuple[tuple[int, int, int, int] | None, tuple[int, int, int, int] | None]:
    """A token_count's (last request, running total), each as input, cached, output, reasoning."""
    if info == NULL:
        return None, None
    try:
        decoded = _INFO.decode(info)
    except msgspec.ValidationError:
        return None, None
    return _counts(decoded.last_token_usage), _counts(decoded.total_token_usage)


def _record_usage(usage: msgspec.Raw) -> tuple[int, int, int, int] | None:
    """A `token_usage_record`'s usage (one response), as input, cached, output, reasoning."""
    if usage == NULL:
        return None
    try:
        return _counts(_USAGE.decode(usage))
    except msgspec.ValidationError:
        return None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _payload_entry(kind: RolloutKind, payload: PayloadHead, replaced: bool) -> RolloutEntry:
    item = _text(payload.type)
    role = _text(payload.role)
    rollback = payload.num_turns if item == "thread_rolled_back" and isinstance(payload.num_turns, int) else 0
    usage, total = _usage(payload.info) if item == "token_count" else (None, None)
    if kind is RolloutKind.TOKEN_USAGE_RECORD:
        usage = _record_usage(payload.usage)
    return RolloutEntry(
        kind=kind,
        item=item,
        role=role,
        call_id=_text(payload.call_id),
        turn_id=_text(payload.turn_id),
        user_turn=kind is RolloutKind.RESPONSE_ITEM
        and item == "message"
        and is_user_turn(role, _texts(payload.content)),
        rollback=max(rollback, 0),
        replacement=kind is RolloutKind.COMPACTED and payload.replacement_history != NULL,
        version=_text(payload.cli_version) if kind is RolloutKind.SESSION_META else None,
        usage=usage,
        total_usage=total,
        replaced_utf8=replaced,
    )


def _entry(head: LineHead, replaced: bool) -> RolloutEntry:
    if head.type in ENVELOPE_KINDS and head.payload is not None:
        entry = _payload_entry(RolloutKind(head.type), head.payload, replaced)
        ordinal = head.ordinal
        numbered = isinstance(ordinal, int) and not isinstance(ordinal, bool) and ordinal >= 0
        return msgspec.structs.replace(entry, ordinal=ordinal) if numbered else entry
    if head.record_type == "state":
        return RolloutEntry(RolloutKind.LEGACY_STATE, replaced_utf8=replaced)
    if head.type in LEGACY_ITEM_TYPES:
        role = _text(head.role)
        user = head.type == "message" and is_user_turn(role, _texts(head.content))
        return RolloutEntry(
            RolloutKind.LEGACY_ITEM,
            head.type,
            role,
            _text(head.call_id),
            user_turn=user,
            replaced_utf8=replaced,
        )
    if head.type is None and head.instructions is not msgspec.UNSET and head.id is not None:
        return RolloutEntry(RolloutKind.LEGACY_META, replaced_utf8=replaced)
    return RolloutEntry(RolloutKind.OTHER, _text(head.type), replaced_utf8=replaced)


def decode_line(line: bytes, limits: LineLimits) -> RolloutEntry | LineKind:
    """One line's entry, or the kind of line it is when it holds no usable record."""
    if len(line) > limits.max_line_bytes:
        return LineKind.TOO_LONG
    if too_deep(line, limits.max_json_depth):
        return LineKind.NESTING_TOO_DEEP
    readable = readable_utf8(line)
    try:
        head = _HEAD.decode(readable)
    except msgspec.ValidationError:
        return _loose(readable, readable is not line)
    except msgspec.DecodeError:
        return _not_json(readable)
    return _entry(head, readable is not line)


def _loose(line: bytes, replaced: bool) -> RolloutEntry | LineKind:
    """A JSON line whose fields have unexpected shapes (a payload that is not an object, ...)."""
    value: Any = orjson.loads(line)
    if not isinstance(value, dict):
        return LineKind.NOT_OBJECT
    return RolloutEntry(RolloutKind.OTHER, _text(value.get("type")), replaced_utf8=replaced)


def _not_json(line: bytes) -> LineKind:
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError:
        stripped = line.rstrip()
        return (
            LineKind.TRUNCATED
            if stripped.startswith(b"{") and not stripped.endswith(b"}")
            else LineKind.NOT_JSON
        )
    return LineKind.NOT_OBJECT


def decode_rollout(data: bytes, limits: LineLimits) -> Rollout:
    """Index every physical line of a rollout's bytes."""
    offsets, lengths, kinds, entries, crlf = [], [], [], [], 0
    for start, end in iter_line_spans(data):
        offsets.append(start)
        lengths.append(end - start)
        content_end = end - 1 if end > start and data[end - 1] == 0x0D else end
        crlf += content_end != end
        content_start = start + len(BOM) if start == 0 and data.startswith(BOM) else start
        line = data[content_start:content_end]
        decoded = decode_line(line, limits) if line.strip() else LineKind.BLANK
        kinds.append(LineKind.RECORD if isinstance(decoded, RolloutEntry) else decoded)
        entries.append(decoded if isinstance(decoded, RolloutEntry) else None)
    legacy = any(
        e is not None and e.kind in (RolloutKind.LEGACY_META, RolloutKind.LEGACY_STATE) for e in entries
    )
    return Rollout(
        offsets=tuple(offsets),
        lengths=tuple(lengths),
        kinds=tuple(kinds),
        entries=tuple(entries),
        has_bom=data.startswith(BOM),
        crlf_lines=crlf,
        final_newline=data.endswith(b"\n"),
        legacy=legacy,
    )
