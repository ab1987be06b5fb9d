"""How a kept record's tool outputs are bounded: the rule a compaction applies, named by no format.

The compress job chooses a rule per kept record (`jobs/compress/planning.py`); the chain's format
applies it to its own records (Claude Code's: `formats/claude_code/bounded_output.py`) and declares
what it bounded in the candidate, so a checker can apply it again to the source and compare.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BoundRule"]


@dataclass(frozen=True, slots=True)
class BoundRule:
    """How one kept record is bounded: the byte limit of a text, whether media is replaced, and
    whether its tool outputs are cleared (masking)."""

    limit: int
    drop_media: bool
    clear: bool = False
    clear_inputs: bool = False  # also the bulky strings of file-writing calls (`mask`)
