"""The whole Qwen Code resume proof: resume a session and its compaction in Qwen Code, judge the pair.

The summary texts come from the compacted session's compression record (the first user content
of its newest `chat_compression`'s history), read by the Qwen Code format's reader; the gate,
which wrote the summary, passes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pipeline.formats.line_guard import LineLimits
from pipeline.formats.qwen_code.session_analysis import analyze_session
from pipeline.formats.qwen_code.session_records import PartKind
from pipeline.proof.item_verdict import ItemVerdict
from pipeline.proof.qwen_code.qwen_install import QwenCode
from pipeline.proof.qwen_code.qwen_verdict import judge_qwen
from pipeline.proof.qwen_code.resume_run import resume_qwen_code
from pipeline.proof.verdict import ExcludedText

__all__ = ["compression_summaries", "prove_qwen_resume"]


def compression_summaries(session: Path, limits: LineLimits) -> tuple[str, ...]:
    """The texts of the first user content of the history the session's base compression holds."""
    analysis = analyze_session(session.read_bytes(), limits)
    entries = [e for e in analysis.rebuilt.entries if e.from_compression and e.content.role == "user"]
    if not entries:
        return ()
    return tuple(p.text for p in entries[0].content.parts if p.kind is PartKind.TEXT and p.text.strip())


def prove_qwen_resume(
    original: Path,
    compacted: Path,
    *,
    qwen: QwenCode,
    timeout: float,
    limits: LineLimits,
    excluded: Sequence[ExcludedText] = (),
    summaries: Sequence[str] | None = None,
) -> ItemVerdict:
    """Resume both files in Qwen Code and judge what it sends (raises QwenCodeError if it fails)."""
    before = resume_qwen_code(original, qwen=qwen, timeout=timeout)
    after = resume_qwen_code(compacted, qwen=qwen, timeout=timeout)
    return judge_qwen(
        before.context if before.resumed else None,
        after.context if after.resumed else None,
        # Read from a file that names none: unknown (None), never "no summary" (`()`, a rewrite's).
        summaries=(compression_summaries(compacted, limits) or None) if summaries is None else summaries,
        excluded=excluded,
    )
