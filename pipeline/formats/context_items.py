"""The format-neutral values a session's rebuilt context is measured and cut in.

Every agent whose client rebuilds a context of items on resume (Codex's response items, pi's
and Qwen Code's messages, Gemini CLI's contents) reports each item it sends as a `SentItem`,
and a compaction's cut as a `TailPlan`: the first kept item and the first kept line of the file.
Counts, digests and line numbers only, never text, so they go into reports as they are.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["BilledTurn", "ClassTallies", "Key", "SentItem", "TailPlan", "Tally"]


@dataclass(frozen=True, slots=True)
class SentItem:
    """An item the client sends on resume, without its text: what a compaction's check compares
    and counts."""

    digest: str  # SHA-256 of its canonical JSON, as the goldens name items
    tokens: int  # the client's own estimate of it


@dataclass(frozen=True, slots=True)
class TailPlan:
    """Where a compaction cuts: the first kept item (an index into the sent items) and the first
    kept line; whether the kept tail fits the target, and whether it starts at a user turn."""

    first_item: int
    cut_line: int
    target_met: bool
    at_turn: bool


@dataclass(frozen=True, slots=True)
class BilledTurn:
    """One billed model request and what the client sent before it, counted by a real tokenizer
    and framed as its format models what the provider reads (the per-turn series of a fit)."""

    line: int  # where the file records the bill
    billed: int  # the prompt's input tokens, cached ones included
    estimate: int
    items: int  # items of the context sent
    epoch_start: bool  # the first request, or one after a compaction or a change of model
    model: str | None


Key = tuple[str, str | None]
"""A content class, and a tool name within it (None: the class as a whole)."""


@dataclass(slots=True)
class Tally:
    """Items of one class (or tool) and each estimator's tokens of them (filled while counting)."""

    items: int = 0
    tokens: dict[str, int] = field(default_factory=lambda: defaultdict(int))


@dataclass(frozen=True, slots=True)
class ClassTallies:
    """Tallies by class over every item the file holds, and over the context the client sends."""

    file: Mapping[Key, Tally]
    sent: Mapping[Key, Tally]
