"""The whole pi resume proof: resume a session and its compaction in pi, judge the pair.

The summary texts come from the candidate's latest `compaction` entry on its branch, read by the
pi format's reader; the resume gate, which wrote the summary, passes it instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pipeline.formats.line_guard import LineLimits
from pipeline.formats.pi.branch import active_branch
from pipeline.formats.pi.session_decode import decode_session
from pipeline.proof.item_verdict import ItemVerdict
from pipeline.proof.pi.pi_process import PiInstallation
from pipeline.proof.pi.pi_resume import resume_pi
from pipeline.proof.pi.pi_verdict import judge_pi
from pipeline.proof.verdict import ExcludedText

__all__ = ["compaction_summaries", "prove_pi_resume"]


def compaction_summaries(session: Path, limits: LineLimits) -> tuple[str, ...]:
    """The summary of the latest compaction on the session's active branch, if it has one."""
    compaction = active_branch(decode_session(session.read_bytes(), limits)).compaction
    summary = compaction.record.get("summary") if compaction is not None else None
    return (summary,) if isinstance(summary, str) and summary.strip() else ()


def prove_pi_resume(
    original: Path,
    compacted: Path,
    *,
    pi: PiInstallation,
    timeout: float,
    limits: LineLimits,
    excluded: Sequence[ExcludedText] = (),
    summaries: Sequence[str] | None = None,
) -> ItemVerdict:
    """Resume both files in pi and judge what it sends (raises PiError when pi fails)."""
    before = resume_pi(original, pi=pi, timeout=timeout)
    after = resume_pi(compacted, pi=pi, timeout=timeout)
    return judge_pi(
        before.context if before.resumed else None,
        after.context if after.resumed else None,
        summaries=compaction_summaries(compacted, limits) if summaries is None else summaries,
        excluded=excluded,
    )
