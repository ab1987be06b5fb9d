"""The `auto` estimator's fit over what Claude Code sent, not over the raw chain.

At each billed turn the provider counted the context Claude Code sent, as
`pipeline/proof/claude_code/expected.py` models it, plus the system prompt and tools the file does not hold:
- messages as sent: fragments of one streamed assistant message are joined across the
  tool-result messages between them, consecutive user lines are one message, lines that hold
  nothing are left out; each message costs its family's framing per message, each tool_use and
  tool_result block its framing per block (`family_calibration`, fitted per family on the shared
  corpus only);
- content counted with the tokenizer of the family in force (`auto`), scaled by its factor.

What the file cannot say moves the billed prompt in steps: Claude Code clears old tool results
(the prompt falls with no compaction in the file), loads deferred tool definitions or changes its
system prompt (it jumps by more than the chain grew), or the model changes (a new tokenizer reads
the whole prompt). Each such step starts an epoch: the prompt within one epoch is a constant plus
what the chain adds, so the slope is fitted on growth within epochs (pooled least squares, one
constant per epoch) and every step is counted in the report. A step is a turn whose billed
growth departs from the estimated growth by more than `STEP_TOKENS` plus `STEP_SHARE` of it.

What was billed is read per family of a session, by the usage convention its turns follow.
Anthropic's three input figures are disjoint (the prompt is their sum). Many Anthropic-compatible
endpoints and proxies in front of other vendors' models fill `input_tokens` with the whole
prompt, cached part included (OpenAI's `prompt_tokens`), and `cache_read_input_tokens` with the
cached part: the sum would count it twice. Such turns say so themselves: with a cache read,
Anthropic's fresh input is the uncached tail (on the shared corpus it was below the read on all
of its 3,000 cached turns), an inclusive one is never below it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from pipeline.core.index import LineIndex
from pipeline.estimate import family_calibration
from pipeline.estimate.families import ModelFamily
from pipeline.jobs.tokens.usage import MIN_TURNS, LineFit, UsageFit
from pipeline.vocabulary import RecordType

__all__ = [
    "STEP_SHARE",
    "STEP_TOKENS",
    "SentFit",
    "SentLine",
    "SentTurn",
    "UsageConvention",
    "collect_sent_turns",
    "family_framing",
    "fit_sent",
    "prompt_of",
    "sent_billed",
    "usage_convention",
]

STEP_TOKENS: Final = 5_000
"""Billed growth this far from the estimate's is a step (a cache-accounting wobble is < 1k tokens)."""
STEP_SHARE: Final = 0.5
"""...plus this share of the estimated growth, so a tokenizer off by up to half is no step."""


MIN_CACHED_TURNS: Final = 3  # fewer turns with a cache read say nothing of the convention
INCLUSIVE_SHARE: Final = 0.9  # ...and this share of them must hold the read within the input


class UsageConvention(StrEnum):
    """How a provider's usage spells the prompt it billed (report values)."""

    ANTHROPIC = "anthropic"  # fresh input, cache writes and cache reads are disjoint
    INCLUSIVE = "inclusive"  # the input already holds the cached tokens


def usage_convention(parts: Iterable[tuple[int, int, int]]) -> UsageConvention:
    """The convention (fresh, written, read) prompt parts follow."""
    cached = [part for part in parts if part[2] > 0]
    if len(cached) < MIN_CACHED_TURNS:
        return UsageConvention.ANTHROPIC
    holding = sum(1 for fresh, _, read in cached if fresh >= read)
    return (
        UsageConvention.INCLUSIVE if holding >= INCLUSIVE_SHARE * len(cached) else UsageConvention.ANTHROPIC
    )


def prompt_of(parts: tuple[int, int, int], convention: UsageConvention) -> int:
    """The billed prompt under a convention."""
    fresh, written, read = parts
    if convention is UsageConvention.INCLUSIVE:
        return max(fresh, written + read)
    return fresh + written + read


def sent_billed(
    parts: Mapping[int, tuple[int, int, int]], families: Mapping[int, ModelFamily]
) -> tuple[dict[int, int], dict[ModelFamily, UsageConvention]]:
    """Billed prompts per line, each family's turns read by the convention they follow."""
    grouped: dict[ModelFamily, list[int]] = {}
    for line in parts:
        family = families.get(line)
        if family is not None:
            grouped.setdefault(family, []).append(line)
    billed: dict[int, int] = {}
    conventions: dict[ModelFamily, UsageConvention] = {}
    for family, lines in grouped.items():
        convention = conventions[family] = usage_convention(parts[line] for line in lines)
        billed.update((line, prompt_of(parts[line], convention)) for line in lines)
    return billed, conventions


@dataclass(frozen=True, slots=True)
class SentLine:
    """What one user/assistant line adds to the sent context."""

    tokens: int  # `auto` tokens of its content
    tool_blocks: int
    results_only: bool  # a user line of tool results only (joins the calls' message)
    empty: bool  # nothing Claude Code would send
    unrecorded: int = 0  # an assistant line's: tokens its request held that no line records


@dataclass(frozen=True, slots=True)
class SentTurn:
    """One billed turn: the billed prompt and the sent context before it, framed for its family."""

    line: int
    billed: int
    family: ModelFamily
    estimate: int
    messages: int
    tool_blocks: int
    epoch_start: bool  # a compaction or a model family change starts a new epoch here


@dataclass(frozen=True, slots=True)
class SentFit:
    """The pooled within-epoch fit and how many epochs and steps the turns held."""

    usage: UsageFit
    epochs: int
    steps: int


def family_framing(family: ModelFamily) -> tuple[int, int]:
    """(per message, per tool block) framing of a family, the fallback family's where not fitted."""
    framing = family_calibration.FAMILY_FRAMING
    return framing.get(family.value) or framing[family_calibration.FALLBACK_FAMILY]


class _Context:
    """The sent context of one segment as it grows: tokens, messages (folded), tool blocks."""

    def __init__(self) -> None:
        self.tokens = self.messages = self.blocks = 0
        self.role: str | None = None
        self.results_after: str | None = None  # message id of the calls a results-only message answers

    def add(self, role: str, message_id: str | None, line: SentLine) -> None:
        self.tokens += line.tokens
        self.blocks += line.tool_blocks
        if line.empty:
            return
        if role == RecordType.ASSISTANT:
            if self.role == "results" and message_id is not None and message_id == self.results_after:
                return  # joins the calls across their results, which stay the last message
            if self.role != RecordType.ASSISTANT:
                self.messages += 1
            self.role, self.results_after = RecordType.ASSISTANT, message_id
        elif self.role in (RecordType.USER, "results"):
            self.role = "results" if self.role == "results" and line.results_only else RecordType.USER
        else:
            self.messages += 1
            self.role = "results" if line.results_only else RecordType.USER


def collect_sent_turns(
    index: LineIndex,
    segments: Sequence[tuple[int, ...]],
    lines: Mapping[int, SentLine],
    billed: Mapping[int, int],
    families: Mapping[int, ModelFamily],
) -> tuple[SentTurn, ...]:
    """Billed turns with the framed `auto` estimate of what was sent before each of them."""
    turns: list[SentTurn] = []
    seen: set[str] = set()
    records = index.records
    last_family: ModelFamily | None = None
    for segment in segments:
        context, fresh = _Context(), True
        for number in segment:
            record = records[number - 1]
            if record is None:
                continue
            if record.compact_boundary:
                context, fresh = _Context(), True
                continue
            message_id = record.message_id
            if record.type == RecordType.ASSISTANT and message_id and message_id not in seen:
                seen.add(message_id)
                prompt, family = billed.get(number), families.get(number)
                sent = lines.get(number)
                context.tokens += sent.unrecorded if sent is not None else 0  # stays in the history
                if prompt and family is not None:
                    message, block = family_framing(family)
                    estimate = context.tokens + message * context.messages + block * context.blocks
                    start = fresh or family != last_family
                    turns.append(
                        SentTurn(number, prompt, family, estimate, context.messages, context.blocks, start)
                    )
                    fresh, last_family = False, family
            line = lines.get(number)
            if line is not None and record.type in (RecordType.USER, RecordType.ASSISTANT):
                context.add(record.type, message_id, line)
    return tuple(turns)


def _epochs(turns: Sequence[SentTurn]) -> tuple[list[list[SentTurn]], int]:
    epochs: list[list[SentTurn]] = []
    steps = 0
    for turn in turns:
        if epochs and not turn.epoch_start:
            before = epochs[-1][-1]
            grown = turn.estimate - before.estimate
            if abs(turn.billed - before.billed - grown) <= STEP_TOKENS + STEP_SHARE * abs(grown):
                epochs[-1].append(turn)
                continue
            steps += 1
        epochs.append([turn])
    return epochs, steps


def fit_sent(turns: Sequence[SentTurn], name: str) -> SentFit | None:
    """`billed = c_epoch + slope * estimate`, pooled over epochs of two turns or more."""
    epochs, steps = _epochs(turns)
    kept = [epoch for epoch in epochs if len(epoch) >= 2]
    points = sum(len(epoch) for epoch in kept)
    if points < MIN_TURNS:
        return None
    sxx = sxy = 0.0
    centred: list[tuple[float, float]] = []
    for epoch in kept:
        mean_x = math.fsum(t.estimate for t in epoch) / len(epoch)
        mean_y = math.fsum(t.billed for t in epoch) / len(epoch)
        for turn in epoch:
            x, y = turn.estimate - mean_x, turn.billed - mean_y
            sxx, sxy = sxx + x * x, sxy + x * y
            centred.append((x, y))
    if sxx <= 0:
        return None
    slope = sxy / sxx
    first = kept[0]
    constant = math.fsum(t.billed - slope * t.estimate for t in first) / len(first)
    rmse = math.sqrt(math.fsum((y - slope * x) ** 2 for x, y in centred) / points)
    mean_billed = math.fsum(t.billed for epoch in kept for t in epoch) / points
    return SentFit(UsageFit(name, LineFit(constant, slope, rmse, points), mean_billed), len(epochs), steps)
