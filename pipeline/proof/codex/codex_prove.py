"""The whole Codex resume proof: resume a rollout and its compaction in Codex, judge the pair.

What `verify-resume` runs for Codex rollouts, and what the resume gate for Codex candidates
calls. The summary texts come from the compacted rollout's newest `compacted` record (its
`message`), read by the Codex format's reader; the gate, which wrote the summary, passes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pipeline.formats.codex.rollout_decode import RolloutKind, decode_rollout
from pipeline.formats.codex.rollout_items import payload_of
from pipeline.formats.line_guard import LineLimits
from pipeline.proof.codex.codex_client import resume_codex
from pipeline.proof.codex.codex_verdict import judge_codex
from pipeline.proof.item_verdict import ItemVerdict
from pipeline.proof.verdict import ExcludedText

__all__ = ["compaction_summaries", "prove_codex_resume"]


def compaction_summaries(rollout: Path, limits: LineLimits) -> tuple[str, ...]:
    """The `message` of the rollout's newest `compacted` record that has a non-empty one."""
    data = rollout.read_bytes()
    decoded = decode_rollout(data, limits)
    for line in reversed(list(decoded.lines_where(RolloutKind.COMPACTED))):
        payload = payload_of(decoded, data, line)
        message = payload.get("message") if isinstance(payload, dict) else None
        if isinstance(message, str) and message.strip():
            return (message,)
    return ()


def prove_codex_resume(
    original: Path,
    compacted: Path,
    *,
    executable: Path,
    timeout: float,
    limits: LineLimits,
    excluded: Sequence[ExcludedText] = (),
    summaries: Sequence[str] | None = None,
) -> ItemVerdict:
    """Resume both files in Codex and judge what it sends (raises CodexError if Codex fails).

    `summaries`: the summary texts the compacted context must carry; None reads them from it.
    """
    before = resume_codex(original, executable=executable, timeout=timeout)
    after = resume_codex(compacted, executable=executable, timeout=timeout)
    return judge_codex(
        before.context if before.resumed else None,
        after.context if after.resumed else None,
        # Read from a file that names none: unknown (None), never "no summary" (`()`, a rewrite's).
        summaries=(compaction_summaries(compacted, limits) or None) if summaries is None else summaries,
        excluded=excluded,
    )
