"""Gemini CLI sessions through the seam: the reader (`formats/gemini_cli`), its evidence, its
report part and the real Gemini CLI as judge (`proof/gemini_cli`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.agents.gemini_cli.gemini_judge import GeminiJudge
from pipeline.agents.gemini_cli.gemini_session import GeminiSession
from pipeline.formats.claude_code.line_guard import LineLimits
from pipeline.formats.gemini_cli.chat_analysis import analyze_chat
from pipeline.read.load import SourceBytes
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
    judge: GeminiJudge = field(default_factory=GeminiJudge)

    def read(self, source: SourceBytes, limits: LineLimits) -> GeminiSession:
        return GeminiSession(analyze_chat(source.data, limits))


GEMINI_CLI = GeminiCliFormat()
