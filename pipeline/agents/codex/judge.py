"""The Codex CLI as the judge of a rollout's compaction: the texts it must never send, and the
verdict on what it sends for an original and its candidate (`proof/codex/`), as the seam asks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pipeline.agents.codex.session import CodexSession
from pipeline.agents.item_judging import JudgedItems
from pipeline.agents.protocol import ContextSession, PartitionSets
from pipeline.formats.line_guard import LineLimits
from pipeline.installed import JUDGES, ResumeJudge
from pipeline.proof.codex.codex_excluded import rollout_exclusions
from pipeline.proof.verdict import ExcludedText
from pipeline.vocabulary import SourceFormat

__all__ = ["CodexJudge"]


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
    ) -> JudgedItems:
        from pipeline.proof.codex.codex_prove import prove_codex_resume  # noqa: PLC0415 - on use only

        verdict = prove_codex_resume(
            original,
            candidate,
            executable=executable,
            timeout=timeout,
            limits=limits,
            excluded=excluded,
            summaries=summaries,
        )
        return JudgedItems(verdict)
