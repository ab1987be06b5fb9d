"""What a judge says of a damage repair (`RepairProof`), and the shape of a judge that says it
(`RepairJudge`): content-free, no agent named, light enough for the registry to import."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Protocol

__all__ = ["RepairJudge", "RepairProof", "RepairVerdict"]


class RepairVerdict(StrEnum):
    """What the judge's client made of a repaired session."""

    PROVEN = "proven"
    NOT_RESUMABLE = "not-resumable"  # the client finds no conversation in the damaged file either
    API_REJECTED = "api-rejected"  # the repaired context still breaks the API's rules
    RECORDS_LOST = "records-lost"  # the repaired context lacks blocks the damaged one sent
    NOT_RESUMED = "not-resumed"  # the client resumes the damaged file but not the repaired one
    UNPROVEN = "unproven"  # no client to ask
    ERROR = "error"  # the client failed or timed out: no verdict


@dataclass(frozen=True, slots=True)
class RepairProof:
    """The verdict and the sizes behind it (content-free)."""

    verdict: RepairVerdict
    damaged_blocks: int = 0
    repaired_blocks: int = 0
    damaged_rejected: tuple[str, ...] = ()  # API rule codes the damaged context broke
    repaired_rejected: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()  # labels of the damaged context's blocks the repaired one lacks


class RepairJudge(Protocol):
    """The client that proves a damage repair of its format's sessions."""

    def prove_repair(
        self,
        damaged: Path,
        repaired: Path,
        *,
        executable: Path,
        timeout: float,
        dropped: Collection[str],
        reshaped: Collection[str],
    ) -> RepairProof:
        """Resume both staged files and judge the repaired one's context (`dropped`: the ids whose
        results the repair dropped; `reshaped`: the calls whose input it edited). Raises the
        client's own `JudgeError` when it fails or times out."""
        ...
