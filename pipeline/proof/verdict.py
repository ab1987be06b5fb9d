"""What every judge's verdict searches a candidate's context for: the texts of excluded records.

A compaction holds only if what its client sends on resume holds no text of a record it excluded
(a rewound branch, history before a compaction, a damaged line). Each agent's judge lists those
texts its own way (`proof/<agent>/`) as `ExcludedText`s; a difference names where one came from,
never the text itself.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ExcludedText"]


@dataclass(frozen=True, slots=True)
class ExcludedText:
    """A text an excluded record holds, and where it came from (the line, 1-based, and its set)."""

    text: str
    line: int
    partition_set: str
