"""The texts a pi compaction must never send: those of the original's excluded records.

pi compacts by appending, so the candidate holds every excluded record (an abandoned branch,
messages an earlier compaction already summarized, a damaged line) exactly where the original
does, and pi must go on not sending them. As for Claude Code and Codex, only a text no sent or
summarized record holds is attributable to an excluded one, and short strings are not searched.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from pipeline.formats.json_values import line_strings
from pipeline.formats.pi.session_analysis import PiAnalysis
from pipeline.proof.excluded import EXCLUDED_SETS
from pipeline.proof.verdict import ExcludedText
from pipeline.vocabulary import PartitionSet

__all__ = ["session_exclusions"]

_SEPARATOR: Final = "\x00"  # joins searchable strings; JSON text never holds a raw NUL
_SENT_SETS: Final = (PartitionSet.RAW_KEEP, PartitionSet.SIDE_KEEP, PartitionSet.SUMMARY)


def _joined(analysis: PiAnalysis, lines: Iterable[int]) -> str:
    raw_line = analysis.session.raw_line
    return _SEPARATOR.join(text for line in lines for text in line_strings(raw_line(analysis.data, line)))


def session_exclusions(
    analysis: PiAnalysis, sets: Mapping[PartitionSet, frozenset[int]], candidate: bytes, min_chars: int
) -> tuple[ExcludedText, ...]:
    """Each distinct text of at least `min_chars` characters that the excluded records of the
    original's `sets` hold, the candidate file holds, and no sent or summarized record holds."""
    in_candidate = _SEPARATOR.join(text for line in candidate.splitlines() for text in line_strings(line))
    found: dict[str, ExcludedText] = {}
    for name in EXCLUDED_SETS:
        for line in sorted(sets[name]):
            for text in line_strings(analysis.session.raw_line(analysis.data, line)):
                if len(text.strip()) >= min_chars and text not in found and text in in_candidate:
                    found[text] = ExcludedText(text, line, name.value)
    if not found:
        return ()
    held = _joined(analysis, sorted(line for name in _SENT_SETS for line in sets[name]))
    return tuple(item for item in found.values() if item.text.strip() not in held)
