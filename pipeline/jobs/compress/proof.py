"""The resume gate: resume the source and the candidate in the session's own client (its format's
judge, `agents/registry.chain_judge`) before writing anything.

A mismatch, or the client failing to run, refuses the session; so does a candidate whose request
the capture server answers with the API's 400 (`resume-api-rejected`, with the rule it breaks).
The original's own 400 is no failure: it is the damage the compaction repairs, recorded in the
report's `resume_check.api_rejected`, and its context is judged as sent. An original the client
cannot send whole is judged by the context the judge models for it (`ChainJudge.prove_candidate`).
Loaded only by sessions that run the gate: the client starts processes and a server.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from pipeline.agents.registry import chain_judge
from pipeline.core.partition import Partition
from pipeline.installed import JudgeError
from pipeline.jobs.compress.options import CompressOptions
from pipeline.jobs.compress.stages import Stop
from pipeline.jobs.front import Analysis
from pipeline.reasons import Reason, Refusal
from pipeline.report.resume_check import (
    ResumeCheckSection,
    judge_not_found,
    resume_check_failed,
    resume_check_section,
)
from pipeline.vocabulary import SessionStatus, Verdict

__all__ = ["prove_candidate"]


def _elapsed_ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)


def prove_candidate(
    analysis: Analysis, partition: Partition, candidate: bytes, options: CompressOptions
) -> tuple[ResumeCheckSection, Stop | None]:
    """The proof's report section, and a refusal unless the client resumes both alike.

    Called without the client (found nowhere: the command line resolved it once) only when the
    gate is `on`: the section says the gate could not run, as for a Codex rollout without Codex,
    and the candidate is refused.
    """
    judge = chain_judge(analysis.format)
    executable = options.judges.get(analysis.format)
    if executable is None:
        missing = judge_not_found(judge.client.not_installed, judge.not_run_note)
        return missing, Stop(SessionStatus.REFUSED, (Reason(Refusal.RESUME_CHECK_FAILED),))
    verify = options.verify
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="compaction-candidate-") as scratch:
        staged = Path(scratch) / analysis.path.name
        staged.write_bytes(candidate)
        try:
            verdict = judge.prove_candidate(
                analysis,
                partition,
                staged,
                executable=Path(executable),
                timeout=verify.resume_timeout_seconds,
                min_chars=verify.min_excluded_text_chars,
            )
        except JudgeError as exc:  # the client's own code (`installed`)
            failed = resume_check_failed(exc.code, _elapsed_ms(started))
            return failed, Stop(SessionStatus.REFUSED, (Reason(Refusal.RESUME_CHECK_FAILED),))
    check = resume_check_section(verdict, _elapsed_ms(started))
    if verdict.compacted_rejected:
        rule = verdict.compacted_rejected[0].rule
        return check, Stop(SessionStatus.REFUSED, (Reason(Refusal.RESUME_API_REJECTED, rule),))
    if verdict.verdict is Verdict.MISMATCH:
        return check, Stop(SessionStatus.REFUSED, (Reason(Refusal.RESUME_MISMATCH),))
    return check, None
