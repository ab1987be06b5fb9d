"""The texts a CodeWhale compaction must never send: those of the original's excluded records
(entries off the active branch, records serde refuses, results the resume repair drops).

As for the other formats, only a text no sent or summarized record holds is attributable to an
excluded one, short strings are not searched, and only what the candidate document holds can be
sent from it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import orjson

from pipeline.formats.codewhale.whale_analysis import CodewhaleAnalysis
from pipeline.formats.json_values import plain_strings
from pipeline.proof.excluded import EXCLUDED_SETS
from pipeline.proof.verdict import ExcludedText
from pipeline.vocabulary import PartitionSet

__all__ = ["session_exclusions"]

_SEPARATOR: Final = "\x00"  # joins searchable strings; JSON text never holds a raw NUL
_SENT_SETS: Final = (PartitionSet.RAW_KEEP, PartitionSet.SIDE_KEEP, PartitionSet.SUMMARY)


def _sendable(record: object) -> object:
    """What CodeWhale can send of a record: a journal entry's message (its ids and times are not)."""
    return record.get("message", record) if isinstance(record, dict) else record


def records(document: Mapping[str, Any]) -> Sequence[object]:
    """The document's numbered records: its journal's entries, else its messages."""
    journal = document.get("journal")
    entries = journal.get("entries") if isinstance(journal, dict) else None
    if isinstance(entries, list):
        return entries
    messages = document.get("messages")
    return messages if isinstance(messages, list) else ()


def session_exclusions(
    analysis: CodewhaleAnalysis, sets: Mapping[PartitionSet, frozenset[int]], candidate: bytes, min_chars: int
) -> tuple[ExcludedText, ...]:
    """Each distinct text of at least `min_chars` characters an excluded record of the original
    holds, the candidate document holds, and no sent or summarized record holds."""
    session = analysis.session
    if session is None:
        return ()
    numbered = records(session.fields)
    try:
        in_candidate = _SEPARATOR.join(plain_strings(orjson.loads(candidate)))
    except orjson.JSONDecodeError:
        return ()
    sent = _SEPARATOR.join(
        text
        for name in _SENT_SETS
        for line in sets[name]
        for text in plain_strings(_sendable(numbered[line - 1]))
    )
    found: dict[str, ExcludedText] = {}
    for name in EXCLUDED_SETS:
        for line in sorted(sets[name]):
            if line > len(numbered):
                continue
            for text in plain_strings(_sendable(numbered[line - 1])):
                if len(text) >= min_chars and text not in found and text in in_candidate and text not in sent:
                    found[text] = ExcludedText(text, line, name.value)
    return tuple(found.values())
