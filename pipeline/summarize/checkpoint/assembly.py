"""The nine sections of a deterministic checkpoint as they are assembled: carried, derived, capped.

Bullets of prior summaries come first in their section, then those derived from this span's
evidence (`bullets`); a capped section keeps its newest bullets and counts the rest in an omission
marker. Equal bullets become one when the section is rendered. The human messages' sections
(Goal, Constraints) are filled by the summarizer (`deterministic`), which decides how much of
each message it keeps.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from pipeline.summarize.checkpoint.bullets import (
    command_bullets,
    decision_bullets,
    error_bullets,
    file_bullets,
    quote,
    turns,
)
from pipeline.summarize.checkpoint.document import (
    CHECKPOINT_MARKER,
    Bullet,
    Heading,
    PriorContent,
    cut,
    render_section,
)
from pipeline.summarize.checkpoint.fitting import Bounds
from pipeline.summarize.evidence.items import EvidenceItem, EvidenceKind, bounded_lines
from pipeline.summarize.evidence.work_state import DeterministicState

__all__ = ["LABEL_CHARS", "PROSE_SECTIONS", "Sections", "derive_sections", "human_prompts"]

LABEL_CHARS: Final = 40  # a fitted bullet's quote plus the words that introduce it ("Latest update: ")
_TODO_LABEL: Final = {"in_progress": "In progress", "pending": "Pending"}
TRAIL_SECTIONS: Final = frozenset({Heading.ERRORS})
"""Sections of the artifact trail: capped by `Bounds.errors_kept`, not the sections' bullet cap."""
LIST_SECTIONS: Final = frozenset({Heading.FILES, Heading.COMMANDS})
"""Complete lists (`listing`): never capped nor cut, grouped more coarsely when the room is short."""
ERROR_CHARS: Final = 800  # a failure's label, subject and telling lines: never cut below this
PROSE_SECTIONS: Final = (Heading.COMPLETED, Heading.DECISIONS)
"""Sections that quote the assistant's prose and nothing a resumed agent is probed for: they give
their room to the user's words first (Work in progress and Exact next steps hold the work at the
cut, the latest update and the open todos; identifiers are in the appendix)."""


@dataclass(slots=True)
class Sections:
    """Bullets per section, carried ones first; capped sections keep their newest derived bullets."""

    bullets: dict[Heading, list[Bullet]] = field(default_factory=lambda: {heading: [] for heading in Heading})
    omitted: dict[Heading, int] = field(default_factory=lambda: dict.fromkeys(Heading, 0))
    fitted: bool = False  # Constraints holds fitted bullets: distinct messages, rendered as they are

    def carry(self, prior: PriorContent) -> None:
        for heading, bullets in prior.bullets:
            self.bullets[heading].extend(bullets)
        for heading, count in prior.omitted:
            self.omitted[heading] += count

    def add(self, heading: Heading, derived: Sequence[Bullet], cap: int | None) -> None:
        if cap is not None and len(derived) > cap:
            self.omitted[heading] += len(derived) - cap
            derived = derived[len(derived) - cap :]
        self.bullets[heading].extend(derived)

    def cap(self, bounds: Bounds, head: int) -> None:
        """Every section but Constraints keeps its newest bullets (carried ones too), each cut.

        Goal keeps at least the first and the latest request, each cut to `head`.
        """
        for heading in Heading:
            if heading in LIST_SECTIONS or heading is Heading.CONSTRAINTS:
                continue
            goal = heading is Heading.GOAL
            merged = _merge(self.bullets[heading])
            cap = max(2, bounds.bullets_per_section) if goal else bounds.bullets_per_section
            cap = bounds.errors_kept if heading in TRAIL_SECTIONS else cap
            kept = merged[max(0, len(merged) - cap) :]
            self.omitted[heading] += len(merged) - len(kept)
            limit = head if goal else bounds.quote_chars + LABEL_CHARS
            limit = max(limit, ERROR_CHARS) if heading in TRAIL_SECTIONS else limit
            self.bullets[heading] = [Bullet(cut(b.text, limit, b.lines[0]), b.lines) for b in kept]

    def cap_prose(self, bullets: int, chars: int) -> None:
        """The assistant's prose (`PROSE_SECTIONS`) keeps its newest `bullets` per section, each cut."""
        for heading in PROSE_SECTIONS:
            merged = _merge(self.bullets[heading])
            kept = merged[max(0, len(merged) - bullets) :]
            self.omitted[heading] += len(merged) - len(kept)
            self.bullets[heading] = [
                Bullet(cut(b.text, chars + LABEL_CHARS, b.lines[0]), b.lines) for b in kept
            ]

    def render(self) -> tuple[str, tuple[tuple[Heading, int], ...]]:
        """The checkpoint marker and the nine sections, and the bullets each holds."""
        parts = [CHECKPOINT_MARKER]
        counts = []
        for heading in Heading:
            as_is = self.fitted and heading is Heading.CONSTRAINTS
            merged = (
                self.bullets[heading]
                if as_is
                else _merge(self.bullets[heading], bound=heading is not Heading.CONSTRAINTS)
            )
            counts.append((heading, len(merged)))
            parts.append(render_section(heading, merged, self.omitted[heading]))
        return "\n\n".join(parts), tuple(counts)


def human_prompts(items: Sequence[EvidenceItem]) -> list[EvidenceItem]:
    """The evidence items that are messages a human typed."""
    return [item for item in items if item.kind is EvidenceKind.HUMAN_PROMPT]


def derive_sections(
    sections: Sections, items: Sequence[EvidenceItem], state: DeterministicState, bounds: Bounds, cap: int
) -> None:
    """Every section but the human messages' (Goal and Constraints): quoted and capped by `bounds`."""
    limit = bounds.quote_chars
    prompts = human_prompts(items)
    conclusions, latest = turns(items)
    sections.add(Heading.COMPLETED, [quote(item, limit) for item in conclusions], cap)
    in_progress = [quote(latest, limit, "Latest update: ")] if latest is not None else []
    in_progress += [
        Bullet(f"{_TODO_LABEL[t.status]}: {cut(t.content, limit, t.line)}", (t.line,))
        for t in state.todos
        if t.status in _TODO_LABEL
    ]
    sections.add(Heading.IN_PROGRESS, in_progress, cap)
    sections.add(
        Heading.FILES, file_bullets(state, bounds.file_grain, bounds.named_directories), None
    )  # complete, grouped
    sections.add(
        Heading.COMMANDS,
        command_bullets(
            items, state, limit, bounds.command_grain, bounds.named_commands, bounds.commands_elsewhere
        ),
        None,
    )
    sections.add(Heading.DECISIONS, decision_bullets(items, limit), cap)
    sections.add(Heading.ERRORS, error_bullets(items, state.failures, limit), bounds.errors_kept)
    steps = [Bullet(cut(t.content, limit, t.line), (t.line,)) for t in state.todos if t.status == "pending"]
    if prompts and latest is None:  # the last prompt got no assistant text yet
        steps.append(
            Bullet(
                "Unanswered request: " + cut(prompts[-1].text, limit, prompts[-1].line), (prompts[-1].line,)
            )
        )
    sections.add(Heading.NEXT_STEPS, steps, cap)


def _merge(bullets: Iterable[Bullet], *, bound: bool = True) -> list[Bullet]:
    """Bullets with equal text become one, at the first one's place, citing their lines.

    `bound`: at most the first and newest of them; a human message's bullet cites every one, so
    that every human message of the span keeps its anchor.
    """
    merged: dict[str, list[int]] = {}
    for bullet in bullets:
        merged.setdefault(bullet.text, []).extend(bullet.lines)
    cite = bounded_lines if bound else _every_line
    return [Bullet(text, cite(lines)) for text, lines in merged.items()]


def _every_line(lines: Iterable[int]) -> tuple[int, ...]:
    return tuple(sorted(set(lines)))
