"""The resume gate for a candidate read through the seam: resume the original and the candidate
in the agent's own client before anything is published, as `proof.py` does with Claude Code.

The candidate holds when the client sends the summary followed by a verbatim suffix of what it
sends for the original, every call answered, and no text of an excluded record that the original
does not send (the judge's `excluded`). Both sides are resumed from the bytes the job read (in
place: the frozen bytes, not the live file), each staged under the source's name, since a client
finds a session by its file name. Without the client the section says the gate could not run:
`verify_resume = "on"` refuses the candidate, `auto` publishes it unproven.
Loaded only by sessions that run the gate: the judges start processes and servers.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from pipeline.agents.protocol import ContextFormat, ContextSession
from pipeline.formats.context_items import TailPlan
from pipeline.formats.line_guard import LineLimits
from pipeline.installed import JudgeError
from pipeline.jobs.compress.options import CompressOptions
from pipeline.read.load import SourceBytes
from pipeline.reasons import Reason, Refusal
from pipeline.report.resume_check import ResumeCheckSection, judge_not_found, resume_check_failed
from pipeline.vocabulary import ResumeGate

__all__ = ["not_run_note", "prove_context"]


def not_run_note(agent: ContextFormat) -> str:
    """Why the gate did not run, and how to give it a client."""
    client = agent.judge.client
    return f"{client.name} not found, so the resume gate could not run ({client.install_hint})"


def _elapsed_ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)


def _staged(scratch: Path, side: str, name: str, data: bytes) -> Path:
    folder = scratch / side
    folder.mkdir()
    (folder / name).write_bytes(data)
    return folder / name


def prove_context(
    source: SourceBytes,
    agent: ContextFormat,
    session: ContextSession,
    cut: tuple[TailPlan, str],
    candidate: bytes,
    options: CompressOptions,
) -> tuple[ResumeCheckSection, Reason | None]:
    """The proof's report section, and a refusal unless the client resumes the candidate as it
    should (`cut`: the candidate's plan and its summary's text)."""
    plan, summary = cut
    executable = options.judges.get(agent.format)
    if executable is None:
        required = options.compress.verify_resume is ResumeGate.ON
        missing = judge_not_found(agent.judge.client.not_installed, not_run_note(agent))
        return missing, Reason(Refusal.RESUME_CHECK_FAILED) if required else None
    sets = session.compress_sets(plan)
    excluded = agent.judge.excluded(session, sets, candidate, options.verify.min_excluded_text_chars)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="compaction-resume-") as scratch:
        name = source.path.name.removesuffix(".zst")  # staged plain: what a client reads of a cold session
        original = _staged(Path(scratch), "original", name, source.data)
        compacted = _staged(Path(scratch), "candidate", name, candidate)
        try:
            judged = agent.judge.prove(
                original,
                compacted,
                executable=Path(executable),
                timeout=options.verify.resume_timeout_seconds,
                limits=LineLimits.of(options.sweep),
                excluded=excluded,
                summaries=(summary,),
            )
        except JudgeError as exc:  # every way a client fails is one of its own errors (`installed`)
            return resume_check_failed(exc.code, _elapsed_ms(started)), Reason(Refusal.RESUME_CHECK_FAILED)
    check = judged.section(_elapsed_ms(started))
    # Not only a mismatch: an original the client cannot resume is a disagreement with the reader,
    # which found it resumable, so nothing is published on it either.
    return check, None if judged.ok else Reason(Refusal.RESUME_MISMATCH)
