"""The texts a Codex rollout's compaction must never send: those of its excluded records.

The excluded records of a rollout (an item before the newest compaction or dropped by a rollback,
a damaged line, an event before the cut) are those of the `excluded_*` partition sets. As for
Claude Code (`proof/claude_code/exclusions.py`), only a text no sent or summarized record holds is
attributable to an excluded one, and short strings are not searched: a command an
`exec_command_end` event repeats is its call's (inside the call's JSON `arguments`, decoded
here), which a summary may restate. Only what the candidate file holds can be sent from it, so
the other records are read only for those texts (usually none).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Final

from pipeline.formats.codex.analysis import RolloutAnalysis
from pipeline.formats.json_values import parse_object, plain_strings, string_pieces
from pipeline.proof.excluded import EXCLUDED_SETS
from pipeline.proof.verdict import ExcludedText
from pipeline.vocabulary import PartitionSet

__all__ = ["rollout_exclusions"]

_SEPARATOR: Final = "\x00"  # joins searchable strings; JSON text never holds a raw NUL
# The records whose text a compaction may send or restate. Not the control projection: the
# events Codex keeps for its resume state echo rolled-back prompts too, and are never sent.
_SENT_SETS: Final = (PartitionSet.RAW_KEEP, PartitionSet.SIDE_KEEP, PartitionSet.SUMMARY)


def _line_strings(line: bytes) -> Iterator[str]:
    """Every string of a record's payload, a call's JSON `arguments` decoded too; a damaged
    line's pieces between quotes."""
    record = parse_object(line)
    if record is None:
        yield from string_pieces(line)
        return
    payload = record.get("payload")
    yield from plain_strings(payload)
    arguments = payload.get("arguments") if isinstance(payload, dict) else None
    if isinstance(arguments, str) and arguments.lstrip().startswith(("{", "[")):
        yield from plain_strings(parse_object(arguments.encode()) or {})


def _joined(data: bytes, analysis: RolloutAnalysis, lines: Iterable[int]) -> str:
    raw_line = analysis.rollout.raw_line
    return _SEPARATOR.join(text for line in lines for text in _line_strings(raw_line(data, line)))


def rollout_exclusions(
    analysis: RolloutAnalysis, sets: Mapping[PartitionSet, frozenset[int]], candidate: bytes, min_chars: int
) -> tuple[ExcludedText, ...]:
    """Each distinct text of at least `min_chars` characters that the excluded records of the
    original's `sets` hold, the candidate file holds, and no record whose items are sent or
    summarized holds."""
    in_candidate = _SEPARATOR.join(text for line in candidate.splitlines() for text in _line_strings(line))
    found: dict[str, ExcludedText] = {}
    for name in EXCLUDED_SETS:
        for line in sorted(sets[name]):
            for text in _line_strings(analysis.rollout.raw_line(analysis.data, line)):
                if len(text.strip()) >= min_chars and text not in found and text in in_candidate:
                    found[text] = ExcludedText(text, line, name.value)
    if not found:
        return ()
    sent = sorted(line for name in _SENT_SETS for line in sets[name])
    held = _joined(analysis.data, analysis, sent)
    return tuple(item for item in found.values() if item.text.strip() not in held)
