"""Content pieces: what kind of text each token of a session is, the token benchmark's unit.

A chain format's reader cuts each content line into `Piece`s of one `ContentClass` each (a tool,
attachment type or system subtype named where one helps) and gives them per line as
`LinePieces`, with the images it carries and the billed prompt of an assistant line. The tokens
job counts pieces and never reads a record itself; which reader cuts a format's lines is
`formats/registry.content_pieces`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

import msgspec

__all__ = ["NAME_OTHER", "ContentClass", "LinePieces", "Piece"]


class ContentClass(StrEnum):
    """The kinds of content a transcript holds (report keys)."""

    HUMAN = "human"
    META = "meta"
    COMPACT_SUMMARY = "compact-summary"
    ASSISTANT = "assistant"
    THINKING = "thinking"
    TOOL_USE = "tool-use"
    TOOL_RESULT = "tool-result"
    ATTACHMENT = "attachment"
    SYSTEM = "system"


NAME_OTHER: Final = "other"  # the name a piece gets when its own could be free text, and the folded rest
_STRING: Final = msgspec.json.Decoder(str)


class Piece(msgspec.Struct, frozen=True, gc=False):
    """One run of text of one class, as the transcript spells it.

    `raw` is the body of a JSON string (escapes included, quotes excluded) when `quoted`, else a
    JSON value (a tool's input, an attachment object). Estimators that work on bytes read `raw`
    directly; real tokenizers read `text()`, the characters the model sees. `name` is a tool
    name, attachment type or system subtype (a report-safe identifier), or empty.
    """

    kind: ContentClass
    name: str
    raw: bytes
    quoted: bool = True
    hidden: int = 0
    """UTF-8 bytes of the block the provider keeps that `raw` does not spell: the part of a
    thinking block the transcript holds only as a summary (read off its signature)."""
    unsent: int = 0
    """Bytes of `raw` the client does not send: what it writes into a recorded tool input and
    strips again from the request (a plan Claude Code puts into an ExitPlanMode call's input)."""

    def text(self) -> str:
        """The piece's characters: a JSON string decoded, a JSON value as written."""
        if self.quoted:
            return _STRING.decode(b'"' + self.raw + b'"')
        return self.raw.decode("utf-8", "replace")


class LinePieces(msgspec.Struct, frozen=True, gc=False):
    """The pieces of one physical line, and how many images or documents it carries.

    Both are msgspec structs rather than frozen dataclasses: one is built per piece and per line
    on the sweep's critical path, and a struct is built in C.
    """

    line: int
    pieces: tuple[Piece, ...]
    images: int
    api: bool  # a user/assistant message line (its pieces are part of the model's context)
    billed_prompt: int | None = None  # an assistant line's input + cache creation + cache read tokens
    prompt_parts: tuple[int, int, int] | None = None  # ...each of the three (fresh, cache writes, reads)
    model: str | None = None  # an assistant line's `message.model`, when it is a string
