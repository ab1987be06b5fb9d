"""Claude Code as the active chain's judge (`agents/chain_judge.ChainJudge`): the compress gate's
proof, `verify-resume`'s and a damage repair's, each the real Claude Code resuming staged copies
against the loopback Messages API (`proof/claude_code/`).

An original whose chain is over the API's request limit cannot be sent whole (Claude Code gives
up after many 413s, or trims and compacts it): the gate judges it by the context
`proof/claude_code/expected` models (held to what Claude Code sends by the golden tests), and only
the candidate is resumed. The client, its server and the verdict load when a proof first runs, not
with the registry: a sweep that never proves never imports them.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Final

from pipeline.installed import JUDGES, ResumeJudge, find_claude_code
from pipeline.vocabulary import PartitionSet, SourceFormat

if TYPE_CHECKING:
    from pipeline.agents.chain_judge import ChainSession, SentExclusions
    from pipeline.core.partition import Partition
    from pipeline.proof.claude_code.resume_verdict import ResumeVerdict
    from pipeline.proof.claude_code.sent_context import SentContext
    from pipeline.proof.repair_verdict import RepairProof

__all__ = ["CLAUDE_CODE_JUDGE", "ClaudeCodeJudge"]

NOT_RUN_NOTE: Final = (
    "Claude Code not found, so the resume gate could not run (scripts/install-claude-code installs "
    "it, --claude names one)"
)
# Chain lines modelled before the kept part, so the folding of messages at the model's start
# (a streamed message split by tool results) never reaches the blocks compared.
_MODEL_MARGIN_LINES: Final = 256


def _modelled_original(session: ChainSession, partition: Partition) -> SentContext | None:
    """The original's modelled context when its chain is over the API's request limit, else None."""
    from pipeline.proof.claude_code.capture import MAX_REQUEST_BYTES  # noqa: PLC0415 - on use only
    from pipeline.proof.claude_code.expected import modelled_context  # noqa: PLC0415 - on use only
    from pipeline.proof.claude_code.model import DEFAULT_MODEL, resumed_model  # noqa: PLC0415 - on use only

    chain, index = session.topology.chain, session.index
    if sum(index.lengths[line - 1] for line in chain) <= MAX_REQUEST_BYTES:
        return None
    kept = partition[PartitionSet.RAW_KEEP].lines
    first = next((at for at, line in enumerate(chain) if line in kept), len(chain))
    keep_thinking = resumed_model(session.path) != DEFAULT_MODEL
    suffix = chain[max(0, first - _MODEL_MARGIN_LINES) :]
    return modelled_context(session.source.data, index, suffix, keep_thinking=keep_thinking)


def _prove(
    original: Path,
    compacted: Path,
    executable: Path,
    timeout: float,
    excluded: SentExclusions,
    modelled: SentContext | None = None,
) -> ResumeVerdict:
    from pipeline.proof.claude_code.prove import ProofOptions, prove_resume  # noqa: PLC0415 - on use only

    options = ProofOptions(str(executable), timeout)
    return prove_resume(original, compacted, options, excluded=excluded, modelled=modelled)


@dataclass(frozen=True, slots=True)
class ClaudeCodeJudge:
    """Claude Code resumes the original and the candidate (or the damaged and the repaired file);
    its failures are `ClaudeCodeError`s."""

    not_run_note: str = NOT_RUN_NOTE

    @property
    def client(self) -> ResumeJudge:
        return JUDGES[SourceFormat.CLAUDE_CODE]

    def find(self) -> Path | None:
        return find_claude_code()

    def version(self, executable: Path) -> str | None:
        from pipeline.proof.claude_code.client import installed_version  # noqa: PLC0415 - on use only

        return installed_version(executable)

    def excluded(self, session: ChainSession, partition: Partition, min_chars: int) -> SentExclusions:
        from pipeline.proof.claude_code.exclusions import sent_exclusions  # noqa: PLC0415 - on use only

        return partial(sent_exclusions, session.source.data, session.index, partition, min_chars=min_chars)

    def prove(
        self, original: Path, compacted: Path, *, executable: Path, timeout: float, excluded: SentExclusions
    ) -> ResumeVerdict:
        return _prove(original, compacted, executable, timeout, excluded)

    def prove_candidate(
        self,
        session: ChainSession,
        partition: Partition,
        candidate: Path,
        *,
        executable: Path,
        timeout: float,
        min_chars: int,
    ) -> ResumeVerdict:
        excluded = self.excluded(session, partition, min_chars)
        modelled = _modelled_original(session, partition)
        return _prove(session.path, candidate, executable, timeout, excluded, modelled)

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
        from pipeline.proof.claude_code.repair_proof import prove_repair  # noqa: PLC0415 - on use only

        return prove_repair(
            damaged, repaired, executable=executable, timeout=timeout, dropped=dropped, reshaped=reshaped
        )


CLAUDE_CODE_JUDGE: Final = ClaudeCodeJudge()
"""The one Claude Code judge the registry hands out."""
