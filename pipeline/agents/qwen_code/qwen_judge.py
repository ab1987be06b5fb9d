"""Qwen Code as the judge of a session's compaction: where it is, the texts it must never send,
and the verdict on what it sends for an original and its candidate (`proof/qwen_code`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pipeline.agents.item_judging import JudgedItems
from pipeline.agents.protocol import ContextSession, PartitionSets
from pipeline.agents.qwen_code.qwen_session import QwenSession
from pipeline.formats.line_guard import LineLimits
from pipeline.installed import ResumeJudge
from pipeline.proof.qwen_code.qwen_excluded import session_exclusions
from pipeline.proof.qwen_code.qwen_install import (
    INSTALL_HINT,
    QwenCode,
    QwenCodeNotInstalled,
    qwen_code_at,
    require_qwen_code,
)
from pipeline.proof.verdict import ExcludedText
from pipeline.settings import VerifySettings
from pipeline.vocabulary import SourceFormat

__all__ = ["QwenClient", "QwenJudge"]


@dataclass(frozen=True, slots=True)
class QwenClient:
    """The pinned Qwen Code as a `ResumeJudge`: its script is what `locate` returns (the Node.js
    22 that runs it is found beside, `$COMPACTION_NODE22` or the checkout's `.cache/node22`)."""

    source_format: SourceFormat = SourceFormat.QWEN_CODE
    name: str = "Qwen Code"
    flag: str = ""  # no flag of its own: `--judge` names it
    install_hint: str = INSTALL_HINT
    not_installed: str = "QwenCodeNotInstalled"

    def named(self, verify: VerifySettings) -> str:
        return ""  # no [verify] key of its own yet

    def locate(self, given: Path | None) -> Path:
        return self.runtime(given).script

    def runtime(self, given: Path | None) -> QwenCode:
        """Node.js and the script, `given` naming the script or its npm prefix."""
        if given is None:
            return require_qwen_code()
        found = qwen_code_at(given)
        if found is None:
            raise QwenCodeNotInstalled((str(given),))
        return found


@dataclass(frozen=True, slots=True)
class QwenJudge:
    """Qwen Code resumes the original and the candidate; the candidate holds when it sends the
    summary, then a verbatim suffix of the original's history, every call answered, no excluded text."""

    client: ResumeJudge = QwenClient()

    def excluded(
        self, session: ContextSession, sets: PartitionSets, candidate: bytes, min_chars: int
    ) -> tuple[ExcludedText, ...]:
        assert isinstance(session, QwenSession), "the Qwen Code judge reads Qwen Code sessions only"
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
        from pipeline.proof.qwen_code.qwen_prove import prove_qwen_resume  # noqa: PLC0415 - on use only

        qwen = QwenClient().runtime(executable)
        verdict = prove_qwen_resume(
            original,
            candidate,
            qwen=qwen,
            timeout=timeout,
            limits=limits,
            excluded=excluded,
            summaries=summaries,
        )
        return JudgedItems(verdict)
