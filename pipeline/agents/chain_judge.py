"""The seam of the active-chain formats' judge (`agents/registry.CHAIN_FORMATS`): the client that
proves a compaction (the compress gate), a pair of files (`verify-resume`) and a damage repair.

The active-chain jobs (`jobs/front.Analysis` and after) run it through `agents/registry.chain_judge`
and never name it; its failures are its own `JudgeError`s, which carry their report code and
their `verify-resume` exit. The context formats' judge is `agents/protocol.ContextJudge`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pipeline.proof.repair_verdict import RepairJudge
from pipeline.proof.verdict import ExcludedText
from pipeline.report.resume_check import JudgedResume, Rejection, SentSide

if TYPE_CHECKING:  # the shapes only: importing the registry loads no reader, repair or client
    from pipeline.core.index import LineIndex
    from pipeline.core.partition import Partition
    from pipeline.core.topology.select import Topology
    from pipeline.installed import ResumeJudge
    from pipeline.read.load import SourceBytes

__all__ = ["ChainJudge", "ChainSession", "ChainSide", "ChainVerdict", "SentExclusions"]

SentExclusions = Callable[[str], Sequence[ExcludedText]]
"""The excluded texts a compacted context sends, given its strings joined by NUL."""


class ChainSession(Protocol):
    """An active-chain session as the jobs opened it (`jobs/front.Analysis`): what the judge reads."""

    @property
    def path(self) -> Path: ...
    @property
    def source(self) -> SourceBytes: ...
    @property
    def index(self) -> LineIndex: ...
    @property
    def topology(self) -> Topology: ...


class ChainSide(SentSide, Protocol):
    """What one resume sent, as `verify-resume` prints it: its blocks counted too."""

    @property
    def blocks(self) -> Sequence[object]: ...


class ChainVerdict(JudgedResume, Protocol):
    """The judge's verdict on an original and its compaction (content-free)."""

    @property
    def original(self) -> ChainSide | None: ...
    @property
    def compacted(self) -> ChainSide | None: ...
    @property
    def compacted_rejected(self) -> Sequence[Rejection]: ...


class ChainJudge(RepairJudge, Protocol):
    """The active chain's client as judge: where it is, and how it resumes a pair or a repair."""

    @property
    def client(self) -> ResumeJudge:
        """Its name, its flag, and where it is found (`locate`)."""
        ...

    @property
    def not_run_note(self) -> str:
        """What the gate's report says when the client is found nowhere."""
        ...

    def find(self) -> Path | None:
        """The client in the usual places (the environment, the pinned build, PATH), or None."""
        ...

    def version(self, executable: Path) -> str | None:
        """The version the client reports, or None."""
        ...

    def excluded(self, session: ChainSession, partition: Partition, min_chars: int) -> SentExclusions:
        """What finds the texts of the session's excluded records (by `partition`) that a context
        sends: the candidate must never send them."""
        ...

    def prove(
        self, original: Path, compacted: Path, *, executable: Path, timeout: float, excluded: SentExclusions
    ) -> ChainVerdict:
        """Resume both files against loopback capture servers and judge the compacted context
        against the original's. Raises the client's own `JudgeError`s."""
        ...

    def prove_candidate(
        self,
        session: ChainSession,
        partition: Partition,
        candidate: Path,
        *,
        executable: Path,
        timeout: float,
        min_chars: int,
    ) -> ChainVerdict:
        """The gate's proof of a staged candidate of `session` cut by `partition` (an original the
        client cannot send whole is judged by the context it would send). Raises the client's own
        `JudgeError`s."""
        ...
