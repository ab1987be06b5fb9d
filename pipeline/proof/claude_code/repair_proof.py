"""Prove a session repair in Claude Code: the repaired file resumes, and the API takes what it sends.

The damaged and the repaired file are resumed side by side (`client.resume`, each against its own
capture server, which answers a context breaking the Messages API's pairing rules with the
API's 400). The repair is proven when Claude Code resumes the repaired file, the API accepts its
context, and that context holds every block the damaged file's context held, except the results
the repair declared dropped. What `--relink` brings back shows as the blocks the repaired context
holds beyond the damaged one's (none when Claude Code had already bridged the break itself).
Renamed tool ids are compared by content. No text reaches the verdict: only content-free block
labels and the API's rule codes.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from pipeline.proof.claude_code.client import ResumeResult, resume
from pipeline.proof.claude_code.expected import INTERRUPTED_RESULT
from pipeline.proof.claude_code.model import resumed_model, with_recorded_window
from pipeline.proof.claude_code.sent_context import SYNTHETIC_REPLY, SentContext
from pipeline.proof.repair_verdict import RepairProof, RepairVerdict

__all__ = ["context_losses", "prove_repair"]

# What Claude Code writes itself, no record of the file: the text of a message it emptied by dropping
# a broken block, the text it puts for a call it drops (a repeated id), and the reply it puts after
# a conversation that ends on a user message (2.1.332).
_FILLERS = frozenset(
    {
        ("user", "text", "(no content)"),
        ("assistant", "text", "[Tool use interrupted]"),
        (SYNTHETIC_REPLY.role, SYNTHETIC_REPLY.kind, SYNTHETIC_REPLY.text),
    }
)
# The results Claude Code makes up for a call it finds unanswered (2.1.332): the repair answers such a
# call itself, so the made-up result is no record of the file either.
_MADE_UP_RESULTS = frozenset(
    {json.dumps(INTERRUPTED_RESULT), json.dumps("[Tool result missing due to internal error]")}
)
_LISTED = 20  # missing blocks named in a verdict: enough to see the pattern, a report stays small


def context_losses(
    damaged: SentContext, repaired: SentContext, dropped: Collection[str], reshaped: Collection[str] = ()
) -> tuple[str, ...]:
    """Labels of blocks `damaged` sent that `repaired` does not, other than results of `dropped` ids,
    Claude Code's fillers, the results it made up for calls the repaired file answers, and the calls
    of `reshaped` ids (their input edited by the repair) that the repaired context still makes."""
    left = Counter((b.role, b.kind, b.text) for b in repaired.blocks)
    answered = {b.id for b in repaired.blocks if b.kind == "tool_result"}
    called = {b.id for b in repaired.blocks if b.kind == "tool_use" and b.id in reshaped}
    missing = []
    for block in damaged.blocks:
        key = (block.role, block.kind, block.text)
        if left[key] > 0:
            left[key] -= 1
            continue
        result = block.kind == "tool_result"
        made_up = result and block.text in _MADE_UP_RESULTS and block.id in answered
        edited = block.kind == "tool_use" and block.id in called
        if key not in _FILLERS and not made_up and not edited and not (result and block.id in dropped):
            missing.append(block.label())
    return tuple(missing)


def _verdict(
    before: ResumeResult, after: ResumeResult, dropped: Collection[str], reshaped: Collection[str]
) -> RepairProof:
    base = RepairProof(
        RepairVerdict.PROVEN,
        damaged_blocks=len(before.context.blocks),
        repaired_blocks=len(after.context.blocks),
        damaged_rejected=tuple(v.rule.value for v in before.rejected),
        repaired_rejected=tuple(v.rule.value for v in after.rejected),
    )
    if not before.resumed and not after.resumed:
        return replace(base, verdict=RepairVerdict.NOT_RESUMABLE)
    if not after.resumed:
        return replace(base, verdict=RepairVerdict.NOT_RESUMED)
    if base.repaired_rejected:
        return replace(base, verdict=RepairVerdict.API_REJECTED)
    missing = context_losses(before.context, after.context, dropped, reshaped) if before.resumed else ()
    if missing:
        return replace(base, verdict=RepairVerdict.RECORDS_LOST, missing=missing[:_LISTED])
    return base


def prove_repair(
    damaged: Path,
    repaired: Path,
    *,
    executable: Path,
    timeout: float,
    dropped: Collection[str] = (),
    reshaped: Collection[str] = (),
) -> RepairProof:
    """Resume both files in Claude Code (same pinned model) and judge the repaired one's context."""
    model = with_recorded_window(resumed_model(damaged), damaged)
    with ThreadPoolExecutor(2, thread_name_prefix="repair-resume") as pool:
        runs = [
            pool.submit(resume, path, executable=executable, model=model, timeout=timeout)
            for path in (damaged, repaired)
        ]
        before, after = (run.result() for run in runs)
    return _verdict(before, after, dropped, reshaped)
