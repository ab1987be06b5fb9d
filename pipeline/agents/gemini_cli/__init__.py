"""Gemini CLI sessions through the seam: the reader (`formats/gemini_cli`), its evidence, its
report part and the real Gemini CLI as judge (`proof/gemini_cli`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePath

from pipeline.agents.gemini_cli.gemini_judge import GeminiJudge
from pipeline.agents.gemini_cli.gemini_session import GeminiSession
from pipeline.formats.gemini_cli.chat_analysis import analyze_chat
from pipeline.formats.gemini_cli.signature import is_subagent_path
from pipeline.formats.line_guard import LineLimits
from pipeline.formats.rewrites import RewriteKind
from pipeline.vocabulary import SourceFormat

__all__ = ["GEMINI_CLI", "GeminiCliFormat"]


@dataclass(frozen=True, slots=True)
class GeminiCliFormat:
    """Gemini CLI's chats: its own estimate (`estimateTokenCountSync`); no local tokenizer of the
    Gemini models is installed beside it."""

    format: SourceFormat = SourceFormat.GEMINI_CLI
    estimator: str = "gemini-cli-estimate"  # Gemini CLI's estimateTokenCountSync (chars / 4, non-ASCII 1.5)
    tokenizer: str | None = None
    compressed_sessions: bool = False  # Gemini CLI keeps no compressed sessions
    rewrites: frozenset[RewriteKind] = frozenset({RewriteKind.REPAIR, RewriteKind.VACUUM})
    judge: GeminiJudge = field(default_factory=GeminiJudge)

    def read(self, data: bytes, path: PurePath | None, limits: LineLimits) -> GeminiSession:
        """A session under `chats/<parent>/` is a subagent's whatever its header says."""
        return GeminiSession(analyze_chat(data, limits), nested=is_subagent_path(path))


GEMINI_CLI = GeminiCliFormat()
