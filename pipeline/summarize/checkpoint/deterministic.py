"""The embedded deterministic summarizer: evidence in, one cited nine-section checkpoint out.

Nothing is invented: every bullet quotes or counts evidence items and cites the lines they
came from. Prior summaries are mandatory input and are folded in (or, on request, embedded
verbatim), so a session compressed again keeps one checkpoint and every user prompt. A summary
larger than its room is fitted into it (`fitting`): never refused for size, never cut silently
(every cut says where and how much). Same items, same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Final

from pipeline.errors import SummaryError
from pipeline.reasons import Figure, SummaryFailure
from pipeline.settings import MIN_SUMMARY_CHARS, SummarySettings
from pipeline.summarize.checkpoint.allocation import ListsCarried, allocate, list_levers
from pipeline.summarize.checkpoint.appendix import render_appendix, strip_appendix
from pipeline.summarize.checkpoint.assembly import Sections, derive_sections, human_prompts
from pipeline.summarize.checkpoint.bullets import refusal_bullets
from pipeline.summarize.checkpoint.chunked import Partial, reduced, span_state
from pipeline.summarize.checkpoint.document import (
    HEADING,
    NONE_BULLET,
    Bullet,
    CheckpointInvalid,
    Heading,
    checkpoint_start,
    parse_bullets,
    read_prior,
    render_section,
    validate_checkpoint,
)
from pipeline.summarize.checkpoint.fitting import (
    LADDER,
    PROMPT_FLOOR_CHARS,
    TRAIL_RECORDS,
    USER_TEXT_SHARE,
    Bounds,
    PromptFit,
    PromptUnit,
    SummaryFit,
    bounded_prompt,
    fit_prompts,
    floor_chars,
    prompt_units,
)
from pipeline.summarize.evidence.items import EvidenceItem, EvidenceKind
from pipeline.summarize.evidence.work_state import DeterministicState

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
    "write_partial",
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


class InvalidSummaryOptions(SummaryError):
    """A summary option is below its minimum."""

    def __init__(self, option: str, value: int, minimum: int) -> None:
        self.option, self.value, self.minimum = option, value, minimum
        figures = ((Figure.VALUE, value), (Figure.MINIMUM, minimum))
        message = f"summary option {option}={value} is below its minimum {minimum}"
        super().__init__(SummaryFailure.INVALID_OPTIONS, figures, message)


class SummaryBudgetExceeded(SummaryError):
    """The summary needs more characters than its budget allows (counts only).

    Never raised for the evidence's size (the summary is fitted); only if fitting failed, a bug.
    """

    def __init__(self, chars: int, budget: int) -> None:
        self.chars, self.budget = chars, budget
        figures = ((Figure.NEEDED_CHARS, chars), (Figure.ALLOWED_CHARS, budget))
        message = f"summary needs {chars} characters; the budget is {budget}"
        super().__init__(SummaryFailure.BUDGET_EXCEEDED, figures, message)


@dataclass(frozen=True, slots=True)
class SummaryOptions(SummarySettings):
    """Bounds of one deterministic summary: the `[summary]` section's, with the run's character
    budget and whether prior summaries are kept verbatim (defaults: config/default.toml)."""

    char_budget: int
    preserve_prior_verbatim: bool

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
            "chunk_evidence_items",
        ):
            if getattr(self, name) < 1:
                raise InvalidSummaryOptions(name, getattr(self, name), 1)

    def bounds(self) -> Bounds:
        """The widest bounds: these options' own."""
        return Bounds(
            self.max_quote_chars,
            self.max_bullets_per_section,
            self.max_file_operations,
            self.max_validation_records,
            self.max_active_work_records,
            TRAIL_RECORDS,
        )


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
    fit: SummaryFit | None = None  # set when the whole summary did not fit its room

    def bullets(self, heading: Heading) -> int:
        """Content bullets in one section (omission markers and `- None` not counted)."""
        return dict(self.section_bullets)[heading]


def write_summary(
    items: Sequence[EvidenceItem], options: SummaryOptions, room: int | None = None
) -> SummaryResult:
    """The checkpoint and appendix for `items`, within `room` characters (default: the budget).

    A summary that holds everything within its room is returned as it is; one that does not is
    fitted (`fitting`): it never fails for size. A span of more than `chunk_evidence_items` items
    is read in chunks and merged in rounds (`chunked`), then written and fitted as one.
    """
    if len(items) > options.chunk_evidence_items:
        return write_partial(reduced(items, options.chunk_evidence_items).partial, options, room)
    return _written(items, span_state(items), options, room)


def write_partial(partial: Partial, options: SummaryOptions, room: int | None = None) -> SummaryResult:
    """The checkpoint and appendix of a span read into `partial` (`write_summary`)."""
    return _written(partial.quoted, partial.state, options, room)


def _written(
    items: Sequence[EvidenceItem], state: DeterministicState, options: SummaryOptions, room: int | None
) -> SummaryResult:
    # A room under the minimum (a head of many pinned anchors) still gets it: the headings need it.
    budget = options.char_budget if room is None else max(MIN_CHAR_BUDGET, min(room, options.char_budget))
    priors = tuple(item for item in items if item.kind is EvidenceKind.PRIOR_SUMMARY)
    fallback = None
    if options.preserve_prior_verbatim and priors:
        verbatim_budget = int(budget * VERBATIM_BUDGET_FACTOR)
        result = _compose(items, priors, state, options, PriorMode.VERBATIM, verbatim_budget)
        if len(result.text) <= verbatim_budget:
            return _whole_prompts(items, priors, state, options, result)
        fallback = FallbackReason.VERBATIM_OVER_BUDGET
    mode = PriorMode.FOLDED if priors else PriorMode.NONE
    result = _compose(items, priors, state, options, mode, budget)
    if len(result.text) > budget:
        result = _fitted(items, priors, state, options, budget, needed=len(result.text))
    else:
        result = _whole_prompts(items, priors, state, options, result)
    return replace(result, fallback_reason=fallback)


def _compose(
    items: Sequence[EvidenceItem],
    priors: Sequence[EvidenceItem],
    state: DeterministicState,
    options: SummaryOptions,
    mode: PriorMode,
    budget: int,
    whole: frozenset[int] = frozenset(),
    prose: tuple[int, int] | None = None,
) -> SummaryResult:
    """Everything the evidence holds, within the options' own bounds (the prompts at lines `whole`
    kept whole in Constraints, past `max_prompt_chars`; the assistant's prose within `prose`'s
    bullets and characters, when given)."""
    sections = Sections()
    for prior in priors:
        if mode is PriorMode.VERBATIM:
            sections.bullets[Heading.COMPLETED].append(_verbatim(prior))
        else:
            sections.carry(read_prior(prior.text, prior.line, options.max_quote_chars))
    bounds = options.bounds()
    derive_sections(sections, items, state, bounds, options.max_bullets_per_section)
    if prose is not None:
        sections.cap_prose(*prose)
    prompts = human_prompts(items)
    asked = [Bullet(bounded_prompt(p.text, options.max_prompt_chars, p.line), (p.line,)) for p in prompts]
    sections.add(Heading.GOAL, asked[:1] + asked[-1:] if len(asked) > 1 else asked, None)
    said = [Bullet(p.text, a.lines) if p.line in whole else a for p, a in zip(prompts, asked, strict=True)]
    # every prompt and every refusal, in line order: exempt from the bullet cap
    sections.add(Heading.CONSTRAINTS, _with_refusals(said, state, options), None)
    return _result(sections, state, bounds, priors, mode, budget)


def _whole_prompts(
    items: Sequence[EvidenceItem],
    priors: Sequence[EvidenceItem],
    state: DeterministicState,
    options: SummaryOptions,
    result: SummaryResult,
) -> SummaryResult:
    """The summary with the prompts `max_prompt_chars` cut kept whole, newest first, while its
    room holds them: a long paste is the user's own words, and what a cut loses a resumed agent
    cannot ask for again. The assistant's prose (`PROSE_SECTIONS`) gives its room first, rung by
    rung of `LADDER` (every other section keeps its own). A summary with no such prompt is returned
    as it is."""
    long = [p.line for p in reversed(human_prompts(items)) if len(p.text) > options.max_prompt_chars]
    if not long:
        return result
    widest = options.bounds()
    rungs = [(r.bullets_per_section, r.quote_chars) for r in (rung.within(widest) for rung in LADDER)]
    proses = [None, *dict.fromkeys(p for p in rungs if p != (widest.bullets_per_section, widest.quote_chars))]
    whole: frozenset[int] = frozenset()
    level = 0  # the prose never grows back: an older prompt gets what the newer ones left
    for line in long:  # a summary within its room holds few prompts past the bound
        for at in range(level, len(proses)):
            trial = _compose(
                items, priors, state, options, result.prior_mode, result.budget, whole | {line}, proses[at]
            )
            if len(trial.text) <= result.budget:
                whole, result, level = whole | {line}, trial, at
                break
    return result


def _with_refusals(asked: list[Bullet], state: DeterministicState, options: SummaryOptions) -> list[Bullet]:
    """The human messages and, beside them, the user's refusals of tool calls: both are the user's say."""
    refused = refusal_bullets(state.failures, options.max_quote_chars)
    return sorted([*asked, *refused], key=lambda bullet: bullet.lines[0])


def _fitted(
    items: Sequence[EvidenceItem],
    priors: Sequence[EvidenceItem],
    state: DeterministicState,
    options: SummaryOptions,
    budget: int,
    needed: int,
) -> SummaryResult:
    """The summary under the loosest rung of the ladder that leaves the human messages their room."""
    rungs = tuple(dict.fromkeys(rung.within(options.bounds()) for rung in LADDER))
    mode = PriorMode.FOLDED if priors else PriorMode.NONE
    units = _requests(items, priors, state, options)
    # When the floor alone is over the room, no rung meets it: go to the tightest at once.
    first = len(rungs) if floor_chars(units, options.max_prompt_chars) > budget else 1
    chars = needed
    for level, bounds in enumerate(rungs[first - 1 :], first):
        sections = _fitted_sections(items, priors, state, options, bounds)
        before = sections.omitted[Heading.CONSTRAINTS]
        room = budget - _chars_besides_constraints(sections, state, bounds)
        room -= 0 if units or before else len(NONE_BULLET) + 1
        fit = fit_prompts(units, room, options.max_prompt_chars, before)
        enough = fit.verbatim == len(units) or room >= USER_TEXT_SHARE * budget
        if level < len(rungs) and not (fit.floor_met and enough):
            continue  # tighten the other sections before the human messages get less
        sections.bullets[Heading.CONSTRAINTS] = list(fit.bullets)
        sections.omitted[Heading.CONSTRAINTS] = fit.omitted
        sections.fitted = True
        result = _result(sections, state, bounds, priors, mode, budget)
        chars = len(result.text)
        if chars <= budget:
            facts = SummaryFit(
                needed,
                budget,
                level,
                len(units),
                fit.verbatim,
                fit.cut,
                fit.anchors_only,
                fit.omitted - before,
                fit.head_chars,
            )
            result = _named_in_room(items, priors, state, options, bounds, fit, result)
            return replace(result, fit=facts)
    raise SummaryBudgetExceeded(chars, budget)  # a bug: the last rung holds any evidence


def _named_in_room(
    items: Sequence[EvidenceItem],
    priors: Sequence[EvidenceItem],
    state: DeterministicState,
    options: SummaryOptions,
    bounds: Bounds,
    fit: PromptFit,
    result: SummaryResult,
) -> SummaryResult:
    """The lists name again what the room left holds, each its share (`allocation`): directories
    whole (modified files first, then the most recent), the most recent commands that Errors or the
    user's refusals do not already name with how they ended, older failures. The rest stays
    counted, each where it is."""

    def attempt(trial: Bounds) -> SummaryResult:
        sections = _fitted_sections(items, priors, state, options, trial)
        sections.bullets[Heading.CONSTRAINTS] = list(fit.bullets)
        sections.omitted[Heading.CONSTRAINTS] = fit.omitted
        sections.fitted = True
        return _result(sections, state, trial, priors, result.prior_mode, result.budget)

    errors = _fitted_sections(items, priors, state, options, bounds).bullets[Heading.ERRORS]
    every_error = replace(bounds, kept_errors=options.bounds().trail_records)
    failures = len(_fitted_sections(items, priors, state, options, every_error).bullets[Heading.ERRORS])
    bounds, levers = list_levers(bounds, state, ListsCarried(errors, fit.bullets, failures))
    chosen = allocate(bounds, levers, lambda trial: len(attempt(trial).text), result.budget)
    written = attempt(chosen)
    return written if len(written.text) <= result.budget else result


def _requests(
    items: Sequence[EvidenceItem],
    priors: Sequence[EvidenceItem],
    state: DeterministicState,
    options: SummaryOptions,
) -> tuple[PromptUnit, ...]:
    """What Constraints must hold: the prior summaries' Constraints bullets, then this span's prompts
    and refusals, in line order."""
    carried = Sections()
    for prior in priors:  # our own Constraints bullets are carried as written, whatever the quote bound
        carried.carry(read_prior(prior.text, prior.line, options.max_quote_chars))
    prompts = [Bullet(p.text, (p.line,)) for p in human_prompts(items)]
    return prompt_units([*carried.bullets[Heading.CONSTRAINTS], *_with_refusals(prompts, state, options)])


def _fitted_sections(
    items: Sequence[EvidenceItem],
    priors: Sequence[EvidenceItem],
    state: DeterministicState,
    options: SummaryOptions,
    bounds: Bounds,
) -> Sections:
    """Every section but Constraints under `bounds` (of the priors' Constraints, only their omissions)."""
    sections = Sections()
    for prior in priors:
        sections.carry(read_prior(prior.text, prior.line, bounds.quote_chars))
    sections.bullets[Heading.CONSTRAINTS] = []
    derive_sections(sections, items, state, bounds, bounds.bullets_per_section)
    prompts = human_prompts(items)
    goal = [Bullet(p.text, (p.line,)) for p in (prompts[:1] + prompts[-1:])]
    sections.add(Heading.GOAL, goal if len(prompts) > 1 else goal[:1], None)
    sections.cap(bounds, min(PROMPT_FLOOR_CHARS, options.max_prompt_chars))
    return sections


def _result(
    sections: Sections,
    state: DeterministicState,
    bounds: Bounds,
    priors: Sequence[EvidenceItem],
    mode: PriorMode,
    budget: int,
) -> SummaryResult:
    checkpoint, counts = sections.render()
    text = f"{checkpoint}\n\n{_appendix(state, bounds)}\n"
    defects = validate_checkpoint(text)
    if defects:  # a bug here, never the input's fault: refuse rather than publish a broken checkpoint
        raise CheckpointInvalid(defects)
    cited = sorted({line for bullet in parse_bullets(text.split("\n")) for line in bullet.lines})
    return SummaryResult(text, tuple(cited), counts, tuple(p.line for p in priors), mode, None, budget)


def _appendix(state: DeterministicState, bounds: Bounds) -> str:
    return render_appendix(
        state,
        max_file_operations=bounds.file_operations,
        max_validation_records=bounds.validation_records,
        max_active_work_records=bounds.active_work_records,
        max_command_chars=bounds.quote_chars,
        max_references=bounds.trail_records,
    )


def _chars_besides_constraints(sections: Sections, state: DeterministicState, bounds: Bounds) -> int:
    """The summary's characters outside the Constraints section's bullet lines (its heading included)."""
    checkpoint, _ = sections.render()
    placeholder = render_section(Heading.CONSTRAINTS, [], sections.omitted[Heading.CONSTRAINTS])
    heading = len(HEADING + Heading.CONSTRAINTS)
    return len(checkpoint) - len(placeholder) + heading + len(_appendix(state, bounds)) + 3


def _verbatim(prior: EvidenceItem) -> Bullet:
    start = checkpoint_start(prior.text)
    body = prior.text if start is None else prior.text[:start] + strip_appendix(prior.text[start:])
    return Bullet(
        f"Prior summary, verbatim ({len(body)} characters):\n{PRIOR_BLOCK_START}\n{body}\n{PRIOR_BLOCK_END}",
        (prior.line,),
    )
