"""The agents the jobs process through the context seam, by format: one line per agent.

Claude Code is processed by its own jobs (its active chain, checkpoints and repairs have no
item-context form yet), which reach its format's own parts through a `ChainFormat` here
(`CHAIN_PARTS`) and run its judge through `chain_judge` (`CHAIN_JUDGES`); every other processed
agent is a `ContextFormat` here. Detection and the default roots are `formats/registry.py`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from pipeline.agents.chain_judge import ChainJudge
from pipeline.agents.claude_code.chain_parts import CLAUDE_CODE_CHAIN
from pipeline.agents.claude_code.claude_judge import CLAUDE_CODE_JUDGE
from pipeline.agents.codewhale import CODEWHALE
from pipeline.agents.codex import CODEX
from pipeline.agents.gemini_cli import GEMINI_CLI
from pipeline.agents.pi import PI
from pipeline.agents.protocol import ChainFormat, ContextFormat
from pipeline.agents.qwen_code import QWEN_CODE
from pipeline.installed import JUDGES, ResumeJudge
from pipeline.vocabulary import SourceFormat

__all__ = [
    "CHAIN_FORMATS",
    "CHAIN_JUDGES",
    "CHAIN_PARTS",
    "CONTEXT_FORMATS",
    "DAMAGE_REPAIR_FORMAT",
    "READ_PAGES_REPAIR_FORMAT",
    "RESUME_JUDGES",
    "chain_judge",
    "context_format",
]

CHAIN_FORMATS: Final = frozenset({SourceFormat.CLAUDE_CODE})
"""The formats processed by the active-chain jobs (`jobs/front.Analysis` and after)."""

CHAIN_PARTS: Final[Mapping[SourceFormat, ChainFormat]] = MappingProxyType(
    {agent.format: agent for agent in (CLAUDE_CODE_CHAIN,)}
)
"""Each active-chain format's own parts in a compaction, which the compress job reaches them by."""

CONTEXT_FORMATS: Final[Mapping[SourceFormat, ContextFormat]] = MappingProxyType(
    {agent.format: agent for agent in (CODEX, PI, GEMINI_CLI, QWEN_CODE, CODEWHALE)}
)


def context_format(source_format: SourceFormat) -> ContextFormat | None:
    """The plug-in of a format processed through the context seam, or None."""
    return CONTEXT_FORMATS.get(source_format)


RESUME_JUDGES: Final[Mapping[SourceFormat, ResumeJudge]] = MappingProxyType(
    {
        **{chain: JUDGES[chain] for chain in sorted(CHAIN_FORMATS)},
        **{source_format: agent.judge.client for source_format, agent in CONTEXT_FORMATS.items()},
    }
)
"""Each processed format's judge, in registry order: the client the resume gate runs for it."""


# The active-chain formats' judges ----------------------------------------------------------
# (the compress gate, verify-resume and the damage repair run them through `chain_judge`)

CHAIN_JUDGES: Final[Mapping[SourceFormat, ChainJudge]] = MappingProxyType(
    {SourceFormat.CLAUDE_CODE: CLAUDE_CODE_JUDGE}
)
"""Each active-chain format's judge (`CHAIN_FORMATS`)."""

DAMAGE_REPAIR_FORMAT: Final = SourceFormat.CLAUDE_CODE
"""The format `core.session_repair` repairs, whose judge proves `compaction repair`'s chain repairs."""

READ_PAGES_REPAIR_FORMAT: Final = SourceFormat.CLAUDE_CODE
"""The format `core.read_pages` repairs (its `Read` tool's `pages` argument): `repair-read-pages`."""


def chain_judge(source_format: SourceFormat) -> ChainJudge:
    """The judge of an active-chain format (`CHAIN_FORMATS`); no other format has one (a
    `ValueError`: another agent's session is never judged as a chain format's)."""
    judge = CHAIN_JUDGES.get(source_format)
    if judge is None:
        raise ValueError(f"{source_format.value} is not an active-chain format: it has no chain judge")
    return judge
