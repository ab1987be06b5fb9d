"""What one Qwen Code part is, as a content class of the token benchmark, and the tallies.

The classes are Claude Code's and Codex's where the roles match: a person's prompt (`human`),
the model's text (`assistant`) and reasoning (`reasoning`), a tool's call (`tool_use`) and its
response (`tool_result`) by tool name; a compression's history is `summary`. The file's tallies
count every content a record holds (every branch, compressions' histories included); the sent
ones the curated history Qwen Code sends. Qwen Code's own estimate of a part is its text's
(ASCII / 4, 1.5 per other character); each tokenizer counts the same text.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping

from pipeline.formats.context_items import ClassTallies, Key, Tally
from pipeline.formats.qwen_code.api_history import Entry
from pipeline.formats.qwen_code.chat_messages import estimate_tokens
from pipeline.formats.qwen_code.session_records import Content, PartKind, QwenRecord

__all__ = ["content_tallies", "part_pieces"]


def part_pieces(content: Content, summary: bool) -> Iterator[tuple[Key, str]]:
    """(class, tool) and the visible text of each part of one content."""
    for part in content.parts:
        if part.kind is PartKind.TEXT and part.text:
            role = "summary" if summary else "human" if content.role == "user" else "assistant"
            yield (role, None), part.text
        elif part.kind is PartKind.THOUGHT and part.text:
            yield ("reasoning", None), part.text
        elif part.kind is PartKind.FUNCTION_CALL:
            yield ("tool_use", part.name or "unknown"), f"{part.name}\n{part.arguments}"
        elif part.kind is PartKind.FUNCTION_RESPONSE:
            yield ("tool_result", part.name or "unknown"), "\n".join((part.text, *part.nested))


def _file_contents(records: Iterable[QwenRecord]) -> Iterator[tuple[Content, bool]]:
    for record in records:
        if record.message is not None:
            yield record.message, False
        for content in record.compressed or ():
            yield content, True


def _tally(
    pieces: Iterable[tuple[Key, str]], counters: Mapping[str, Callable[[str], int]]
) -> dict[Key, Tally]:
    table: dict[Key, Tally] = defaultdict(Tally)
    for (kind, tool), text in pieces:
        counts = {name: count(text) for name, count in counters.items()}
        for key in ((kind, None), (kind, tool)) if tool else ((kind, None),):
            table[key].items += 1
            for name, value in counts.items():
                table[key].tokens[name] += value
    return table


def content_tallies(
    records: Iterable[QwenRecord],
    sent: Iterable[Entry],
    estimator: str,
    tokenizers: Mapping[str, Callable[[str], int]],
) -> ClassTallies:
    """Parts and tokens by class over the file and over what Qwen Code sends."""
    counters = {estimator: estimate_tokens, **tokenizers}
    file = _tally((p for c, s in _file_contents(records) for p in part_pieces(c, s)), counters)
    sent_table = _tally((p for e in sent for p in part_pieces(e.content, e.from_compression)), counters)
    return ClassTallies(file, sent_table)
