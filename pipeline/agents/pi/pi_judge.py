"""The real pi as the judge of a session's compaction: where it is found, the texts it must never
send, and the verdict on what it sends for an original and its candidate (`proof/pi/`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pipeline.agents.item_judging import JudgedItems
from pipeline.agents.pi.pi_session import PiContextSession
from pipeline.agents.protocol import ContextSession, PartitionSets
from pipeline.formats.line_guard import LineLimits
from pipeline.installed import ResumeJudge
from pipeline.proof.pi.pi_excluded import session_exclusions
from pipeline.proof.pi.pi_process import PI_INSTALL_HINT, installation_of, require_pi
from pipeline.proof.verdict import ExcludedText
from pipeline.settings import VerifySettings
from pipeline.vocabulary import SourceFormat

__all__ = ["PiClient", "PiJudge"]


@dataclass(frozen=True, slots=True)
class PiClient:
    """pi as a `ResumeJudge`: the install script's launcher is the executable the gate names (pi's
    entry script on the Node.js 22 beside it); `--judge pi-session=PATH` or `$COMPACTION_PI` name
    another npm prefix, launcher or entry script."""

    source_format: SourceFormat = SourceFormat.PI
    name: str = "pi"
    flag: str = ""  # pi has no flag of its own: `--judge pi=PATH` names it
    install_hint: str = PI_INSTALL_HINT
    not_installed: str = "PiNotInstalled"

    def named(self, verify: VerifySettings) -> str:
        return ""  # no [verify] key: [judges] and --judge name it

    def locate(self, given: Path | None) -> Path:
        return require_pi(given).launcher


@dataclass(frozen=True, slots=True)
class PiJudge:
    """pi resumes the original and the candidate; the candidate holds when it sends one summary
    message, then a verbatim suffix of the original's context, every call answered, no excluded text."""

    @property
    def client(self) -> ResumeJudge:
        return PiClient()

    def excluded(
        self, session: ContextSession, sets: PartitionSets, candidate: bytes, min_chars: int
    ) -> tuple[ExcludedText, ...]:
        assert isinstance(session, PiContextSession), "the pi judge reads pi sessions only"
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
    ) -> JudgedItems:
        from pipeline.proof.pi.pi_prove import prove_pi_resume  # noqa: PLC0415 - on use only

        verdict = prove_pi_resume(
            original,
            candidate,
            pi=installation_of(executable),
            timeout=timeout,
            limits=limits,
            excluded=excluded,
            summaries=summaries,
        )
        return JudgedItems(verdict)
