"""Content classes: what kind of text each token of a Claude Code transcript is, split line by line.

A record's content is cut into pieces of one `ContentClass` each (`pipeline.formats.content_pieces`),
with a name where one helps (the tool of a tool_use or tool_result, an attachment's type, a system
record's subtype). Lines are given as bytes (re-read by offset by the caller) and decoded with
msgspec structs that name only the fields needed here, so bulky fields no model ever sees
(`toolUseResult`, signatures, base64 image data) are skipped without being materialized.

Which text a piece holds, class by class:
- human, meta, compact-summary: the text of a user message (isMeta records are Claude Code's
  injected reminders and caveats, kept apart from what a person typed);
- assistant, thinking: the text of those blocks (redacted thinking is opaque and not counted); a
  thinking block whose signature holds more thinking than its text (the API returns long thinking
  summarized, its signature carries the whole) says how many bytes its text left out (`hidden`);
- tool-use: the `input` JSON exactly as written (the API renders tool input as JSON);
- tool-result: the result's text, or the text blocks of a list result;
- attachment: the attachment object's JSON (what the seed estimates too);
- system: the record's `content` text, else its content/error JSON.
Images and documents are counted, never tokenized as text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any, Final

import msgspec

from pipeline.formats.claude_code.decode import DecodedRecord
from pipeline.formats.claude_code.plan_mode import unsent_plan
from pipeline.formats.content_pieces import NAME_OTHER, ContentClass, LinePieces, Piece
from pipeline.vocabulary import RecordType

__all__ = ["safe_name", "split_records"]

SYNTHETIC_MODEL: Final = "<synthetic>"
_NAME_SHAPE: Final = re.compile(r"[A-Za-z][A-Za-z0-9_.:\-]{0,63}")
# Identifiers only: a name that could be free text (an MCP server's odd tool name) is folded.
_IMAGE_KINDS: Final = frozenset({"image", "document"})
_TOOL_USE_KINDS: Final = frozenset({"tool_use", "server_tool_use"})
SIGNATURE_HEADER: Final = 232
"""Base64 characters a thinking signature holds besides its thinking: on 8,577 of the 9,720 Sonnet
4.5 and Opus 4.5 blocks under 1,500 bytes of the corpora, the signature is this plus 4/3 of the
text's bytes to within 4 characters (only one is longer by more)."""


def safe_name(value: Any) -> str:
    """A report-safe identifier: tool names and vocabulary values pass, anything else is `other`."""
    if type(value) is str and _NAME_SHAPE.fullmatch(value):
        return value
    return NAME_OTHER if value else ""


class _Typed(msgspec.Struct, gc=False):
    type: Any = None


class _Inner(msgspec.Struct, gc=False):
    type: Any = None
    text: msgspec.Raw = msgspec.Raw(b"")


class _Block(msgspec.Struct, gc=False):
    type: Any = None
    text: msgspec.Raw = msgspec.Raw(b"")
    thinking: msgspec.Raw = msgspec.Raw(b"")
    name: Any = None
    id: Any = None
    input: msgspec.Raw = msgspec.Raw(b"")
    tool_use_id: Any = None
    content: msgspec.Raw = msgspec.Raw(b"")
    signature: Any = None


class _Usage(msgspec.Struct, gc=False):
    input_tokens: Any = None
    cache_creation_input_tokens: Any = None
    cache_read_input_tokens: Any = None


class _Message(msgspec.Struct, gc=False):
    content: str | list[_Block] | None = None
    usage: _Usage | None = None
    model: Any = None


class _Envelope(msgspec.Struct, gc=False):
    """One pass over a line: the message typed, everything else skipped or kept raw."""

    message: _Message | None = None
    attachment: msgspec.Raw = msgspec.Raw(b"")
    content: msgspec.Raw = msgspec.Raw(b"")
    error: msgspec.Raw = msgspec.Raw(b"")


class _LooseEnvelope(msgspec.Struct, gc=False):
    message: Any = None
    attachment: msgspec.Raw = msgspec.Raw(b"")
    content: msgspec.Raw = msgspec.Raw(b"")
    error: msgspec.Raw = msgspec.Raw(b"")


_ENVELOPE = msgspec.json.Decoder(_Envelope)
_LOOSE = msgspec.json.Decoder(_LooseEnvelope)
_INNER = msgspec.json.Decoder(list[_Inner])
_ATTACHMENT_TYPE = msgspec.json.Decoder(_Typed)
_ENCODE = msgspec.json.Encoder()
_STRING = msgspec.json.Decoder(str)


def _body(raw: msgspec.Raw | bytes) -> bytes | None:
    """The escaped body of a raw JSON string, or None when the value is not a string."""
    data = bytes(raw)
    return data[1:-1] if data[:1] == b'"' else None


def _quoted(text: str) -> bytes:
    """A decoded string spelled back as an escaped JSON string body (how transcripts spell it)."""
    return _ENCODE.encode(text)[1:-1]


def _loose_blocks(message: Any) -> str | list[_Block] | None:
    """Blocks of a message msgspec's typed path refused; odd shapes are skipped, not guessed."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    blocks: list[_Block] = []
    for item in content:
        if not isinstance(item, dict):
            continue
        raw = {
            key: msgspec.Raw(_ENCODE.encode(item[key]))
            for key in ("text", "thinking", "input", "content")
            if key in item
        }
        blocks.append(
            _Block(
                item.get("type"),
                raw.get("text", msgspec.Raw(b"")),
                raw.get("thinking", msgspec.Raw(b"")),
                item.get("name"),
                item.get("id"),
                raw.get("input", msgspec.Raw(b"")),
                item.get("tool_use_id"),
                raw.get("content", msgspec.Raw(b"")),
                item.get("signature"),
            )
        )
    return blocks


def hidden_thinking(signature: Any, body: bytes) -> int:
    """Bytes of thinking a block's signature carries beyond its text (0 when the text is whole)."""
    if type(signature) is not str or len(signature) <= SIGNATURE_HEADER:
        return 0
    whole = (len(signature) - SIGNATURE_HEADER) * 3 // 4  # base64: 4 characters per 3 bytes
    return max(0, whole - len(_STRING.decode(b'"' + body + b'"').encode()))


def _result_body(content: msgspec.Raw) -> tuple[bytes, int]:
    """Escaped text of a tool_result's content and the images it holds."""
    data = bytes(content)
    if data[:1] == b'"':
        return data[1:-1], 0
    if data[:1] != b"[":
        return b"", 0
    try:
        inner = _INNER.decode(data)
    except msgspec.ValidationError:
        return b"", 0
    texts = [body for item in inner if item.type == "text" and (body := _body(item.text))]
    images = sum(1 for item in inner if item.type in _IMAGE_KINDS)
    return b"\\n".join(texts), images


class _Splitter:
    """Splits lines in physical order, remembering which tool each tool_use id called."""

    def __init__(self) -> None:
        self.tools: dict[str, str] = {}

    def message(self, record: DecodedRecord, content: str | list[_Block] | None) -> tuple[list[Piece], int]:
        if record.type == RecordType.ASSISTANT:
            text_class = ContentClass.ASSISTANT
        elif record.compact_summary:
            text_class = ContentClass.COMPACT_SUMMARY
        elif record.meta:
            text_class = ContentClass.META
        else:
            text_class = ContentClass.HUMAN
        if isinstance(content, str):
            return ([Piece(text_class, "", _quoted(content))] if content else []), 0
        if not content:
            return [], 0
        return self._blocks(content, text_class, record.version)

    def _blocks(
        self, blocks: list[_Block], text_class: ContentClass, version: str | None
    ) -> tuple[list[Piece], int]:
        pieces: list[Piece] = []
        images = 0
        for block in blocks:
            kind = block.type
            if kind == "text":
                body = _body(block.text)
                if body:
                    pieces.append(Piece(text_class, "", body))
            elif kind == "tool_result":
                body, inner_images = _result_body(block.content)
                images += inner_images
                tool_id = block.tool_use_id
                name = self.tools.get(tool_id, NAME_OTHER) if type(tool_id) is str else NAME_OTHER
                pieces.append(Piece(ContentClass.TOOL_RESULT, name, body))
            elif kind in _TOOL_USE_KINDS:
                name = safe_name(block.name)
                if type(block.id) is str:
                    self.tools[block.id] = name
                raw = bytes(block.input)
                unsent = unsent_plan(name, raw, version)
                pieces.append(Piece(ContentClass.TOOL_USE, name, raw, quoted=False, unsent=unsent))
            elif kind == "thinking":
                body = _body(block.thinking)
                if body:
                    hidden = hidden_thinking(block.signature, body)
                    pieces.append(Piece(ContentClass.THINKING, "", body, hidden=hidden))
            elif kind in _IMAGE_KINDS:
                images += 1
        return pieces, images


def _system_piece(record: DecodedRecord, content: bytes, error: bytes) -> list[Piece]:
    """A system record's text: its content string, else its content and error as JSON."""
    body = _body(content)
    if body is not None and not error:
        return [Piece(ContentClass.SYSTEM, safe_name(record.subtype), body)] if body else []
    parts = [part for part in (content, error) if part and part != b"null"]
    if not parts:
        return []
    return [Piece(ContentClass.SYSTEM, safe_name(record.subtype), b"\n".join(parts), quoted=False)]


def _billed(usage: _Usage | None, model: Any) -> tuple[int, int, int] | None:
    """The prompt the provider billed, as (fresh input, cache writes, cache reads) tokens.

    Their sum is the prompt size under Anthropic's convention (the three are disjoint). Claude
    Code's `<synthetic>` messages (errors it writes itself) carry zero usage: not a turn.
    """
    if usage is None or model == SYNTHETIC_MODEL:
        return None
    parts = tuple(
        part if type(part) is int and part > 0 else 0
        for part in (usage.input_tokens, usage.cache_creation_input_tokens, usage.cache_read_input_tokens)
    )
    return (parts[0], parts[1], parts[2]) if any(parts) else None


def _split_record(
    splitter: _Splitter, record: DecodedRecord, line: bytes
) -> tuple[list[Piece], int, tuple[int, int, int] | None, Any]:
    billed = model = None
    try:
        envelope: _Envelope | _LooseEnvelope = _ENVELOPE.decode(line)
        message = envelope.message
        content = message.content if message is not None else None
        if message is not None and record.type == RecordType.ASSISTANT:
            billed = _billed(message.usage, message.model)
            model = message.model
    except msgspec.ValidationError:
        envelope = _LOOSE.decode(line)
        content = _loose_blocks(envelope.message)
        loose = envelope.message if isinstance(envelope.message, dict) else {}
        model = loose.get("model") if record.type == RecordType.ASSISTANT else None
        if record.type == RecordType.ASSISTANT and isinstance(loose.get("usage"), dict):
            usage = loose["usage"]
            billed = _billed(
                _Usage(
                    usage.get("input_tokens"),
                    usage.get("cache_creation_input_tokens"),
                    usage.get("cache_read_input_tokens"),
                ),
                loose.get("model"),
            )
    kind = record.type
    if record.is_api:
        pieces, images = splitter.message(record, content)
        return pieces, images, billed, model
    if kind == RecordType.ATTACHMENT:
        raw = bytes(envelope.attachment)
        if not raw.startswith(b"{"):
            return [], 0, None, None
        name = safe_name(_ATTACHMENT_TYPE.decode(raw).type)
        return [Piece(ContentClass.ATTACHMENT, name, raw, quoted=False)], 0, None, None
    if kind == RecordType.SYSTEM:
        return _system_piece(record, bytes(envelope.content), bytes(envelope.error)), 0, None, None
    return [], 0, None, None


_CONTENT_TYPES: Final = frozenset({"user", "assistant", "attachment", "system"})


def split_records(records: Iterable[tuple[int, DecodedRecord, bytes]]) -> Iterator[LinePieces]:
    """Pieces of every user, assistant, attachment and system line, in physical order.

    `records` are (1-based line, decoded record, line bytes) in file order; physical order lets
    a tool_result learn the name of the tool_use written before it.
    """
    splitter = _Splitter()
    for number, record, line in records:
        if record.type not in _CONTENT_TYPES:
            continue
        try:
            pieces, images, billed, model = _split_record(splitter, record, line)
        except (msgspec.DecodeError, UnicodeDecodeError):  # the index decoded it; never a crash here
            continue
        yield LinePieces(
            number,
            tuple(pieces),
            images,
            record.is_api,
            sum(billed) if billed is not None else None,
            prompt_parts=billed,
            model=model if type(model) is str else None,
        )
