"""The agents the jobs process through the context seam, by format: one line per agent.

Claude Code is processed by its own jobs (its active chain, checkpoints and repairs have no
item-context form yet); every other processed agent is a `ContextFormat` here. Detection and
the default roots are `formats/registry.py`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from pipeline.agents.codex import CODEX
from pipeline.agents.protocol import ContextFormat
from pipeline.vocabulary import SourceFormat

__all__ = ["CONTEXT_FORMATS", "context_format"]

CONTEXT_FORMATS: Final[Mapping[SourceFormat, ContextFormat]] = MappingProxyType(
    {agent.format: agent for agent in (CODEX,)}
)


def context_format(source_format: SourceFormat) -> ContextFormat | None:
    """The plug-in of a format processed through the context seam, or None."""
    return CONTEXT_FORMATS.get(source_format)
