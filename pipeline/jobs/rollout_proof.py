"""The resume gate for a Codex rollout's candidate: resume the original and the candidate in the
real Codex CLI before anything is published, as `jobs/compress/proof.py` does with Claude Code.

The candidate holds when Codex sends the summary followed by a verbatim suffix of what it sends
for the original, every call answered, and no text of an excluded record (an item before the
newest compaction or dropped by a rollback, a damaged line, an event before the cut) that the
original does not send (`proof/codex_excluded.py` finds those texts). Both sides are
resumed from the bytes the job read (in place: the frozen bytes, not the live file), each staged
under the source's name, since Codex finds a thread by its file name. Without Codex the section
says the gate could not run: `verify_resume = "on"` refuses the candidate, `auto` publishes it
unproven.
Loaded only by rollouts that run the gate: the client starts processes and a server.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Final

from pipeline.formats.claude_code.line_guard import LineLimits
from pipeline.formats.codex.analysis import RolloutAnalysis, compress_sets
from pipeline.installed import CodexError, CodexNotInstalled
from pipeline.jobs.compress.options import CompressOptions
from pipeline.jobs.verify_codex_resume import codex_check_section
from pipeline.proof.codex_excluded import rollout_exclusions
from pipeline.proof.codex_prove import prove_codex_resume
from pipeline.read.load import SourceBytes
from pipeline.reasons import Reason, Refusal
from pipeline.report.resume_check import ResumeCheckSection, judge_not_found, resume_check_failed
from pipeline.vocabulary import ResumeGate

__all__ = ["NOT_RUN_NOTE", "prove_rollout"]

NOT_RUN_NOTE: Final = (
    "Codex not found, so the resume gate could not run (scripts/install-codex installs it, "
    "[verify] codex names one)"
)


def _elapsed_ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)


def _staged(scratch: Path, side: str, name: str, data: bytes) -> Path:
    folder = scratch / side
    folder.mkdir()
    (folder / name).write_bytes(data)
    return folder / name


def prove_rollout(
    source: SourceBytes,
    analysis: RolloutAnalysis,
    cut: tuple[int, str],
    candidate: bytes,
    options: CompressOptions,
) -> tuple[ResumeCheckSection, Reason | None]:
    """The proof's report section, and a refusal unless Codex resumes the candidate as it should
    (`cut`: the candidate's cut line and its summary's text)."""
    cut_line, summary = cut
    if options.codex_gate is None:
        required = options.compress.verify_resume is ResumeGate.ON
        missing = judge_not_found(CodexNotInstalled.__name__, NOT_RUN_NOTE)
        return missing, Reason(Refusal.RESUME_CHECK_FAILED) if required else None
    sets = compress_sets(analysis, cut_line)
    excluded = rollout_exclusions(analysis, sets, candidate, options.verify.min_excluded_text_chars)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="compaction-rollout-") as scratch:
        name = source.path.name.removesuffix(".zst")  # staged plain: what Codex reads of a cold rollout
        original = _staged(Path(scratch), "original", name, source.data)
        compacted = _staged(Path(scratch), "candidate", name, candidate)
        try:
            verdict = prove_codex_resume(
                original,
                compacted,
                executable=Path(options.codex_gate),
                timeout=options.verify.resume_timeout_seconds,
                limits=LineLimits.of(options.sweep),
                excluded=excluded,
                summaries=(summary,),
            )
        except CodexError as exc:  # every way Codex fails is one of its own errors (`installed`)
            return resume_check_failed(exc.code, _elapsed_ms(started)), Reason(Refusal.RESUME_CHECK_FAILED)
    check = codex_check_section(verdict, _elapsed_ms(started))
    # Not only a mismatch: an original Codex cannot resume is a disagreement with the reader,
    # which found it resumable, so nothing is published on it either.
    return check, None if verdict.ok else Reason(Refusal.RESUME_MISMATCH)
