"""The partition sets whose records a compaction must never send, for every judge.

Each judge lists the texts of these sets' records its own way (Claude Code's:
`pipeline.proof.claude_code.exclusions`).
"""

from __future__ import annotations

from typing import Final

from pipeline.vocabulary import PartitionSet

__all__ = ["EXCLUDED_SETS"]

EXCLUDED_SETS: Final = (PartitionSet.EXCLUDED_BRANCH, PartitionSet.EXCLUDED_UNATTRIBUTED)
