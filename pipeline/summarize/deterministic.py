"""The embedded deterministic summarizer: evidence in, one cited nine-section checkpoint out.

Nothing is invented: every bullet quotes or counts evidence items and cites the lines they
came from. Prior summaries are mandatory input and are folded in (or, on request, embedded
verbatim), so a session compressed again keeps one checkpoint and every user prompt. The text
over budget is an error, never silently cut. Same items, same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Final

from pipeline.errors import CompactionError
from pipeline.settings import MIN_SUMMARY_CHARS
from pipeline.summarize.appendix import parse_appendix, render_appendix, strip_appendix
from pipeline.summarize.bullets import (
    command_bullets,
    decision_bullets,
    error_bullets,
    file_bullets,
    quote,
    turns,
)
from pipeline.summarize.checkpoint import (
    CHECKPOINT_MARKER,
    Bullet,
    CheckpointInvalid,
    Heading,
    PriorContent,
    bounded_lines,
    checkpoint_start,
    cut,
    parse_bullets,
    read_prior,
    render_section,
    validate_checkpoint,
)
from pipeline.summarize.evidence import EvidenceItem, EvidenceKind
from pipeline.summarize.work_state import DeterministicState, collect_state

__all__ = [
    "MIN_CHAR_BUDGET",
    "PRIOR_BLOCK_END",
    "PRIOR_BLOCK_START",
    "VERBATIM_BUDGET_FACTOR",
    "FallbackReason",
    "InvalidSummaryOptions",
    "PriorMode",
    "SummaryBudgetExceeded",
    "SummaryOptions",
    "SummaryResult",
    "write_summary",
]

MIN_CHAR_BUDGET: Final = MIN_SUMMARY_CHARS  # below it the nine headings and an appendix crowd out content
VERBATIM_BUDGET_FACTOR: Final = 1.5  # prior summaries copied verbatim may grow the budget by half
PRIOR_BLOCK_START: Final = "<<<<<<< prior summary (verbatim)"
PRIOR_BLOCK_END: Final = ">>>>>>> end of prior summary"


class PriorMode(StrEnum):
    """How prior summaries entered the new checkpoint."""

    NONE = "none"
    FOLDED = "folded"
    VERBATIM = "verbatim"


class FallbackReason(StrEnum):
    """Why verbatim preservation fell back to folding."""

    VERBATIM_OVER_BUDGET = "verbatim-over-budget"


class InvalidSummaryOptions(CompactionError):
    """A summary option is below its minimum."""

    def __init__(self, option: str, value: int, minimum: int) -> None:
        self.option, self.value, self.minimum = option, value, minimum
        super().__init__(f"summary option {option}={value} is below its minimum {minimum}")


class SummaryBudgetExceeded(CompactionError):
    """The summary needs more characters than its budget allows (counts only)."""

    def __init__(self, chars: int, budget: int) -> None:
        self.chars, self.budget = chars, budget
        super().__init__(f"summary needs {chars} characters; the budget is {budget}")


@dataclass(frozen=True, slots=True)
class SummaryOptions:
    """Bounds of one deterministic summary (defaults: config/default.toml)."""

    char_budget: int
    preserve_prior_verbatim: bool
    max_bullets_per_section: int
    max_quote_chars: int
    max_prompt_chars: int
    max_file_operations: int
    max_validation_records: int
    max_active_work_records: int

    def __post_init__(self) -> None:
        if self.char_budget < MIN_CHAR_BUDGET:
            raise InvalidSummaryOptions("char_budget", self.char_budget, MIN_CHAR_BUDGET)
        for name in (
            "max_bullets_per_section",
            "max_quote_chars",
            "max_prompt_chars",
            "max_file_operations",
            "max_validation_records",
            "max_active_work_records",
        ):
            if getattr(self, name) < 1:
                raise InvalidSummaryOptions(name, getattr(self, name), 1)


@dataclass(frozen=True, slots=True)
class SummaryResult:
    """The checkpoint text and what it is made of (line numbers and counts, no text)."""

    text: str
    cited_lines: tuple[int, ...]
    section_bullets: tuple[tuple[Heading, int], ...]
    prior_summaries: tuple[int, ...]
    prior_mode: PriorMode
    fallback_reason: FallbackReason | None
    budget: int

    def bullets(self, heading: Heading) -> int:
        """Content bullets in one section (omission markers and `- None` not counted)."""
        return dict(self.section_bullets)[heading]


@dataclass(slots=True)
class _Sections:
    """Bullets per section, carried ones first; capped sections keep their newest derived bullets."""

    bullets: dict[Heading, list[Bullet]] = field(default_factory=lambda: {heading: [] for heading in Heading})
    omitted: dict[Heading, int] = field(default_factory=lambda: dict.fromkeys(Heading, 0))

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

    def render(self) -> tuple[str, tuple[tuple[Heading, int], ...]]:
        parts = [CHECKPOINT_MARKER]
        counts = []
        for heading in Heading:
            merged = _merge(self.bullets[heading])
            counts.append((heading, len(merged)))
            parts.append(render_section(heading, merged, self.omitted[heading]))
        return "\n\n".join(parts), tuple(counts)


def write_summary(items: Sequence[EvidenceItem], options: SummaryOptions) -> SummaryResult:
    """The checkpoint and appendix for `items`; raises SummaryBudgetExceeded when it does not fit."""
    priors = tuple(item for item in items if item.kind is EvidenceKind.PRIOR_SUMMARY)
    fallback = None
    if options.preserve_prior_verbatim and priors:
        budget = int(options.char_budget * VERBATIM_BUDGET_FACTOR)
        result = _compose(items, priors, options, PriorMode.VERBATIM, budget)
        if len(result.text) <= budget:
            return result
        fallback = FallbackReason.VERBATIM_OVER_BUDGET
    mode = PriorMode.FOLDED if priors else PriorMode.NONE
    result = _compose(items, priors, options, mode, options.char_budget)
    if len(result.text) > options.char_budget:
        raise SummaryBudgetExceeded(len(result.text), options.char_budget)
    return SummaryResult(
        result.text,
        result.cited_lines,
        result.section_bullets,
        result.prior_summaries,
        result.prior_mode,
        fallback,
        result.budget,
    )


def _compose(
    items: Sequence[EvidenceItem],
    priors: Sequence[EvidenceItem],
    options: SummaryOptions,
    mode: PriorMode,
    budget: int,
) -> SummaryResult:
    sections = _Sections()
    for prior in priors:
        if mode is PriorMode.VERBATIM:
            sections.bullets[Heading.COMPLETED].append(_verbatim(prior))
        else:
            sections.carry(read_prior(prior.text, prior.line, options.max_quote_chars))
    state = collect_state(items, [parse_appendix(_own_part(p.text), p.line) for p in priors])
    _derive(sections, items, state, options)
    checkpoint, counts = sections.render()
    appendix = render_appendix(
        state,
        max_file_operations=options.max_file_operations,
        max_validation_records=options.max_validation_records,
        max_active_work_records=options.max_active_work_records,
        max_command_chars=options.max_quote_chars,
    )
    text = f"{checkpoint}\n\n{appendix}\n"
    defects = validate_checkpoint(text)
    if defects:  # a bug here, never the input's fault: refuse rather than publish a broken checkpoint
        raise CheckpointInvalid(defects)
    cited = sorted({line for bullet in parse_bullets(text.split("\n")) for line in bullet.lines})
    return SummaryResult(text, tuple(cited), counts, tuple(p.line for p in priors), mode, None, budget)


def _own_part(text: str) -> str:
    start = checkpoint_start(text)
    return "" if start is None else text[start:]


def _verbatim(prior: EvidenceItem) -> Bullet:
    start = checkpoint_start(prior.text)
    body = prior.text if start is None else prior.text[:start] + strip_appendix(prior.text[start:])
    return Bullet(
        f"Prior summary, verbatim ({len(body)} characters):\n{PRIOR_BLOCK_START}\n{body}\n{PRIOR_BLOCK_END}",
        (prior.line,),
    )


def _merge(bullets: Iterable[Bullet]) -> list[Bullet]:
    """Bullets with equal text become one, at the first one's place, citing all their lines."""
    merged: dict[str, list[int]] = {}
    for bullet in bullets:
        merged.setdefault(bullet.text, []).extend(bullet.lines)
    return [Bullet(text, bounded_lines(lines)) for text, lines in merged.items()]


# ---------------------------------------------------------------------------------------------- sections
def _derive(
    sections: _Sections, items: Sequence[EvidenceItem], state: DeterministicState, options: SummaryOptions
) -> None:
    cap = options.max_bullets_per_section
    limit = options.max_quote_chars
    prompts = [item for item in items if item.kind is EvidenceKind.HUMAN_PROMPT]
    conclusions, latest = turns(items)
    asked = [Bullet(cut(p.text, options.max_prompt_chars, p.line), (p.line,)) for p in prompts]
    sections.add(Heading.GOAL, asked[:1] + asked[-1:] if len(asked) > 1 else asked, None)
    sections.add(Heading.CONSTRAINTS, asked, None)  # every prompt: exempt from the bullet cap
    sections.add(Heading.COMPLETED, [quote(item, limit) for item in conclusions], cap)
    in_progress = [quote(latest, limit, "Latest update: ")] if latest is not None else []
    in_progress += [
        Bullet(f"{_TODO_LABEL[t.status]}: {cut(t.content, limit, t.line)}", (t.line,))
        for t in state.todos
        if t.status in _TODO_LABEL
    ]
    sections.add(Heading.IN_PROGRESS, in_progress, cap)
    sections.add(Heading.FILES, file_bullets(state), cap)
    sections.add(Heading.COMMANDS, command_bullets(items, state, limit), cap)
    sections.add(Heading.DECISIONS, decision_bullets(items, limit), cap)
    sections.add(Heading.ERRORS, error_bullets(items, limit), cap)
    steps = [Bullet(cut(t.content, limit, t.line), (t.line,)) for t in state.todos if t.status == "pending"]
    if prompts and latest is None:  # the last prompt got no assistant text yet
        steps.append(
            Bullet(
                "Unanswered request: " + cut(prompts[-1].text, limit, prompts[-1].line), (prompts[-1].line,)
            )
        )
    sections.add(Heading.NEXT_STEPS, steps, cap)


_TODO_LABEL: Final = {"in_progress": "In progress", "pending": "Pending"}
