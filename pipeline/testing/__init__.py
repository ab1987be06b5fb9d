"""Test doubles that users of ``pipeline`` need too.

``TranscriptBuilder`` writes session and subagent transcripts record by record in the exact shapes
and key order of real Claude Code files; :mod:`pipeline.testing.synth` uses it to generate whole fleets.
The loopback stand-in for the Messages API is production code: :mod:`pipeline.proof.capture`.
"""

from __future__ import annotations

from pipeline.testing._records import Feature
from pipeline.testing.builder import AssistantMessage, CompactResult, ToolCall, ToolSpec, TranscriptBuilder

__all__ = [
    "AssistantMessage",
    "CompactResult",
    "Feature",
    "ToolCall",
    "ToolSpec",
    "TranscriptBuilder",
]
