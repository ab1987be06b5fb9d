"""The damage repair job through its judge: what the job makes of each thing a judge can say,
with a stand-in judge (no client runs), and the registry's judge of the active chain."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pipeline.agents.registry import (
    CHAIN_FORMATS,
    CHAIN_JUDGES,
    DAMAGE_REPAIR_FORMAT,
    RESUME_JUDGES,
    chain_judge,
)
from pipeline.core.session_repair import SessionRepairOptions
from pipeline.core.topology.select import AUTO
from pipeline.installed import JudgeError
from pipeline.proof.damage_repair import ProofSetup, repair_session
from pipeline.proof.repair_verdict import RepairProof, RepairVerdict
from pipeline.testing.fuzz import Mutation, plant, result_lines
from pipeline.testing.settings import LIMITS
from pipeline.vocabulary import SourceFormat
from tests.publish.live.test_read_pages_repair import session

OPTIONS = SessionRepairOptions(AUTO, LIMITS, relink=False, max_rounds=100, read_pages=False)


class _Failed(JudgeError):
    """A judge's own failure (its client crashed or timed out)."""


@dataclass
class _Judge:
    """Says `verdict`, or fails; records what it was asked to judge."""

    verdict: RepairVerdict | None
    asked: list[tuple[bytes, bytes]] = field(default_factory=list)

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
        self.asked.append((damaged.read_bytes(), repaired.read_bytes()))
        if self.verdict is None:
            raise _Failed("the client failed")
        return RepairProof(self.verdict)


def _damaged() -> bytes:
    data = session().to_bytes()
    return plant(data, Mutation.DROPPED_RESULT, result_lines(data)[0])


def test_the_judge_resumes_the_damaged_and_the_repaired_bytes_and_its_verdict_decides(tmp_path: Path) -> None:
    data = _damaged()
    judge = _Judge(RepairVerdict.PROVEN)
    job = repair_session(data, "s.jsonl", OPTIONS, ProofSetup(Path("/client"), 1.0, judge), tmp_path)
    assert job.plan.repaired is not None and job.accepted
    assert judge.asked == [(data, job.plan.repaired)]
    refuted = _Judge(RepairVerdict.RECORDS_LOST)
    refused = repair_session(data, "s.jsonl", OPTIONS, ProofSetup(Path("/client"), 1.0, refuted), tmp_path)
    assert refused.proof == RepairProof(RepairVerdict.RECORDS_LOST) and not refused.accepted


def test_a_judge_failure_is_an_error_verdict_and_no_client_is_unproven(tmp_path: Path) -> None:
    data = _damaged()
    failed = repair_session(
        data, "s.jsonl", OPTIONS, ProofSetup(Path("/client"), 1.0, _Judge(None)), tmp_path
    )
    assert failed.proof == RepairProof(RepairVerdict.ERROR) and not failed.accepted
    never = _Judge(RepairVerdict.PROVEN)
    unproven = repair_session(data, "s.jsonl", OPTIONS, ProofSetup(None, 1.0, never), tmp_path)
    assert unproven.proof == RepairProof(RepairVerdict.UNPROVEN) and unproven.accepted
    assert never.asked == []


def test_nothing_to_repair_asks_no_judge(tmp_path: Path) -> None:
    judge = _Judge(RepairVerdict.PROVEN)
    job = repair_session(
        session().to_bytes(), "s.jsonl", OPTIONS, ProofSetup(Path("/c"), 1.0, judge), tmp_path
    )
    assert job.proof is None and not job.accepted and judge.asked == []


def test_each_chain_format_has_its_judge_and_no_other_format_has_one() -> None:
    assert set(CHAIN_JUDGES) == set(CHAIN_FORMATS)
    for source_format, judge in CHAIN_JUDGES.items():
        assert chain_judge(source_format) is judge
        assert judge.client is RESUME_JUDGES[source_format]  # one client per format, gate and judge alike
    for other in set(SourceFormat) - CHAIN_FORMATS:  # never judged as a chain format's session
        with pytest.raises(ValueError, match="not an active-chain format"):
            chain_judge(other)
    assert DAMAGE_REPAIR_FORMAT in CHAIN_FORMATS  # the repair command's judge is a chain judge
