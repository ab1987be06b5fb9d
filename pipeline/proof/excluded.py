"""The texts a compaction must never send: those of excluded records, and of nothing kept.

An excluded record (a rewound branch, pre-compaction history, a sidechain, an unreadable line)
may repeat text a kept record also holds (a prompt typed again after a rewind); only text found
in no kept record is attributable to the excluded one. Short strings ("yes", "continue") cannot
be attributed at all and are not checked.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from pipeline.core.index import LineIndex
from pipeline.core.partition import Partition
from pipeline.formats.claude_code.records import record_strings
from pipeline.proof.verdict import ExcludedText
from pipeline.vocabulary import PartitionSet

__all__ = ["EXCLUDED_SETS", "excluded_texts"]

EXCLUDED_SETS = (PartitionSet.EXCLUDED_BRANCH, PartitionSet.EXCLUDED_UNATTRIBUTED)
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
