"""Resume the original and the compacted session in Claude Code, side by side, and judge.

Both runs use the same pinned model (the one Claude Code would restore for the original today)
and run concurrently, each against its own capture server in its own throwaway home. When
Claude Code finds nothing to resume in the original (it answers "No conversation found", as for
sidechain-only subagent files) the verdict is `not-resumable`, never a mismatch.

Each capture server answers a request that breaks the Messages API's rules with the API's 400
(`api_rules`), after recording it. Claude Code retries such a request a few times and then exits
with an error, but what it sent is on record, so a damaged original is still judged by its
context; the rules it broke are kept beside the verdict. A compacted request the API would reject
is a mismatch whatever else agrees: the compaction must leave a session the API accepts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from pipeline.formats.claude_code.bounded_output import declared_bounds, declared_cleared_inputs
from pipeline.formats.claude_code.content import iter_contents
from pipeline.formats.claude_code.resume_state import declared_loaded_tools
from pipeline.formats.claude_code.stamp import mask_stamp
from pipeline.formats.claude_code.tasks import declared_shells
from pipeline.proof.claude_code.api_rules import ApiViolation
from pipeline.proof.claude_code.client import ClaudeCodeError, ResumeResult, resume
from pipeline.proof.claude_code.model import resumed_model, with_recorded_window
from pipeline.proof.claude_code.resume_verdict import ResumeVerdict, judge
from pipeline.proof.claude_code.sent_context import SentContext
from pipeline.proof.verdict import ExcludedText
from pipeline.vocabulary import Verdict

__all__ = ["Exclusions", "ProofOptions", "prove_resume", "summary_texts", "with_api_rejections"]

Exclusions = Callable[[str], Sequence[ExcludedText]]
"""The excluded texts that a compacted context sends, given its strings joined by NUL (`sent_exclusions`)."""


@dataclass(frozen=True, slots=True)
class ProofOptions:
    """How to run the proof: which Claude Code, and how long a resume may take (what counts as a
    leak is the exclusions' business)."""

    executable: str
    resume_timeout_seconds: float


def summary_texts(compacted: Path) -> tuple[str, ...]:
    """The text of every compact summary row of a transcript."""
    found: list[str] = []
    for row in iter_contents(compacted.read_bytes()):
        if not row.is_compact_summary or not row.has_message:
            continue
        if row.string_content is not None:
            found.append(row.string_content)
        else:
            found += [part.text for part in row.parts if part.type_name == "text"]
    return tuple(found)


def _failure(which: str, result: ResumeResult) -> ClaudeCodeError:
    return ClaudeCodeError(
        f"Claude Code failed to resume the {which} file (exit {result.returncode}, "
        f"{result.message_requests} API requests, no request carried the probe)"
    )


def prove_resume(
    original: Path,
    compacted: Path,
    options: ProofOptions,
    *,
    excluded: Sequence[ExcludedText] | Exclusions,
    modelled: SentContext | None = None,
) -> ResumeVerdict:
    """Resume both files and judge the compacted context against the original's.

    `excluded` are the original's excluded texts (`pipeline.proof.claude_code.exclusions`), or what finds
    those the compacted context sends once it is known (only those can leak). `modelled`, the
    original's context as `pipeline.proof.claude_code.expected` models it, stands in for an original Claude
    Code cannot send (over the API's request limit): only the compacted file is resumed. Raises
    :class:`ClaudeCodeError` when Claude Code fails for another reason than finding no conversation.
    """
    model = with_recorded_window(resumed_model(original), original)
    executable = Path(options.executable)
    paths = (compacted,) if modelled is not None else (original, compacted)
    with ThreadPoolExecutor(2, thread_name_prefix="resume") as pool:
        runs = [
            pool.submit(
                resume, path, executable=executable, model=model, timeout=options.resume_timeout_seconds
            )
            for path in paths
        ]
        *sent, after = (run.result() for run in runs)
    if modelled is not None:
        return with_api_rejections(_judged(modelled, after, compacted, excluded), (), after.rejected)
    before = sent[0]
    if not before.resumed:
        if not before.refused:
            raise _failure("original", before)
        note = "Claude Code finds no conversation to resume in the original"
        also = "; nor in the compacted file" if not after.resumed else ""
        return ResumeVerdict(Verdict.NOT_RESUMABLE, (), 0, 0, None, None, (note + also,))
    if not after.resumed:
        if not after.refused:
            raise _failure("compacted", after)
        return ResumeVerdict(
            Verdict.MISMATCH,
            ("Claude Code resumes the original but finds no conversation in the compacted file",),
            0,
            0,
            before.context,
            None,
        )
    verdict = _judged(before.context, after, compacted, excluded)
    return with_api_rejections(verdict, before.rejected, after.rejected)


def _judged(
    original: SentContext, after: ResumeResult, compacted: Path, excluded: Sequence[ExcludedText] | Exclusions
) -> ResumeVerdict:
    """The verdict on the compacted resume `after` against the original's context."""
    if original.modelled and not after.resumed:
        if not after.refused:
            raise _failure("compacted", after)
        note = "Claude Code finds no conversation to resume in the compacted file"
        return ResumeVerdict(Verdict.MISMATCH, (note,), 0, 0, original, None)
    if callable(excluded):
        excluded = excluded("\x00".join(after.context.strings))
    written = compacted.read_bytes()
    return judge(
        original,
        after.context,
        summaries=summary_texts(compacted),
        excluded=excluded,
        bounded=declared_bounds(written),
        carried=declared_shells(written),
        cleared_inputs=declared_cleared_inputs(written),
        masked=mask_stamp(written) is not None,
        loaded=declared_loaded_tools(written),
    )


def _rejection(side: str, violation: ApiViolation) -> str:
    ids = f": {', '.join(violation.ids)}" if violation.ids else ""
    return f"the API rejects the {side} context ({violation.rule.value} at {violation.path}{ids})"


def with_api_rejections(
    verdict: ResumeVerdict, original: tuple[ApiViolation, ...], compacted: tuple[ApiViolation, ...]
) -> ResumeVerdict:
    """The verdict with the API rules each side's request broke; a rejected compaction never matches."""
    if not original and not compacted:
        return verdict
    return replace(
        verdict,
        verdict=Verdict.MISMATCH if compacted else verdict.verdict,
        differences=(*(_rejection("compacted", v) for v in compacted[:1]), *verdict.differences),
        notes=(*verdict.notes, *(_rejection("original", v) for v in original[:1])),
        original_rejected=original,
        compacted_rejected=compacted,
    )
