"""The texts a Claude Code compaction must never send: those of excluded records, and of nothing kept.

An excluded record (a rewound branch, pre-compaction history, a sidechain, an unreadable line)
may repeat text a kept record also holds (a prompt typed again after a rewind); only text found
in no kept record is attributable to the excluded one. Short strings ("yes", "continue") cannot
be attributed at all and are not checked.

`excluded_texts` lists them all. The resume gate needs only those a compacted context sends,
and `sent_exclusions` finds exactly those without joining the whole session's text (for a
giant session that is its size again, searched once per excluded string).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from pipeline.core.index import LineIndex
from pipeline.core.partition import Partition
from pipeline.formats.claude_code.records import record_strings
from pipeline.proof.excluded import EXCLUDED_SETS
from pipeline.proof.verdict import ExcludedText

__all__ = ["excluded_texts", "sent_exclusions"]

_SEPARATOR = "\x00"


def _strings(data: bytes, index: LineIndex, lines: Iterable[int]) -> Iterator[str]:
    for line in lines:
        yield from record_strings(index.raw_line(data, line))


def excluded_texts(
    data: bytes, index: LineIndex, partition: Partition, *, min_chars: int
) -> tuple[ExcludedText, ...]:
    """Each distinct text of at least `min_chars` characters held by excluded lines and no other line."""
    excluded_lines = {line for name in EXCLUDED_SETS for line in partition[name].lines}
    kept = _SEPARATOR.join(
        text
        for text in _strings(data, index, (n for n in range(1, len(index) + 1) if n not in excluded_lines))
        if len(text) >= min_chars
    )
    found: dict[str, ExcludedText] = {}
    for name in EXCLUDED_SETS:
        for line in sorted(partition[name].lines):
            for text in record_strings(index.raw_line(data, line)):
                # Trimmed: a diff line " import x" is the kept "import x" once a summary quotes
                # it as "- import x"; only what no kept line holds is the excluded line's own.
                core = text.strip()
                if len(core) >= min_chars and text not in found and core not in kept:
                    found[text] = ExcludedText(text, line, name.value)
    return tuple(found.values())


def _sent_occurrences(
    data: bytes, index: LineIndex, partition: Partition, sent: str, min_chars: int
) -> Iterator[ExcludedText]:
    """Each distinct long enough excluded string `sent` holds, where it first occurs (set, then line order).

    Which strings qualify depends on the text alone, so the first occurrence of a qualifying one
    is its first occurrence at all, and only qualifying strings are remembered.
    """
    seen: set[str] = set()
    for name in EXCLUDED_SETS:
        for line in sorted(partition[name].lines):
            for text in record_strings(index.raw_line(data, line)):
                if text not in seen and len(text.strip()) >= min_chars and text in sent:
                    seen.add(text)
                    yield ExcludedText(text, line, name.value)


def _held_by_kept(
    data: bytes, index: LineIndex, excluded_lines: set[int], cores: Sequence[str], min_chars: int
) -> set[str]:
    """The cores that the kept text, as `excluded_texts` joins it, holds.

    Read string by string (those of at least `min_chars` characters); only a core holding the
    separator could span two strings, and only then is the kept text joined.
    """
    kept_lines = (n for n in range(1, len(index) + 1) if n not in excluded_lines)
    strings = (text for text in _strings(data, index, kept_lines) if len(text) >= min_chars)
    if any(_SEPARATOR in core for core in cores):
        kept = _SEPARATOR.join(strings)
        return {core for core in cores if core in kept}
    held: set[str] = set()
    pending = list(cores)
    for text in strings:
        found = [core for core in pending if core in text]
        if found:
            held.update(found)
            pending = [core for core in pending if core not in held]
            if not pending:
                break
    return held


def sent_exclusions(
    data: bytes, index: LineIndex, partition: Partition, sent: str, *, min_chars: int
) -> tuple[ExcludedText, ...]:
    """The texts of `excluded_texts` that `sent` holds (a context's strings, joined), as it lists them.

    Only an excluded string that `sent` holds is looked for in the kept lines: usually none,
    so the kept text is read once and never joined.
    """
    excluded_lines = {line for name in EXCLUDED_SETS for line in partition[name].lines}
    candidates = list(_sent_occurrences(data, index, partition, sent, min_chars))
    if not candidates:
        return ()
    cores = sorted({item.text.strip() for item in candidates})
    held = _held_by_kept(data, index, excluded_lines, cores, min_chars)
    return tuple(item for item in candidates if item.text.strip() not in held)
