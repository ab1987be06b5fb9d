"""The texts a Qwen Code session's compaction must never send: those of its excluded records.

As for Codex (`proof/codex/codex_excluded.py`): each string of at least `min_chars` characters that an
excluded record holds (a rewound branch, history before Qwen Code's own compression, a damaged
line, telemetry before the cut), that the candidate file holds, and that no sent, kept or
summarized record holds too. Telemetry repeats the model's text (`response_text`), so only what
is the excluded record's own is searched.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from pipeline.formats.json_values import line_strings
from pipeline.formats.qwen_code.session_analysis import QwenAnalysis
from pipeline.formats.qwen_code.session_decode import raw_line
from pipeline.proof.excluded import EXCLUDED_SETS
from pipeline.proof.verdict import ExcludedText
from pipeline.vocabulary import PartitionSet

__all__ = ["session_exclusions"]

_SEPARATOR: Final = "\x00"  # joins searchable strings; JSON text never holds a raw NUL
_SENT_SETS: Final = (PartitionSet.RAW_KEEP, PartitionSet.SIDE_KEEP, PartitionSet.SUMMARY)


def _joined(analysis: QwenAnalysis, lines: Iterable[int]) -> str:
    return _SEPARATOR.join(
        text for line in lines for text in line_strings(raw_line(analysis.data, analysis.session, line))
    )


def session_exclusions(
    analysis: QwenAnalysis, sets: Mapping[PartitionSet, frozenset[int]], candidate: bytes, min_chars: int
) -> tuple[ExcludedText, ...]:
    """Each distinct long enough text of an excluded record that the candidate holds and no
    sent or summarized record does."""
    in_candidate = _SEPARATOR.join(text for line in candidate.splitlines() for text in line_strings(line))
    found: dict[str, ExcludedText] = {}
    for name in EXCLUDED_SETS:
        for line in sorted(sets[name]):
            for text in line_strings(raw_line(analysis.data, analysis.session, line)):
                if len(text.strip()) >= min_chars and text not in found and text in in_candidate:
                    found[text] = ExcludedText(text, line, name.value)
    if not found:
        return ()
    held = _joined(analysis, sorted(line for name in _SENT_SETS for line in sets[name]))
    return tuple(item for item in found.values() if item.text.strip() not in held)
