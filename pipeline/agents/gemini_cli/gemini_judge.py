"""The real Gemini CLI as the judge of a session's compaction (`proof/gemini_cli`), as the seam asks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pipeline.agents.gemini_cli.gemini_session import GeminiSession
from pipeline.agents.protocol import ContextSession, PartitionSets
from pipeline.formats.line_guard import LineLimits
from pipeline.installed import ResumeJudge
from pipeline.proof.context import ContextSize
from pipeline.proof.gemini_cli.excluded_text import chat_exclusions
from pipeline.proof.gemini_cli.gemini_run import require_gemini_cli
from pipeline.proof.gemini_cli.gemini_verdict import GeminiVerdict, prove_gemini_resume
from pipeline.proof.verdict import ExcludedText
from pipeline.report.resume_check import ResumeCheckSection, SentSizes, SizeSection
from pipeline.settings import VerifySettings
from pipeline.vocabulary import SourceFormat

__all__ = ["GeminiCliClient", "GeminiJudge", "gemini_check_section"]


@dataclass(frozen=True, slots=True)
class GeminiCliClient:
    """Where Gemini CLI is: the path given, `$COMPACTION_GEMINI_CLI`, or the pinned build."""

    source_format: SourceFormat = SourceFormat.GEMINI_CLI
    name: str = "Gemini CLI"
    flag: str = ""  # no flag of its own: `--judge gemini-cli=PATH` or `[judges]` names it
    install_hint: str = "scripts/install-gemini-cli installs it, [judges] gemini-cli names one"
    not_installed: str = "GeminiCliNotInstalled"

    def named(self, verify: VerifySettings) -> str:
        """No `[verify]` key names Gemini CLI: `[judges]`, its environment variable or the pinned build."""
        return ""

    def locate(self, given: Path | None) -> Path:
        return require_gemini_cli(given)


def _size(side: ContextSize | None) -> SizeSection | None:
    if side is None:
        return None
    return SizeSection(
        messages=side.messages, characters=side.characters, estimated_tokens=side.estimated_tokens
    )


def gemini_check_section(verdict: GeminiVerdict, elapsed_ms: float) -> ResumeCheckSection:
    """The report section of a Gemini CLI proof: contents counted as blocks."""
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
    verdict: GeminiVerdict

    @property
    def ok(self) -> bool:
        return self.verdict.ok

    def section(self, elapsed_ms: float) -> ResumeCheckSection:
        return gemini_check_section(self.verdict, elapsed_ms)


@dataclass(frozen=True, slots=True)
class GeminiJudge:
    """Gemini CLI resumes the original and the candidate; the candidate holds when it sends the
    summary and acknowledgement, then a verbatim suffix of the original's contents, every call
    answered, no excluded text."""

    @property
    def client(self) -> ResumeJudge:
        return GeminiCliClient()

    def excluded(
        self, session: ContextSession, sets: PartitionSets, candidate: bytes, min_chars: int
    ) -> tuple[ExcludedText, ...]:
        assert isinstance(session, GeminiSession), "the Gemini CLI judge reads Gemini CLI sessions only"
        return chat_exclusions(session.analysis, sets, candidate, min_chars)

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
        verdict = prove_gemini_resume(
            original, candidate, script=executable, timeout=timeout, excluded=excluded, summaries=summaries
        )
        return _Judged(verdict)
