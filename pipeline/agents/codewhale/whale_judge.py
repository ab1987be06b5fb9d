"""CodeWhale as the judge of its sessions' compactions: the texts it must never send, and the
verdict on what it sends when it resumes an original and its candidate (`proof/codewhale`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.agents.codewhale.whale_session import CodewhaleSession
from pipeline.agents.protocol import ContextSession, JudgedPair, PartitionSets
from pipeline.formats.line_guard import LineLimits
from pipeline.installed import ResumeJudge
from pipeline.proof.codewhale.whale_client import CODEWHALE_CLIENT
from pipeline.proof.codewhale.whale_excluded import session_exclusions
from pipeline.proof.verdict import ExcludedText
from pipeline.report.resume_check import ResumeCheckSection, SentSizes, SizeSection
from pipeline.vocabulary import Verdict

if TYPE_CHECKING:  # its capture server (http.server) is loaded when a pair is judged
    from pipeline.proof.codewhale.whale_resume import CodewhaleVerdict, SentSide

__all__ = ["CodewhaleJudge"]


def _size(side: SentSide) -> SizeSection:
    return SizeSection(
        messages=side.messages, characters=side.characters, estimated_tokens=side.characters // 4
    )


@dataclass(frozen=True, slots=True)
class _Judged:
    verdict: CodewhaleVerdict

    @property
    def ok(self) -> bool:
        return self.verdict.ok

    def section(self, elapsed_ms: float) -> ResumeCheckSection:
        """The report's `resume_check`: CodeWhale's chat messages counted as blocks."""
        before, after = _size(self.verdict.original), _size(self.verdict.compacted)
        reduction = round(1 - after.characters / before.characters, 4) if before.characters else None
        return ResumeCheckSection(
            verdict=Verdict.MATCH if self.ok else Verdict.MISMATCH,
            differences=list(self.verdict.differences),
            summary_blocks=1,
            kept_blocks=max(0, after.messages - 1),
            sent=SentSizes(original=before, compacted=after),
            characters_reduction=reduction,
            elapsed_ms=elapsed_ms,
        )


@dataclass(frozen=True, slots=True)
class CodewhaleJudge:
    """CodeWhale resumes the original and the candidate; the candidate holds when it sends its
    checkpoint, then a verbatim suffix of what it sends for the original, and no excluded text."""

    @property
    def client(self) -> ResumeJudge:
        return CODEWHALE_CLIENT

    def excluded(
        self, session: ContextSession, sets: PartitionSets, candidate: bytes, min_chars: int
    ) -> tuple[ExcludedText, ...]:
        assert isinstance(session, CodewhaleSession), "the CodeWhale judge reads CodeWhale sessions only"
        return session_exclusions(session.analysis, sets, candidate, min_chars)

    def prove(
        self,
        original: Path,
        candidate: Path,
        *,
        executable: Path,
        timeout: float,
        limits: LineLimits,
        excluded: Sequence[ExcludedText],
        summaries: Sequence[str] | None,
    ) -> JudgedPair:
        from pipeline.proof.codewhale.whale_resume import prove_codewhale_resume  # noqa: PLC0415 - on use only

        return _Judged(
            prove_codewhale_resume(
                original,
                candidate,
                executable=executable,
                timeout=timeout,
                excluded=excluded,
                summaries=summaries,
            )
        )
