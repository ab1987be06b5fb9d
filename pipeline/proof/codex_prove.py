"""The whole Codex resume proof: resume a rollout and its compaction in Codex, judge the pair.

What `verify-resume` runs for Codex rollouts, and what a resume gate for Codex candidates calls.
The summary texts come from the compacted rollout's newest `compacted` record (its `message`), a
minimal read of the one field the verdict needs; the Codex format's reader may supply them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import orjson

from pipeline.proof.codex_client import resume_codex
from pipeline.proof.codex_verdict import CodexVerdict, judge_codex
from pipeline.proof.verdict import ExcludedText

__all__ = ["compaction_summaries", "prove_codex_resume"]

_COMPACTED: Final = b'"compacted"'
_TYPE_PREFIX_BYTES: Final = 256  # a record names its type before its payload


def compaction_summaries(rollout: Path) -> tuple[str, ...]:
    """The `message` of the rollout's newest `compacted` record, if it has a non-empty one."""
    newest: str | None = None
    with rollout.open("rb") as lines:
        for line in lines:
            if _COMPACTED not in line[:_TYPE_PREFIX_BYTES]:
                continue
            with contextlib.suppress(orjson.JSONDecodeError):
                record = orjson.loads(line)
                payload = record.get("payload") if record.get("type") == "compacted" else None
                message = payload.get("message") if isinstance(payload, dict) else None
                newest = message if isinstance(message, str) and message.strip() else newest
    return (newest,) if newest else ()


def prove_codex_resume(
    original: Path,
    compacted: Path,
    *,
    executable: Path,
    timeout: float,
    excluded: Sequence[ExcludedText] = (),
) -> CodexVerdict:
    """Resume both files in Codex and judge what it sends (raises CodexError if Codex fails)."""
    before = resume_codex(original, executable=executable, timeout=timeout)
    after = resume_codex(compacted, executable=executable, timeout=timeout)
    return judge_codex(
        before.context if before.resumed else None,
        after.context if after.resumed else None,
        summaries=compaction_summaries(compacted),
        excluded=excluded,
    )
