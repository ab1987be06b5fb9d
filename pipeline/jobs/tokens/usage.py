"""Billed usage as ground truth: how well each estimator tracks the prompt the provider counted.

Every assistant message Claude Code writes carries the provider's `usage`. Its prompt size,
input + cache creation + cache read tokens, is what the real (current) Claude tokenizer made of
everything sent before that turn: the system prompt and tool definitions, which the transcript
does not hold, plus the conversation so far, which it does. So for each turn on a session's
chain, `billed = c + s * estimate(prefix)` should hold, with `c` the session's constant and `s`
the estimator's scale against the real tokenizer. A least-squares line through the turns gives
both per session and estimator; `s - 1` is the estimator's slope error and the residual says how
faithfully it follows the conversation's growth.

Rules: a message's usage is read from its first fragment only (every fragment repeats it); each
message id is one turn, once; Claude Code's own compactions start a new prompt, so the prefix
restarts at every `compact_boundary` and the history before one (reached through
`logicalParentUuid`) is walked as segments of its own; only user and assistant lines count
toward a prefix, since they are what Claude Code sends back.

Framing: the pieces are the text of each block, not the prompt the API renders around them. Each
message (a run of user or assistant lines: Claude Code merges consecutive lines of one role into
one API message) costs `Framing.message` tokens of role markup, and each tool_use and tool_result
block `Framing.tool_block` tokens (its id, tool name and wrapper, and what the client sends with a
tool call that the transcript does not keep). The same framing is added to every framed
estimator's prefix, since it is the same tokens whichever estimator counts the content; the
constants are in `calibration` (see scripts/fit-calibration). Earlier turns' thinking is kept in
the prefix: stripping it fitted the corpus worse.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import add
from typing import Final

from pipeline.core.graph import UuidGraph
from pipeline.core.index import LineIndex
from pipeline.report.tokens import FitEntry
from pipeline.vocabulary import RecordType

__all__ = [
    "MIN_TURNS",
    "NO_FRAMING",
    "Framing",
    "LineFit",
    "TurnSample",
    "UsageFit",
    "collect_turns",
    "fit_line",
    "fit_usage",
    "usage_segments",
]

MIN_TURNS: Final = 3
"""A line through fewer turns says nothing about scale; such sessions get no fit."""
_MAX_SEGMENTS: Final = 64  # compactions followed back through logicalParentUuid, at most


@dataclass(frozen=True, slots=True)
class Framing:
    """Prompt tokens the transcript's pieces miss: per API message and per tool block."""

    message: int = 0
    tool_block: int = 0

    def tokens(self, messages: int, tool_blocks: int) -> int:
        """Framing of a prefix holding `messages` messages and `tool_blocks` tool blocks."""
        return self.message * messages + self.tool_block * tool_blocks


NO_FRAMING: Final = Framing()


@dataclass(frozen=True, slots=True)
class TurnSample:
    """One billed turn: its first line, the billed prompt, and each estimator's prefix estimate.

    `messages` and `tool_blocks` count what the prefix holds (its framing is already in `prefix`
    for the framed estimators).
    """

    line: int
    billed: int
    prefix: tuple[int, ...]
    messages: int = 0
    tool_blocks: int = 0


@dataclass(frozen=True, slots=True)
class LineFit:
    """`y = constant + slope * x` by least squares, and how far the points lie from it."""

    constant: float
    slope: float
    rmse: float
    points: int


@dataclass(frozen=True, slots=True)
class UsageFit:
    """One estimator's fit against billed prompts over a session's turns."""

    estimator: str
    fit: LineFit
    mean_billed: float

    @property
    def slope_error(self) -> float:
        """`slope - 1`: positive when the estimator undercounts the real tokenizer."""
        return self.fit.slope - 1.0

    @property
    def relative_rmse(self) -> float:
        """Residual error as a share of the mean billed prompt."""
        return self.fit.rmse / self.mean_billed if self.mean_billed else 0.0

    def to_report(self) -> FitEntry:
        """The report's figures of this fit."""
        return FitEntry(
            estimator=self.estimator,
            turns=self.fit.points,
            constant=round(self.fit.constant, 1),
            slope=round(self.fit.slope, 4),
            slope_error=round(self.slope_error, 4),
            rmse=round(self.fit.rmse, 1),
            relative_rmse=round(self.relative_rmse, 4),
        )


def usage_segments(index: LineIndex, graph: UuidGraph, chain: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """The chain, preceded by the history of each compaction it starts from, oldest first."""
    segments = [chain]
    seen: set[int] = set(chain)
    head = chain[0] if chain else None
    while head is not None and len(segments) < _MAX_SEGMENTS:
        record = index.record(head)
        if record is None or not record.compact_boundary or not record.logical_parent:
            break
        target = graph.line_of.get(record.logical_parent)
        if target is None or target in seen:
            break
        lines = graph.trace(index, target).lines
        if not lines:
            break
        seen.update(lines)
        segments.append(lines)
        head = lines[0]
    return tuple(reversed(segments))


def collect_turns(
    index: LineIndex,
    segments: Sequence[tuple[int, ...]],
    line_estimates: Mapping[int, tuple[int, ...]],
    billed: Mapping[int, int],
    width: int,
    *,
    tool_blocks: Mapping[int, int] | None = None,
    framing: Framing = NO_FRAMING,
    framed: int | None = None,
) -> tuple[TurnSample, ...]:
    """Billed turns with the estimate of everything the chain sent before each of them.

    `line_estimates` holds each user/assistant line's content estimate per estimator (`width` of
    them); `billed` the billed prompt of assistant lines that carry one; `tool_blocks` how many
    tool_use and tool_result blocks a line holds. `framing` is added to the first `framed`
    estimators (all by default): a new message starts at every change of role.
    """
    turns: list[TurnSample] = []
    seen_messages: set[str] = set()
    zero = (0,) * width
    framed = width if framed is None else framed
    blocks_of = tool_blocks or {}
    records = index.records
    for segment in segments:
        running = zero
        messages = blocks = 0
        role: str | None = None
        for line in segment:
            record = records[line - 1]
            if record is None:
                continue
            if record.compact_boundary:
                running = zero
                messages = blocks = 0
                role = None
                continue
            message_id = record.message_id
            if record.type == RecordType.ASSISTANT and message_id and message_id not in seen_messages:
                seen_messages.add(message_id)
                prompt = billed.get(line)
                if prompt:
                    extra = framing.tokens(messages, blocks)
                    prefix = tuple(v + extra if i < framed else v for i, v in enumerate(running))
                    turns.append(TurnSample(line, prompt, prefix, messages, blocks))
            estimate = line_estimates.get(line)
            if estimate is not None:
                running = tuple(map(add, running, estimate))
                if record.type != role:
                    messages += 1
                    role = record.type
                blocks += blocks_of.get(line, 0)
    return tuple(turns)


def fit_line(xs: Sequence[float], ys: Sequence[float]) -> LineFit | None:
    """Ordinary least squares; None with too few points or no spread in `xs`."""
    count = len(xs)
    if count < MIN_TURNS:
        return None
    mean_x = math.fsum(xs) / count
    mean_y = math.fsum(ys) / count
    sxx = math.fsum((x - mean_x) ** 2 for x in xs)
    if sxx <= 0:
        return None
    sxy = math.fsum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True))
    slope = sxy / sxx
    constant = mean_y - slope * mean_x
    rmse = math.sqrt(math.fsum((y - constant - slope * x) ** 2 for x, y in zip(xs, ys, strict=True)) / count)
    return LineFit(constant, slope, rmse, count)


def fit_usage(turns: Sequence[TurnSample], names: Sequence[str]) -> tuple[UsageFit, ...]:
    """One fit per estimator (in `names` order, the order of each turn's prefix)."""
    if not turns:
        return ()
    billed = [float(turn.billed) for turn in turns]
    mean_billed = math.fsum(billed) / len(billed)
    fits = []
    for position, name in enumerate(names):
        fit = fit_line([float(turn.prefix[position]) for turn in turns], billed)
        if fit is not None:
            fits.append(UsageFit(name, fit, mean_billed))
    return tuple(fits)
