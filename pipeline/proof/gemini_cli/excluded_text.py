"""The texts of a Gemini CLI session's excluded lines that a candidate must never send.

Every string of an excluded line (a superseded version, a rewound message, a stale snapshot, a
damaged line's quoted pieces) at least `min_chars` long, that no kept, summarized or projected
line also holds, whole or within a longer text (a message re-appended unchanged holds the same
texts as its live version; a call's path recurs in its result), and
that the candidate's bytes contain: the judge checks Gemini CLI sends none of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Final

import orjson

from pipeline.formats.gemini_cli.chat_analysis import ChatAnalysis
from pipeline.formats.json_values import plain_strings
from pipeline.proof.verdict import ExcludedText
from pipeline.vocabulary import PartitionSet

__all__ = ["chat_exclusions"]

_EXCLUDED: Final = (PartitionSet.EXCLUDED_BRANCH, PartitionSet.EXCLUDED_UNATTRIBUTED)
_SEPARATOR: Final = "\x00"  # joins the allowed texts; JSON text never holds a raw NUL
_QUOTED: Final = re.compile(rb'"((?:[^"\\]|\\.)*)"')


def _line_strings(line: bytes) -> Iterator[str]:
    try:
        yield from plain_strings(orjson.loads(line))
    except orjson.JSONDecodeError:
        yield from (piece.decode("utf-8", "replace") for piece in _QUOTED.findall(line))


def chat_exclusions(
    analysis: ChatAnalysis, sets: Mapping[PartitionSet, frozenset[int]], candidate: bytes, min_chars: int
) -> tuple[ExcludedText, ...]:
    """Excluded texts the candidate holds and no other line of the original does."""
    data, chat = analysis.data, analysis.chat
    allowed = _SEPARATOR.join(
        text
        for kind, lines in sets.items()
        if kind not in _EXCLUDED
        for line in sorted(lines)
        for text in _line_strings(chat.raw_line(data, line))
    )
    found: dict[str, ExcludedText] = {}
    for kind in _EXCLUDED:
        for line in sorted(sets.get(kind, frozenset())):
            fresh = (
                t
                for t in _line_strings(chat.raw_line(data, line))
                if len(t) >= min_chars and t not in allowed
            )
            for text in fresh:
                if text not in found and orjson.dumps(text)[1:-1] in candidate:
                    found[text] = ExcludedText(text, line, kind.value)
    return tuple(found.values())
