"""One session's damage repair, planned (`core.session_repair`) and proven by a judge.

The judge (`proof.repair_verdict.RepairJudge`: the client of the session's format, which
`agents/registry.py` hands out) resumes copies of the damaged and the repaired bytes in a scratch
directory (never the live file) and is the one who says whether the repair may be published:
proven, or a file its client resumes in neither form (a subagent's sidechain), or no client at
all, which the report names as unproven. A repair the client shows to be wrong (the API still
rejects it, a record is lost) is refused. It sits with the proof, below `publish`, because the
in-place pass builds candidates with it; nothing here names an agent.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pipeline.core.session_repair import (
    RepairAction,
    SessionRepairOptions,
    SessionRepairPlan,
    plan_session_repair,
)
from pipeline.installed import JudgeError
from pipeline.proof.repair_verdict import RepairJudge, RepairProof, RepairVerdict

__all__ = ["ACCEPTED", "DamageRepair", "ProofSetup", "repair_session"]

ACCEPTED: Final = frozenset({RepairVerdict.PROVEN, RepairVerdict.NOT_RESUMABLE, RepairVerdict.UNPROVEN})


@dataclass(frozen=True, slots=True)
class ProofSetup:
    """Which judge proves repairs, and its client (None: none is installed, repairs are unproven)."""

    executable: Path | None
    timeout_seconds: float
    judge: RepairJudge


@dataclass(frozen=True, slots=True)
class DamageRepair:
    """The plan, and the judge's verdict on it (None when there was nothing to repair)."""

    plan: SessionRepairPlan
    proof: RepairProof | None

    @property
    def accepted(self) -> bool:
        """A repair to publish: planned, and not shown wrong by the judge."""
        return self.plan.changed and self.proof is not None and self.proof.verdict in ACCEPTED


def _ids(plan: SessionRepairPlan, action: RepairAction) -> frozenset[str]:
    return frozenset(i for r in plan.receipts if r.action is action for i in r.ids)


def _proof(data: bytes, plan: SessionRepairPlan, name: str, setup: ProofSetup, scratch: Path) -> RepairProof:
    if setup.executable is None or plan.repaired is None:
        return RepairProof(RepairVerdict.UNPROVEN)
    with tempfile.TemporaryDirectory(prefix="repair-proof-", dir=scratch, ignore_cleanup_errors=True) as made:
        damaged, repaired = Path(made) / "damaged" / name, Path(made) / "repaired" / name
        for path, content in ((damaged, data), (repaired, plan.repaired)):
            path.parent.mkdir(mode=0o700)
            path.write_bytes(content)
        try:
            return setup.judge.prove_repair(
                damaged,
                repaired,
                executable=setup.executable,
                timeout=setup.timeout_seconds,
                dropped=_ids(plan, RepairAction.DROP_RESULT),
                reshaped=_ids(plan, RepairAction.DROP_READ_PAGES),
            )
        except JudgeError:  # the client failed or timed out: no verdict, nothing published
            return RepairProof(RepairVerdict.ERROR)


def repair_session(
    data: bytes, name: str, options: SessionRepairOptions, setup: ProofSetup, scratch: Path
) -> DamageRepair:
    """The repair of one session's bytes (`name`: its file name), proven when it changes anything."""
    plan = plan_session_repair(data, options)
    if not plan.changed:
        return DamageRepair(plan, None)
    return DamageRepair(plan, _proof(data, plan, name, setup, scratch))
