"""Judge a compaction by what Claude Code sends: the summary, then a suffix of the original context.

Given the context Claude Code sent for the original session and for its compaction, the
compaction holds when (1) the compacted context opens with the compact summary message(s) (a
masked candidate has none: its whole context must then be the original's, block for block),
(2) what follows is a non-empty suffix of the original context, block for block (role, kind,
full text, tool id; a tool_result the compaction declares bounded matches only when its text is
exactly the original's bounded by the declared rule, a tool_use it declares cleared only when its
input is the original's with its bulky strings cleared; the reminders Claude Code folds into a
tool_result are compared apart), (3) every tool_result answers a tool_use sent before it and
every tool_use is answered (unless the original leaves the same call unanswered), (4) no text of
an excluded record appears anywhere in it, (5) it says every reminder the original says
over its kept part and at resume time, and none the original never says but for the
announcement of a background shell it declares it carries and the deferred-tools listing that
also names tools it declares loaded before its boundary (`pipeline.proof.claude_code.reminders`), and
(6) it sends the definitions of the same tools (a deferred tool the summarized part loaded stays
loaded). Every difference is
described without transcript text: block positions, roles, kinds, tool ids and lengths only, so
verdicts can go into reports.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

from pipeline.formats.claude_code.bounded_output import BoundRule, bound_content, clear_input
from pipeline.proof.claude_code.api_rules import ApiViolation
from pipeline.proof.claude_code.reminders import (
    reminder_differences,
    without_closing,
    without_folded_reminders,
)
from pipeline.proof.claude_code.sent_context import SYNTHETIC_REPLY, ContextBlock, SentContext
from pipeline.proof.verdict import ExcludedText
from pipeline.vocabulary import Role, Verdict

__all__ = ["ResumeVerdict", "judge"]

_SEPARATOR = "\x00"  # joins searchable strings; never inside JSON text Claude Code sends


@dataclass(frozen=True, slots=True)
class ResumeVerdict:
    """The verdict, content-free differences, and what each side sent.

    `original_rejected` and `compacted_rejected` are the Messages API rules each side's request
    broke (the capture server answered it with the API's 400 after recording it).
    """

    verdict: Verdict
    differences: tuple[str, ...]
    summary_blocks: int
    kept_blocks: int
    original: SentContext | None
    compacted: SentContext | None
    notes: tuple[str, ...] = ()
    original_rejected: tuple[ApiViolation, ...] = ()
    compacted_rejected: tuple[ApiViolation, ...] = ()

    @property
    def ok(self) -> bool:
        """A match."""
        return self.verdict is Verdict.MATCH


def _summary_prefix(blocks: Sequence[ContextBlock], summaries: Sequence[str]) -> int:
    """How many leading blocks are compact summary texts.

    Claude Code sends a summary with a newline appended, so texts compare without outer whitespace.
    """
    wanted = {text.strip() for text in summaries}
    count = 0
    for block in blocks:
        if block.role != Role.USER or block.kind != "text" or block.text.strip() not in wanted:
            break
        count += 1
    return count


# What may have stood between a tool_result's own text and the reminders Claude Code closed it with:
# a bounded result's digest tells which was the content's.
_SEPARATORS: Final = ("", "\n", "\n\n")


def _bounded_as_declared(got: str, want: str, rule: BoundRule) -> bool:
    try:
        original = json.loads(want)
    except ValueError:
        return False
    return json.dumps(bound_content(original, rule)) == got


def _cleared_as_declared(got: ContextBlock, want: ContextBlock, inputs: frozenset[str]) -> bool:
    """A tool_use whose input the candidate declares cleared: the original's, its bulky strings cleared."""
    if got.kind != "tool_use" or got.id not in inputs or (got.role, got.id) != (want.role, want.id):
        return False
    try:
        original = json.loads(want.text)
    except ValueError:
        return False
    return json.dumps(clear_input(original)) == got.text


def _same(
    got: ContextBlock,
    want: ContextBlock,
    bounded: Mapping[str, BoundRule],
    inputs: frozenset[str] = frozenset(),
) -> bool:
    """Equal blocks; or tool_results equal once the reminders closing them are apart (the
    reminders are compared on their own); or a declared bounded tool_result whose text is the
    original's, bounded, with or without those reminders; or a tool_use declared cleared."""
    if got == want or _cleared_as_declared(got, want, inputs):
        return True
    if got.kind != "tool_result" or (got.role, got.kind, got.id) != (want.role, want.kind, want.id):
        return False
    got_texts = (got.text, without_folded_reminders(got.text))
    want_texts = (want.text, *(without_folded_reminders(want.text, tail) for tail in _SEPARATORS))
    if got_texts[1] == want_texts[1]:
        return True
    rule = bounded.get(got.id or "")
    return rule is not None and any(
        _bounded_as_declared(g, w, rule) for g in dict.fromkeys(got_texts) for w in dict.fromkeys(want_texts)
    )


def _suffix_differences(
    tail: Sequence[ContextBlock],
    original: Sequence[ContextBlock],
    head: int,
    bounded: Mapping[str, BoundRule],
    inputs: frozenset[str] = frozenset(),
) -> list[str]:
    """Why `tail` is not the end of `original`, naming the first difference from the end."""
    if not tail:
        return ["nothing of the original context follows the summary"]
    if len(tail) > len(original):
        return [f"{len(tail)} blocks follow the summary, the original context has only {len(original)}"]
    offset = len(original) - len(tail)
    for back in range(1, len(tail) + 1):
        got, want = tail[-back], original[-back]
        if not _same(got, want, bounded, inputs):
            position = len(tail) - back
            same_shape = (got.role, got.kind, got.id) == (want.role, want.kind, want.id)
            detail = ", same kind but the text differs" if same_shape else ""
            return [
                f"compacted block {head + position} is {got.label()} where the original's block "
                f"{offset + position} is {want.label()}{detail}; the last {back - 1} blocks agree",
                *_missing_tool_blocks(tail, original),
            ]
    return []


def _missing_tool_blocks(tail: Sequence[ContextBlock], original: Sequence[ContextBlock]) -> list[str]:
    """Tool blocks of the original's span that the compacted tail leaves out (a dropped call or result).

    The span starts where the tail's first block sits in the original, at or before the position a
    pure suffix would have.
    """
    latest = len(original) - len(tail)
    start = next((i for i in range(latest, -1, -1) if original[i] == tail[0]), None)
    if start is None:
        return []
    sent = {(block.kind, block.id) for block in tail if block.id}
    return [
        f"the original's block {position} {block.label()} is not sent"
        for position, block in enumerate(original[start:], start)
        if block.id and (block.kind, block.id) not in sent
    ]


def _pairing_differences(blocks: Sequence[ContextBlock], original: Sequence[ContextBlock]) -> list[str]:
    """tool_result without an earlier tool_use; tool_use never answered (unless the original agrees)."""
    found: list[str] = []
    used: set[str] = set()
    answered: set[str] = set()
    for position, block in enumerate(blocks):
        if block.kind == "tool_use" and block.id:
            used.add(block.id)
        elif block.kind == "tool_result" and block.id:
            if block.id not in used:
                found.append(f"block {position} answers tool_use {block.id}, which is never sent before it")
            answered.add(block.id)
    originally_open = {b.id for b in original if b.kind == "tool_use"} - {
        b.id for b in original if b.kind == "tool_result"
    }
    for tool_id in sorted(used - answered):
        if tool_id not in originally_open:
            found.append(f"tool_use {tool_id} is never answered")
    return found


def _leaks(compacted: SentContext, original: SentContext, excluded: Sequence[ExcludedText]) -> list[str]:
    """Excluded texts the compacted session sends and the original does not (by line, never by text)."""
    sent, sent_before = _SEPARATOR.join(compacted.strings), _SEPARATOR.join(original.strings)
    hits = [item for item in excluded if item.text in sent and item.text not in sent_before]
    return [
        f"text of excluded line {item.line} ({item.partition_set}) is sent"
        for item in sorted(hits, key=lambda item: item.line)
    ]


def _tool_differences(original: Sequence[str], compacted: Sequence[str]) -> list[str]:
    """Tools whose definitions one resume sends and the other does not (a deferred tool the
    summarized part loaded, say), by name."""
    lost = sorted(set(original) - set(compacted))
    new = sorted(set(compacted) - set(original))
    return [
        *(f"the original sends tool {name}'s definition; the compacted resume does not" for name in lost),
        *(f"the compacted resume sends tool {name}'s definition; the original does not" for name in new),
    ]


def judge(
    original: SentContext,
    compacted: SentContext,
    *,
    summaries: Sequence[str],
    excluded: Sequence[ExcludedText] = (),
    bounded: Mapping[str, BoundRule] | None = None,
    carried: frozenset[str] = frozenset(),
    cleared_inputs: frozenset[str] = frozenset(),
    masked: bool = False,
    loaded: frozenset[str] = frozenset(),
) -> ResumeVerdict:
    """Compare the two contexts Claude Code sent; `summaries` are the compacted file's summary
    texts, `carried` the task ids of the background shells it declares it carries, `loaded` the
    deferred tools it declares loaded before its boundary,
    `cleared_inputs` the tool_use ids whose bulky input it declares cleared; a `masked` file
    (`--strategy mask`: no summary of ours) must send the original's whole context."""
    original, compacted, notes = _without_synthetic_close(original, compacted)
    blocks = compacted.blocks
    head = _summary_prefix(blocks, summaries)
    tail = blocks[head:]
    differences: list[str] = []
    if masked and len(blocks) != len(original.blocks) and not original.modelled:
        # no summary of ours: the whole context is the original's, some outputs cleared
        held = f"{len(blocks)} blocks, the original's {len(original.blocks)}"
        differences.append(f"the masked context holds {held}")
    elif not head and not masked:
        first = blocks[0].label() if blocks else "nothing"
        differences.append(f"the compacted context does not open with the summary (block 0 is {first})")
    differences += _suffix_differences(tail, original.blocks, head, bounded or {}, cleared_inputs)
    differences += _pairing_differences(blocks, original.blocks)
    differences += _leaks(compacted, original, excluded)
    if original.modelled:
        # A transcript fixes neither the tools Claude Code defines nor the reminders it derives.
        notes.append(
            "the original's context is modelled (Claude Code cannot send it whole): "
            "its tool definitions and reminders go unjudged"
        )
    else:
        differences += _tool_differences(original.tools, compacted.tools)
    if tail and len(tail) <= len(original.blocks) and not original.modelled:
        judged, unjudged = _without_cleared_reminders(original, bounded or {})
        notes += unjudged
        kept_from = len(original.blocks) - len(tail)
        found, more = _reminder_differences(judged, compacted, kept_from, carried, loaded)
        differences += found
        notes += more
    return ResumeVerdict(
        verdict=Verdict.MISMATCH if differences else Verdict.MATCH,
        differences=tuple(differences),
        summary_blocks=head,
        kept_blocks=len(tail),
        original=original,
        compacted=compacted,
        notes=tuple(notes),
    )


def _without_synthetic_close(
    original: SentContext, compacted: SentContext
) -> tuple[SentContext, SentContext, list[str]]:
    """When Claude Code compacted one resume and not the other, the other's closing synthetic reply
    (`SYNTHETIC_REPLY`, which Claude Code's compaction request goes without) is left out, and a
    note says so."""
    if original.compacted_on_resume == compacted.compacted_on_resume:
        return original, compacted, []
    which, side = ("compacted", compacted) if original.compacted_on_resume else ("original", original)
    if not side.blocks or side.blocks[-1] != SYNTHETIC_REPLY:
        return original, compacted, []
    trimmed = replace(side, blocks=side.blocks[:-1])
    note = f"the {which} resume closes its trailing turn with Claude Code's synthetic reply: not compared"
    return (original, trimmed, [note]) if which == "compacted" else (trimmed, compacted, [note])


def _without_cleared_reminders(
    original: SentContext, bounded: Mapping[str, BoundRule]
) -> tuple[SentContext, list[str]]:
    """The original's reminders but those Claude Code closed a cleared tool_result with, and a note
    when there were some: they speak of the output (a file read, a command's result) the candidate
    declares cleared, and Claude Code renders none for its marker, as for the results it clears."""
    cleared = frozenset(tool for tool, rule in bounded.items() if rule.clear)
    blocks = original.blocks

    def closes_cleared(position: int, inside: bool) -> bool:
        at = position if inside else position - 1
        return 0 <= at < len(blocks) and blocks[at].kind == "tool_result" and blocks[at].id in cleared

    kept = tuple(r for r in original.reminders if not (cleared and closes_cleared(r.position, r.inside)))
    left = len(original.reminders) - len(kept)
    if not left:
        return original, []
    note = f"{left} of the original's reminders close tool results the candidate clears: unjudged"
    return replace(original, reminders=kept), [note]


def _reminder_differences(
    original: SentContext,
    compacted: SentContext,
    kept_from: int,
    carried: frozenset[str],
    loaded: frozenset[str] = frozenset(),
) -> tuple[list[str], list[str]]:
    """Reminders compared as `reminder_differences` says; the resume turn's only when Claude Code
    resumed both alike (compacting both first, or neither)."""
    before, after = original.reminders, compacted.reminders
    notes: list[str] = []
    if original.compacted_on_resume != compacted.compacted_on_resume:
        which = "original" if original.compacted_on_resume else "candidate"
        notes.append(f"Claude Code compacted the {which} on resume: the resume turn's reminders go unjudged")
        before = without_closing(before, len(original.blocks))
        after = without_closing(after, len(compacted.blocks))
    found, cadence = reminder_differences(before, after, kept_from, carried, loaded)
    return found, notes + cadence
