"""Test doubles that users of ``pipeline`` need too.

``TranscriptBuilder`` writes session and subagent transcripts record by record in the exact shapes
and key order of real Claude Code files; :mod:`pipeline.testing.synth` uses it to generate whole fleets.
The loopback stand-in for the Messages API is production code: :mod:`pipeline.proof.claude_code.capture`.
"""

from __future__ import annotations

from typing import Any

from pipeline.report.documents import Outcome
from pipeline.report.render import to_builtins
from pipeline.testing._records import Feature
from pipeline.testing.builder import AssistantMessage, CompactResult, ToolCall, ToolSpec, TranscriptBuilder

__all__ = [
    "AssistantMessage",
    "CompactResult",
    "Feature",
    "ToolCall",
    "ToolSpec",
    "TranscriptBuilder",
    "as_json",
]


def as_json(outcome: Outcome) -> dict[str, Any]:
    """A session outcome's report as its JSON file holds it (what a user reads)."""
    data: dict[str, Any] = to_builtins(outcome.report)
    return data
