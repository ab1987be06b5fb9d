"""Claude Code JSONL records: decoding one line into the compact facts the pipeline keeps.

Raw JSON stays inside this module. A line is decoded with msgspec into a struct naming only the
fields later stages need, so large message bodies are validated but never materialized, and the
seed token estimate is taken from the line's own bytes wherever that is provably exact. Lines
with unusual field types take a slower, tolerant path; lines that are not JSON objects become a
`LineProblem` naming why.
"""

from __future__ import annotations

import enum
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Final

import msgspec
import orjson
from msgspec import UNSET, UnsetType

from pipeline.estimate import seed
from pipeline.formats.claude_code.line_estimate import raw_estimate
from pipeline.formats.claude_code.schema import (
    Attachment,
    Block,
    LooseHead,
    LooseMessage,
    RawTextBlock,
    TypedHead,
)
from pipeline.formats.line_guard import LineLimits, readable_utf8, too_deep
from pipeline.vocabulary import PointerState, RecordType, Role

__all__ = [
    "BLOCK_CODES",
    "DecodedRecord",
    "LineProblem",
    "RecordFlag",
    "compact_stamp",
    "decode_record",
    "human_prompt_key",
    "prompt_key_of_raw",
]

BLOCK_CODES: Final = {
    "text": "T",
    "thinking": "K",
    "redacted_thinking": "K",
    "tool_use": "U",
    "tool_result": "R",
    "image": "I",
    "document": "D",
}
"""One letter per content block kind; `O` for any other. Validation reads block order from these."""

_COMMAND_PREFIXES: Final = ("<command-", "<local-command-")
# Claude Code's `lastPrompt` is the prompt cut to a display length and ended with an ellipsis;
# fingerprints cover a prefix short enough to survive that cut.
_PROMPT_KEY_CHARS: Final = 64
_ELLIPSIS: Final = "\u2026"
# A JSON writer spaces all of its separators or none, so the first member of an object tells
# whether a line must be compacted before its characters can be counted.
_FIRST_MEMBER_PROBE: Final = 512

_STAMP_CHARS: Final = 24
_STAMP_FORM: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")

_TYPED_HEAD = msgspec.json.Decoder(TypedHead)
_ATTACHMENT = msgspec.json.Decoder(Attachment)


@dataclass(frozen=True, slots=True)
class LineProblem:
    """Why a physical line is not a usable record (no text from the line is kept)."""

    kind: str  # a LineKind value; plain text keeps this module free of pipeline enums


class RecordFlag(enum.IntFlag):
    """A record's yes/no facts, packed into `DecodedRecord.flags` (one small int, not nine fields).

    The commonest are the low bits, so a record's flags stay in CPython's cached small ints.
    """

    SIDECHAIN = 1
    IS_API = 2  # a user or assistant record with a message object (the API sees it)
    META = 4
    COMPACT_SUMMARY = 8
    COMPACT_BOUNDARY = 16
    POINTER_EXPLICIT = 32  # a `last-prompt` written with `explicit: true` (rewinds, /clear)
    UUID_MALFORMED = 64  # `uuid` is the empty string
    PARENT_MALFORMED = 128  # `parentUuid` is the empty string
    REPLACED_UTF8 = 256  # read with U+FFFD for bytes that are not UTF-8 (as Claude Code does)


# The flags' plain-int masks for the properties below: `int & RecordFlag.X` builds an enum member
# through `enum.__and__` on every test (a fifth of a sweep's Python time, measured), `int & int` does not.
_SIDECHAIN: Final = RecordFlag.SIDECHAIN.value
_IS_API: Final = RecordFlag.IS_API.value
_META: Final = RecordFlag.META.value
_COMPACT_SUMMARY: Final = RecordFlag.COMPACT_SUMMARY.value
_COMPACT_BOUNDARY: Final = RecordFlag.COMPACT_BOUNDARY.value
_POINTER_EXPLICIT: Final = RecordFlag.POINTER_EXPLICIT.value
_UUID_MALFORMED: Final = RecordFlag.UUID_MALFORMED.value
_PARENT_MALFORMED: Final = RecordFlag.PARENT_MALFORMED.value
_REPLACED_UTF8: Final = RecordFlag.REPLACED_UTF8.value


def compact_stamp(text: str | None) -> int | str | None:
    """A `timestamp` as the index keeps it: Claude Code's form (`2026-01-02T03:04:05.678Z`) as
    its 17 digits in one int (32 bytes, not the string's 73), any other text as it is."""
    if text is None or len(text) != _STAMP_CHARS or not _STAMP_FORM.fullmatch(text):
        return text
    return int(text[0:4] + text[5:7] + text[8:10] + text[11:13] + text[14:16] + text[17:19] + text[20:23])


class DecodedRecord(msgspec.Struct, frozen=True, gc=False):
    """Everything the index keeps about one JSON-object line (a C struct: cheap per line).

    A million-line session keeps a million of these, so the yes/no facts share one `flags` int
    and the timestamp is kept compact (`compact_stamp`); properties read them as before.
    """

    type: str | None
    subtype: str | None
    uuid: str | None
    parent: str | None
    logical_parent: str | None
    session: str | None
    stamp: int | str | None  # `compact_stamp` of the timestamp; read it as `timestamp`
    version: str | None
    message_id: str | None
    role: str | None
    blocks: str
    tool_uses: tuple[str, ...]
    tool_results: tuple[str, ...]
    source_tool_assistant: str | None
    attachment_tool_use: str | None
    pointer_state: PointerState
    pointer: str | None
    prompt_key: str | None
    snapshot_message_id: str | None
    agent_id: str | None
    tokens: int
    flags: int  # `RecordFlag` bits

    @property
    def timestamp(self) -> str | None:
        """The record's `timestamp` text, as the line holds it."""
        stamp = self.stamp
        if not isinstance(stamp, int):
            return stamp
        d = f"{stamp:017d}"
        return f"{d[0:4]}-{d[4:6]}-{d[6:8]}T{d[8:10]}:{d[10:12]}:{d[12:14]}.{d[14:17]}Z"

    @property
    def sidechain(self) -> bool:
        """`isSidechain: true`."""
        return bool(self.flags & _SIDECHAIN)

    @property
    def is_api(self) -> bool:
        """A user or assistant record with a message object."""
        return bool(self.flags & _IS_API)

    @property
    def meta(self) -> bool:
        """`isMeta: true`."""
        return bool(self.flags & _META)

    @property
    def compact_summary(self) -> bool:
        """`isCompactSummary: true`."""
        return bool(self.flags & _COMPACT_SUMMARY)

    @property
    def compact_boundary(self) -> bool:
        """A system record of subtype `compact_boundary`."""
        return bool(self.flags & _COMPACT_BOUNDARY)

    @property
    def pointer_explicit(self) -> bool:
        """A `last-prompt` written with `explicit: true`."""
        return bool(self.flags & _POINTER_EXPLICIT)

    @property
    def uuid_malformed(self) -> bool:
        """`uuid` is there but the empty string."""
        return bool(self.flags & _UUID_MALFORMED)

    @property
    def parent_malformed(self) -> bool:
        """`parentUuid` is there but the empty string."""
        return bool(self.flags & _PARENT_MALFORMED)

    @property
    def replaced_utf8(self) -> bool:
        """Read with U+FFFD for bytes that are not UTF-8."""
        return bool(self.flags & _REPLACED_UTF8)


def _flags(*set_flags: tuple[bool, RecordFlag]) -> int:
    """The `flags` int of (condition, flag) pairs (a plain int: the index keeps a million)."""
    return sum(flag.value for condition, flag in set_flags if condition)


def human_prompt_key(text: str) -> str:
    """Content-free fingerprint of a prompt's opening, for matching `lastPrompt` to a user record."""
    normalized = " ".join(text.removesuffix(_ELLIPSIS).split())[:_PROMPT_KEY_CHARS]
    return hashlib.sha256(normalized.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def prompt_key_of_raw(mode: int, raws: tuple[bytes, ...] | list[bytes]) -> str | None:
    """`_prompt_key` for the compiled scanner, from the raw JSON strings it found.

    Mode 0: a user message's string content; 1: the text members of its text blocks, in order
    (the first non-blank one is the prompt); 2: a pointer's `lastPrompt`.
    """
    if mode == 2:
        return human_prompt_key(msgspec.json.decode(raws[0]))
    if mode == 0:
        first: Any = msgspec.json.decode(raws[0])
    else:
        first = next((text for raw in raws if (text := msgspec.json.decode(raw)).strip()), None)
    if first is None or first.lstrip().startswith(_COMMAND_PREFIXES):
        return None
    return human_prompt_key(first)


def _text(value: Any) -> str | None:
    return value if type(value) is str and value else None


def _block_facts(
    content: Any, *, want_text: bool = True
) -> tuple[str, tuple[str, ...], tuple[str, ...], str | None]:
    """Block code string, tool_use ids, tool_result ids and the first non-blank text."""
    if type(content) is str:
        return "T", (), (), content
    if type(content) is not list:
        return "", (), (), None
    codes: list[str] = []
    uses: list[str] = []
    results: list[str] = []
    first_text: str | None = None
    for item in content:
        block = item
        if type(item) is dict:
            block = Block(
                block.get("type"),
                block.get("id"),
                block.get("tool_use_id"),
                block.get("text"),
                block.get("toolUseID"),
            )
        elif not isinstance(block, Block | RawTextBlock):
            codes.append("O")
            continue
        kind = block.type
        codes.append(BLOCK_CODES.get(kind, "O") if type(kind) is str else "O")
        if kind == "tool_use":
            uses.append(block.id if type(block.id) is str else "")
        elif kind == "tool_result":
            result_id = block.tool_use_id or block.toolUseID
            results.append(result_id if type(result_id) is str else "")
        elif kind == "text" and want_text and first_text is None:
            text = _raw_text(block.text) if type(block) is RawTextBlock else block.text
            if type(text) is str and text.strip():
                first_text = text
    return "".join(codes), tuple(uses), tuple(results), first_text


def _raw_text(raw: msgspec.Raw) -> Any:
    """Decode a text block's value only when a prompt's text is needed."""
    return msgspec.json.decode(raw) if raw else None


def _is_loose(stripped: bytes) -> bool:
    """Whether the writer put whitespace between tokens (Python's default json.dumps does)."""
    if stripped[1:2] != b'"':
        return stripped != b"{}"
    colon = stripped.find(b'":', 1, _FIRST_MEMBER_PROBE)
    if colon < 0:
        return True
    return stripped[colon + 2 : colon + 3] in (b" ", b"\t")


def _classify_failure(line: bytes) -> tuple[LineProblem | None, Any]:
    """Slow path for lines msgspec refused: tell the reasons apart, or parse the oddity."""
    text = line.decode("utf-8")  # the caller made it valid UTF-8
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except (json.JSONDecodeError, ValueError) as exc:
        at_end = isinstance(exc, json.JSONDecodeError) and (
            exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
        )
        return LineProblem("truncated" if at_end else "not-json"), None
    if not isinstance(value, dict):
        return LineProblem("not-object"), None
    return None, value


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


def decode_record(
    line: bytes, *, limits: LineLimits, escapes_possible: bool = True
) -> DecodedRecord | LineProblem:
    """Decode one non-blank physical line (terminator and BOM already removed by the caller).

    A line over the size or nesting limits is a problem and is not parsed; a line that is not
    UTF-8 is read with U+FFFD replacements and its record marked. `escapes_possible` is False
    when the file holds raw non-ASCII text, which proves its writer does not escape printable
    characters; the byte-level estimate then needs no escape scan. Lines written with spaces
    between tokens come from another writer and are counted the exact, slower way.
    """
    if len(line) > limits.max_line_bytes:
        return LineProblem("too-long")
    if too_deep(line, limits.max_json_depth):
        return LineProblem("nesting-too-deep")
    readable = readable_utf8(line)
    try:
        decoded = _decode(readable, escapes_possible or readable is not line)
    except RecursionError:  # a reader deeper in the stack than the limit allows for
        return LineProblem("nesting-too-deep")
    if readable is not line and isinstance(decoded, DecodedRecord):
        return msgspec.structs.replace(decoded, flags=decoded.flags | RecordFlag.REPLACED_UTF8.value)
    return decoded


def _decode(line: bytes, escapes_possible: bool) -> DecodedRecord | LineProblem:
    stripped = line.strip()
    loose = _is_loose(stripped)
    try:
        canonical = msgspec.json.format(stripped, indent=-1) if loose else stripped
        head = _TYPED_HEAD.decode(canonical)
    except msgspec.ValidationError:
        return _decode_loose(canonical)
    except msgspec.DecodeError:
        problem, value = _classify_failure(stripped)
        return problem if problem is not None else _from_python(value)
    kind = head.type
    message = head.message if kind in {"user", "assistant"} else None
    tokens = None
    if not loose and not (escapes_possible and not seed.raw_inventory_is_exact(canonical)):
        try:
            tokens = raw_estimate(head, canonical, message is not None)
        except TypeError:  # a value orjson cannot write (beyond 64 bits): count the exact way
            tokens = None
    if tokens is None:
        tokens = seed.estimate_record(json.loads(canonical))
    attachment_tool = None
    if kind == RecordType.ATTACHMENT:
        raw = bytes(head.attachment)
        if raw.startswith(b"{"):
            attachment_tool = _text(_ATTACHMENT.decode(raw).toolUseID)
    return _assemble_typed(head, message, tokens, attachment_tool)


def _set(value: str | UnsetType | None) -> str | None:
    return value if value.__class__ is str and value else None


def _pointer_state(leaf: Any) -> PointerState:
    """How a `leafUuid` member reads (absent, a leaf, null, falsy, or some other value)."""
    if leaf is UNSET:
        return PointerState.ABSENT
    if type(leaf) is str:
        return PointerState.LEAF if leaf else PointerState.EMPTY
    if leaf is None:
        return PointerState.NULL
    return PointerState.INVALID if leaf else PointerState.EMPTY


def _prompt_key(
    head: TypedHead | LooseHead,
    kind: str | None,
    role: str | None,
    results: tuple[str, ...],
    first_text: str | None,
) -> str | None:
    """Fingerprint of a human prompt or of a pointer's `lastPrompt`, else None."""
    if kind == RecordType.USER:
        if (
            role == Role.USER
            and head.isCompactSummary is not True
            and head.isMeta is not True
            and not results
            and first_text is not None
            and not first_text.lstrip().startswith(_COMMAND_PREFIXES)
        ):
            return human_prompt_key(first_text)
    elif kind == RecordType.LAST_PROMPT and type(head.lastPrompt) is str:
        return human_prompt_key(head.lastPrompt)
    return None


MessageFacts = tuple[str | None, str | None, bool, str, tuple[str, ...], tuple[str, ...]]
"""What a record keeps of its message, in `DecodedRecord`'s order: id, role, whether it has one,
block codes, tool_use ids, tool_result ids."""
_NO_MESSAGE: Final[tuple[MessageFacts, None]] = ((None, None, False, "", (), ()), None)


def _message_facts(message: Any, *, want_text: bool = True) -> tuple[MessageFacts, str | None]:
    """A record's message facts and its first non-blank text (both loaders' one reading of it)."""
    if message is None:
        return _NO_MESSAGE
    blocks, uses, results, first_text = _block_facts(message.content, want_text=want_text)
    return (_text(message.id), _text(message.role), True, blocks, uses, results), first_text


def _assemble_typed(head: TypedHead, message: Any, tokens: int, attachment_tool: str | None) -> DecodedRecord:
    """The hot-path twin of `_assemble`: field types are already known to be right."""
    kind = head.type or None
    facts, first_text = _message_facts(message, want_text=kind == RecordType.USER)
    uuid = head.uuid
    parent = head.parentUuid
    leaf = head.leafUuid
    message_id, role, is_api, blocks, uses, results = facts
    return DecodedRecord(
        kind,
        head.subtype or None,
        _set(uuid),
        _set(parent),
        head.logicalParentUuid or None,
        _set(head.sessionId),
        compact_stamp(_set(head.timestamp)),
        _set(head.version),
        message_id,
        role,
        blocks,
        uses,
        results,
        head.sourceToolAssistantUUID or None,
        attachment_tool,
        PointerState.ABSENT if leaf is UNSET else _pointer_state(leaf),
        _set(leaf),
        _prompt_key(head, kind, facts[1], facts[5], first_text),
        (head.messageId or None) if kind == RecordType.FILE_HISTORY_SNAPSHOT else None,
        head.agentId or None,
        tokens,
        _flags(
            (head.isSidechain is True, RecordFlag.SIDECHAIN),
            (is_api, RecordFlag.IS_API),
            (head.isMeta is True, RecordFlag.META),
            (head.isCompactSummary is True, RecordFlag.COMPACT_SUMMARY),
            (kind == RecordType.SYSTEM and head.subtype == "compact_boundary", RecordFlag.COMPACT_BOUNDARY),
            (head.explicit is True, RecordFlag.POINTER_EXPLICIT),
            (uuid == "", RecordFlag.UUID_MALFORMED),
            (parent == "", RecordFlag.PARENT_MALFORMED),
        ),
    )


def _decode_loose(canonical: bytes) -> DecodedRecord | LineProblem:
    """A line whose members have unusual types (msgspec stops at the first, before the line's end)."""
    try:
        value = orjson.loads(canonical)
    except orjson.JSONDecodeError:
        problem, value = _classify_failure(canonical)
        if problem is not None:
            return problem
    if not isinstance(value, dict):
        return LineProblem("not-object")
    return _from_python(value)


def _from_python(value: dict[str, Any]) -> DecodedRecord:
    """Build the record facts from an already parsed object (the tolerant path)."""
    fields = {key: value[key] for key in LooseHead.__struct_fields__ if key in value}
    head = msgspec.convert(fields, LooseHead)
    raw_message = value.get("message")
    message = None
    if head.type in (RecordType.USER, RecordType.ASSISTANT) and isinstance(raw_message, dict):
        message = LooseMessage(raw_message.get("id"), raw_message.get("role"), raw_message.get("content"))
    attachment = value.get("attachment")
    attachment_tool = _text(attachment.get("toolUseID")) if isinstance(attachment, dict) else None
    return _assemble(head, message, seed.estimate_record(value), attachment_tool)


def _assemble(
    head: TypedHead | LooseHead, message: Any, tokens: int, attachment_tool: str | None
) -> DecodedRecord:
    kind = _text(head.type)
    uuid = head.uuid
    parent = head.parentUuid
    facts, first_text = _message_facts(message)
    prompt_key = _prompt_key(head, kind, facts[1], facts[5], first_text)
    leaf = head.leafUuid
    message_id, role, is_api, blocks, uses, results = facts
    return DecodedRecord(
        kind,
        _text(head.subtype),
        _text(uuid),
        _text(parent),
        _text(head.logicalParentUuid),
        _text(head.sessionId),
        compact_stamp(_text(head.timestamp)),
        _text(head.version),
        message_id,
        role,
        blocks,
        uses,
        results,
        _text(head.sourceToolAssistantUUID),
        attachment_tool,
        _pointer_state(leaf),
        _text(leaf),
        prompt_key,
        _text(head.messageId) if kind == RecordType.FILE_HISTORY_SNAPSHOT else None,
        _text(head.agentId),
        tokens,
        _flags(
            (head.isSidechain is True, RecordFlag.SIDECHAIN),
            (is_api, RecordFlag.IS_API),
            (head.isMeta is True, RecordFlag.META),
            (head.isCompactSummary is True, RecordFlag.COMPACT_SUMMARY),
            (kind == RecordType.SYSTEM and head.subtype == "compact_boundary", RecordFlag.COMPACT_BOUNDARY),
            (head.explicit is True, RecordFlag.POINTER_EXPLICIT),
            (uuid is not UNSET and uuid is not None and _text(uuid) is None, RecordFlag.UUID_MALFORMED),
            (
                parent is not UNSET and parent is not None and _text(parent) is None,
                RecordFlag.PARENT_MALFORMED,
            ),
        ),
    )
