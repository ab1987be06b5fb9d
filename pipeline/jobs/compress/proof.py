"""The resume gate: resume the source and the candidate in Claude Code before writing anything.

A mismatch, or Claude Code failing to run, refuses the session; so does a candidate whose request
the capture server answers with the API's 400 (`resume-api-rejected`, with the rule it breaks).
The original's own 400 is no failure: it is the damage the compaction repairs, recorded in the
report's `resume_check.api_rejected`, and its context is judged as sent. An original whose chain
is over the API's request limit cannot be sent whole (Claude Code gives up after many 413s, or
trims and compacts it): its context is the one `pipeline.proof.claude_code.expected` models (held to what
Claude Code sends by the golden tests), and only the candidate is resumed. Loaded only by
sessions that run the gate: the client starts processes and a server.
"""

from __future__ import annotations

import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Final

from pipeline.core.partition import Partition
from pipeline.jobs.compress.options import CompressOptions
from pipeline.jobs.compress.stages import Stop
from pipeline.jobs.front import Analysis
from pipeline.proof.claude_code.capture import MAX_REQUEST_BYTES
from pipeline.proof.claude_code.client import ClaudeCodeError, ClaudeCodeNotInstalled
from pipeline.proof.claude_code.exclusions import sent_exclusions
from pipeline.proof.claude_code.expected import modelled_context
from pipeline.proof.claude_code.model import DEFAULT_MODEL, resumed_model
from pipeline.proof.claude_code.prove import ProofOptions, prove_resume
from pipeline.proof.claude_code.sent_context import SentContext
from pipeline.reasons import Reason, Refusal
from pipeline.report.resume_check import (
    ResumeCheckSection,
    judge_not_found,
    resume_check_failed,
    resume_check_section,
)
from pipeline.vocabulary import PartitionSet, SessionStatus, Verdict

__all__ = ["NOT_RUN_NOTE", "prove_candidate"]

NOT_RUN_NOTE: Final = (
    "Claude Code not found, so the resume gate could not run (scripts/install-claude-code installs "
    "it, --claude names one)"
)


def _elapsed_ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)


# Chain lines modelled before the kept part, so the folding of messages at the model's start
# (a streamed message split by tool results) never reaches the blocks compared.
_MODEL_MARGIN_LINES = 256


def _modelled_original(analysis: Analysis, partition: Partition) -> SentContext | None:
    """The original's modelled context when its chain is over the API's request limit, else None."""
    chain, index = analysis.topology.chain, analysis.index
    if sum(index.lengths[line - 1] for line in chain) <= MAX_REQUEST_BYTES:
        return None
    kept = partition[PartitionSet.RAW_KEEP].lines
    first = next((at for at, line in enumerate(chain) if line in kept), len(chain))
    keep_thinking = resumed_model(analysis.path) != DEFAULT_MODEL
    suffix = chain[max(0, first - _MODEL_MARGIN_LINES) :]
    return modelled_context(analysis.source.data, index, suffix, keep_thinking=keep_thinking)


def prove_candidate(
    analysis: Analysis, partition: Partition, candidate: bytes, options: CompressOptions
) -> tuple[ResumeCheckSection, Stop | None]:
    """The proof's report section, and a refusal unless Claude Code resumes both alike.

    Called without Claude Code (found nowhere: the command line resolved it once) only when the
    gate is `on`: the section says the gate could not run, as for a Codex rollout without Codex,
    and the candidate is refused.
    """
    if options.claude is None:
        missing = judge_not_found(ClaudeCodeNotInstalled.__name__, NOT_RUN_NOTE)
        return missing, Stop(SessionStatus.REFUSED, (Reason(Refusal.RESUME_CHECK_FAILED),))
    verify = options.verify
    excluded = partial(
        sent_exclusions,
        analysis.source.data,
        analysis.index,
        partition,
        min_chars=verify.min_excluded_text_chars,
    )
    proof = ProofOptions(options.claude, verify.resume_timeout_seconds, verify.min_excluded_text_chars)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="compaction-candidate-") as scratch:
        staged = Path(scratch) / analysis.path.name
        staged.write_bytes(candidate)
        try:
            modelled = _modelled_original(analysis, partition)
            verdict = prove_resume(analysis.path, staged, proof, excluded=excluded, modelled=modelled)
        except ClaudeCodeError as exc:
            failed = resume_check_failed(exc.code, _elapsed_ms(started))
            return failed, Stop(SessionStatus.REFUSED, (Reason(Refusal.RESUME_CHECK_FAILED),))
    check = resume_check_section(verdict, _elapsed_ms(started))
    if verdict.compacted_rejected:
        rule = verdict.compacted_rejected[0].rule
        return check, Stop(SessionStatus.REFUSED, (Reason(Refusal.RESUME_API_REJECTED, rule),))
    if verdict.verdict is Verdict.MISMATCH:
        return check, Stop(SessionStatus.REFUSED, (Reason(Refusal.RESUME_MISMATCH),))
    return check, None
