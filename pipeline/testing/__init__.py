"""Test doubles that users of ``pipeline`` need too.

``TranscriptBuilder`` writes session and subagent transcripts record by record in the exact shapes
and key order of real Claude Code files; :mod:`pipeline.synth` uses it to generate whole fleets.
``FakeAnthropic`` is a loopback fake of the Messages API that records requests and injects faults;
:mod:`pipeline.testing.claude_code` resumes transcripts with the real Claude Code against it.
"""

from __future__ import annotations

from pipeline.testing._records import Feature
from pipeline.testing.builder import AssistantMessage, CompactResult, ToolCall, ToolSpec, TranscriptBuilder
from pipeline.testing.fake_anthropic import FakeAnthropic, Fault

__all__ = [
    "AssistantMessage",
    "CompactResult",
    "FakeAnthropic",
    "Fault",
    "Feature",
    "ToolCall",
    "ToolSpec",
    "TranscriptBuilder",
]
