"""Codex rollouts through the seam: the reader (`formats/codex`), its evidence, its report part
and the Codex CLI as judge (`proof/codex/`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePath

from pipeline.agents.codex.judge import CodexJudge
from pipeline.agents.codex.session import CodexSession
from pipeline.formats.codex.analysis import analyze_rollout
from pipeline.formats.line_guard import LineLimits
from pipeline.formats.rewrites import RewriteKind
from pipeline.vocabulary import SourceFormat

__all__ = ["CODEX", "CodexFormat"]


@dataclass(frozen=True, slots=True)
class CodexFormat:
    """Codex's rollouts: Codex's own estimate (an item's JSON bytes / 4), o200k beside it."""

    format: SourceFormat = SourceFormat.CODEX
    estimator: str = "codex-approx"  # Codex's own approx_token_count: bytes / 4
    tokenizer: str | None = "o200k"  # the tokenizer of the models Codex runs
    compressed_sessions: bool = True  # Codex archives cold rollouts as .jsonl.zst
    rewrites: frozenset[RewriteKind] = frozenset()
    judge: CodexJudge = field(default_factory=CodexJudge)

    def read(self, data: bytes, path: PurePath | None, limits: LineLimits) -> CodexSession:
        return CodexSession(analyze_rollout(data, limits))


CODEX = CodexFormat()
