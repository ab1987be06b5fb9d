"""The verdict of a judge whose client resends a context of items (Codex, pi, Gemini CLI, Qwen
Code): the candidate holds when its client sends the summary, then a verbatim suffix of what the
original's sends, every call answered, no excluded text. Each client's own module decides the
differences; this is the one shape they all return."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pipeline.proof.context import ContextSize, json_size
from pipeline.vocabulary import Verdict

__all__ = ["ItemVerdict", "first_difference", "rewrite_verdict"]


@dataclass(frozen=True, slots=True)
class ItemVerdict:
    """The verdict, content-free differences, and the size of what each side sent."""

    verdict: Verdict
    differences: tuple[str, ...]
    summary_items: int
    kept_items: int
    original: ContextSize | None
    compacted: ContextSize | None
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """A match."""
        return self.verdict is Verdict.MATCH


def first_difference(
    original: Sequence[Any],
    rewritten: Sequence[Any],
    noun: str,
    same: Callable[[Any, Any], bool] | None = None,
) -> str | None:
    """Where a rewritten file's items differ from the original's, content-free (None: identical,
    item for item; `same` compares two items where plain equality is too strict)."""
    equal = same or (lambda a, b: a == b)
    for position, (before, after) in enumerate(zip(original, rewritten, strict=False)):
        if not equal(before, after):
            return f"{noun} {position} differs from the original's"
    if len(original) != len(rewritten):
        return f"the rewritten file sent {len(rewritten)} {noun}s, the original {len(original)}"
    return None


def rewrite_verdict(
    original: Sequence[Any],
    rewritten: Sequence[Any],
    noun: str,
    *,
    same: Callable[[Any, Any], bool] | None = None,
    notes: tuple[str, ...] = (),
) -> ItemVerdict:
    """A repair's or a vacuum's verdict (no summary): the client sends the same items from both."""
    found = first_difference(original, rewritten, noun, same)
    return ItemVerdict(
        verdict=Verdict.MISMATCH if found else Verdict.MATCH,
        differences=(found,) if found else (),
        summary_items=0,
        kept_items=0 if found else len(rewritten),
        original=json_size(list(original)),
        compacted=json_size(list(rewritten)),
        notes=notes,
    )
