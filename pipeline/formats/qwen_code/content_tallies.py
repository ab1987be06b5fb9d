"""What one Qwen Code part is, as a content class of the token benchmark, and the tallies.

The classes are Claude Code's and Codex's where the roles match: a person's prompt (`human`),
the model's text (`assistant`) and reasoning (`reasoning`), a tool's call (`tool_use`) and its
response (`tool_result`) by tool name; a compression's history is `summary`. The file's tallies
count every content a record holds (every branch, compressions' histories included); the sent
ones the parts of the messages Qwen Code sends. Qwen Code's own estimate of a part is the one it
counts its context with (`part_estimate`: a text's characters, a call's or response's JSON), the
very figure the sent items carry, so the classes sum to `validate`'s context; each tokenizer
counts the part's visible text.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping

from pipeline.formats.context_items import ClassTallies, Key, Tally
from pipeline.formats.qwen_code.chat_messages import SentMessage
from pipeline.formats.qwen_code.session_records import Part, PartKind, QwenRecord

__all__ = ["content_tallies", "part_piece"]

Piece = tuple[Key, str, int]  # (class, tool), the visible text, Qwen Code's estimate


def part_piece(part: Part, role: str, summary: bool) -> Piece | None:
    """(class, tool), the visible text and Qwen Code's estimate of one part of a `role` content;
    None for a part of no class (an empty text, media)."""
    if part.kind is PartKind.TEXT and part.text:
        kind = "summary" if summary else "human" if role == "user" else "assistant"
        return (kind, None), part.text, part.tokens
    if part.kind is PartKind.THOUGHT and part.text:
        return ("reasoning", None), part.text, part.tokens
    if part.kind is PartKind.FUNCTION_CALL:
        return ("tool_use", part.name or "unknown"), f"{part.name}\n{part.arguments}", part.tokens
    if part.kind is PartKind.FUNCTION_RESPONSE:
        return ("tool_result", part.name or "unknown"), "\n".join((part.text, *part.nested)), part.tokens
    return None


def _file_pieces(records: Iterable[QwenRecord]) -> Iterator[Piece]:
    for record in records:
        contents = [(c, True) for c in record.compressed or ()]
        if record.message is not None:
            contents.insert(0, (record.message, False))
        for content, summary in contents:
            for part in content.parts:
                if (piece := part_piece(part, content.role, summary)) is not None:
                    yield piece


def _sent_pieces(messages: Iterable[SentMessage]) -> Iterator[Piece]:
    for message in messages:
        role = "user" if message.message["role"] != "assistant" else "model"
        for sent in message.parts:
            if (piece := part_piece(sent.part, role, sent.summary)) is not None:
                yield piece


def _tally(
    pieces: Iterable[Piece], estimator: str, tokenizers: Mapping[str, Callable[[str], int]]
) -> dict[Key, Tally]:
    table: dict[Key, Tally] = defaultdict(Tally)
    for (kind, tool), text, estimate in pieces:
        counts = {estimator: estimate, **{name: count(text) for name, count in tokenizers.items()}}
        for key in ((kind, None), (kind, tool)) if tool else ((kind, None),):
            table[key].items += 1
            for name, value in counts.items():
                table[key].tokens[name] += value
    return table


def content_tallies(
    records: Iterable[QwenRecord],
    sent: Iterable[SentMessage],
    estimator: str,
    tokenizers: Mapping[str, Callable[[str], int]],
) -> ClassTallies:
    """Parts and tokens by class over the file and over the messages Qwen Code sends."""
    return ClassTallies(
        _tally(_file_pieces(records), estimator, tokenizers),
        _tally(_sent_pieces(sent), estimator, tokenizers),
    )
