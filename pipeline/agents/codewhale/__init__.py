"""CodeWhale sessions through the seam: the reader (`formats/codewhale`), its evidence, its
report part and CodeWhale itself as judge (`proof/codewhale`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePath

from pipeline.agents.codewhale.whale_judge import CodewhaleJudge
from pipeline.agents.codewhale.whale_session import CodewhaleSession
from pipeline.formats.codewhale.whale_analysis import analyze_session
from pipeline.formats.line_guard import LineLimits
from pipeline.vocabulary import SourceFormat

__all__ = ["CODEWHALE", "CodewhaleFormat"]


@dataclass(frozen=True, slots=True)
class CodewhaleFormat:
    """CodeWhale's session documents: its own estimate (a block's UTF-8 bytes / 4), DeepSeek's beside it."""

    format: SourceFormat = SourceFormat.CODEWHALE
    estimator: str = "codewhale-approx"  # CodeWhale's estimate_tokens_for_message: bytes / 4
    tokenizer: str | None = "deepseek"  # CodeWhale (formerly DeepSeek-TUI) runs DeepSeek models by default
    compressed_sessions: bool = False  # CodeWhale keeps every session as plain JSON
    judge: CodewhaleJudge = field(default_factory=CodewhaleJudge)

    def read(self, data: bytes, path: PurePath | None, limits: LineLimits) -> CodewhaleSession:
        return CodewhaleSession(analyze_session(data, limits))


CODEWHALE = CodewhaleFormat()
