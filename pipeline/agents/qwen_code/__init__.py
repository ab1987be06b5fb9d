"""Qwen Code sessions through the seam: the reader (`formats/qwen_code`), its evidence, its
report part and the real Qwen Code as judge (`proof/qwen_code`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Final

from pipeline.agents.protocol import ContextFormat
from pipeline.agents.qwen_code.qwen_judge import QwenJudge
from pipeline.agents.qwen_code.qwen_session import QwenSession
from pipeline.formats.line_guard import LineLimits
from pipeline.formats.qwen_code.session_analysis import analyze_session
from pipeline.formats.rewrites import RewriteKind
from pipeline.vocabulary import SourceFormat

__all__ = ["QWEN_CODE", "QwenFormat"]


@dataclass(frozen=True, slots=True)
class QwenFormat:
    """Qwen Code's sessions: its own estimate of what it sends (its `/context` rule: texts by their
    characters, ASCII / 4 and 1.5 per other; calls and responses by their JSON), and Qwen's
    tokenizer beside it."""

    format: SourceFormat = SourceFormat.QWEN_CODE
    estimator: str = "qwen-chars"  # Qwen Code's estimateConversationTokens, part by part
    tokenizer: str | None = "qwen"  # the tokenizer of the models Qwen Code runs by default
    compressed_sessions: bool = False  # Qwen Code keeps plain .jsonl files
    rewrites: frozenset[RewriteKind] = frozenset({RewriteKind.REPAIR})
    judge: QwenJudge = field(default_factory=QwenJudge)

    def read(self, data: bytes, path: PurePath | None, limits: LineLimits) -> QwenSession:
        return QwenSession(analyze_session(data, limits, path))


QWEN_CODE: Final[ContextFormat] = QwenFormat()
"""The plug-in (typed as the seam's protocol, so the type checker holds it to every member)."""
