"""The Codex CLI as the judge of a rollout's compaction: the texts it must never send, and the
verdict on what it sends for an original and its candidate (`proof/codex_*`), as the seam asks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pipeline.agents.codex.session import CodexSession
from pipeline.agents.protocol import ContextSession, PartitionSets
from pipeline.formats.line_guard import LineLimits
from pipeline.installed import JUDGES, ResumeJudge
from pipeline.proof.codex_excluded import rollout_exclusions
from pipeline.proof.codex_prove import prove_codex_resume
from pipeline.proof.codex_verdict import CodexVerdict
from pipeline.proof.context import ContextSize
from pipeline.proof.verdict import ExcludedText
from pipeline.report.resume_check import ResumeCheckSection, SentSizes, SizeSection
from pipeline.vocabulary import SourceFormat

__all__ = ["CodexJudge", "codex_check_section"]


def _size(side: ContextSize | None) -> SizeSection | None:
    if side is None:
        return None
    return SizeSection(
        messages=side.messages, characters=side.characters, estimated_tokens=side.estimated_tokens
    )


def codex_check_section(verdict: CodexVerdict, elapsed_ms: float) -> ResumeCheckSection:
    """The report section of a Codex proof: Claude Code's shape, items counted as blocks."""
    before, after = verdict.original, verdict.compacted
    reduction = None
    if before is not None and after is not None and before.characters:
        reduction = round(1 - after.characters / before.characters, 4)
    return ResumeCheckSection(
        verdict=verdict.verdict,
        differences=list(verdict.differences),
        notes=list(verdict.notes),
        summary_blocks=verdict.summary_items,
        kept_blocks=verdict.kept_items,
        sent=SentSizes(original=_size(before), compacted=_size(after)),
        characters_reduction=reduction,
        elapsed_ms=elapsed_ms,
    )


@dataclass(frozen=True, slots=True)
class _Judged:
    verdict: CodexVerdict

    @property
    def ok(self) -> bool:
        return self.verdict.ok

    def section(self, elapsed_ms: float) -> ResumeCheckSection:
        return codex_check_section(self.verdict, elapsed_ms)


@dataclass(frozen=True, slots=True)
class CodexJudge:
    """Codex resumes the original and the candidate; the candidate holds when it sends the summary,
    then a verbatim suffix of the original's context, every call answered, no excluded text."""

    @property
    def client(self) -> ResumeJudge:
        return JUDGES[SourceFormat.CODEX]

    def excluded(
        self, session: ContextSession, sets: PartitionSets, candidate: bytes, min_chars: int
    ) -> tuple[ExcludedText, ...]:
        assert isinstance(session, CodexSession), "the Codex judge reads Codex sessions only"
        return rollout_exclusions(session.analysis, sets, candidate, min_chars)

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
    ) -> _Judged:
        verdict = prove_codex_resume(
            original,
            candidate,
            executable=executable,
            timeout=timeout,
            limits=limits,
            excluded=excluded,
            summaries=summaries,
        )
        return _Judged(verdict)
