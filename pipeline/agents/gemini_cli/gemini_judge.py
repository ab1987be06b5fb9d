"""The real Gemini CLI as the judge of a session's compaction (`proof/gemini_cli`), as the seam asks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pipeline.agents.gemini_cli.gemini_session import GeminiSession
from pipeline.agents.item_judging import JudgedItems
from pipeline.agents.protocol import ContextSession, PartitionSets
from pipeline.formats.line_guard import LineLimits
from pipeline.formats.rewrites import SentEdit
from pipeline.installed import ResumeJudge
from pipeline.proof.gemini_cli.excluded_text import chat_exclusions
from pipeline.proof.gemini_cli.gemini_run import require_gemini_cli
from pipeline.proof.verdict import ExcludedText
from pipeline.settings import VerifySettings
from pipeline.vocabulary import SourceFormat

__all__ = ["GeminiCliClient", "GeminiJudge"]


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


@dataclass(frozen=True, slots=True)
class GeminiJudge:
    """Gemini CLI resumes the original and the candidate; the candidate holds when it sends the
    summary and acknowledgement, then a verbatim suffix of the original's contents, every call
    answered, no excluded text (a repair: the original's contents with its declared items)."""

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
    ) -> JudgedItems:
        from pipeline.proof.gemini_cli.gemini_verdict import prove_gemini_resume  # noqa: PLC0415 - on use only

        verdict = prove_gemini_resume(
            original, candidate, script=executable, timeout=timeout, excluded=excluded, summaries=summaries
        )
        return JudgedItems(verdict)

    def prove_edits(
        self,
        original: Path,
        candidate: Path,
        *,
        executable: Path,
        timeout: float,
        limits: LineLimits,
        edits: Sequence[SentEdit],
    ) -> JudgedItems:
        """A repair's verdict: the original's history with exactly `edits` put in."""
        from pipeline.proof.gemini_cli.gemini_verdict import prove_gemini_edits  # noqa: PLC0415 - on use only

        verdict = prove_gemini_edits(
            original, candidate, script=executable, timeout=timeout, limits=limits, edits=edits
        )
        return JudgedItems(verdict)
