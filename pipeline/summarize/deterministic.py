"""The embedded deterministic summarizer: evidence in, one cited nine-section checkpoint out.

Nothing is invented: every bullet quotes or counts evidence items and cites the lines they
came from. Prior summaries are mandatory input and are folded in (or, on request, embedded
verbatim), so a session compressed again keeps one checkpoint and every user prompt. The text
over budget is an error, never silently cut. Same items, same bytes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Final

from pipeline.errors import CompactionError
from pipeline.settings import MIN_SUMMARY_CHARS
from pipeline.summarize.appendix import (
    DeterministicState,
    collect_state,
    parse_appendix,
    render_appendix,
    strip_appendix,
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
from pipeline.summarize.shell import CommandOutcome, FileAction

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
MAX_LISTED_PATHS: Final = 12  # paths named in the Files bullets; the appendix lists the rest
PRIOR_BLOCK_START: Final = "<<<<<<< prior summary (verbatim)"
PRIOR_BLOCK_END: Final = ">>>>>>> end of prior summary"
DECISION_KEYWORDS: Final = (
    "decided",
    "decision",
    "we'll go with",
    "i'll go with",
    "going with",
    "settled on",
    "opted",
    "i chose",
    "we chose",
    "chose to",
    "решил",
    "решение",
    "выбрал",
    "决定",
    "选择",
    "采用",
    "決定",
    "決め",
    "採用",
    "결정",
    "decidí",
    "decidimos",
    "decisión",
    "décidé",
    "décision",
    "entschieden",
    "entscheidung",
    "decidi",
    "decisão",
    "deciso",
    "decisione",
    "قرر",
    "قرار",
)
"""Phrases that mark an assistant sentence recording a decision (lower case, several languages)."""
_DECISION: Final = re.compile("|".join(re.escape(keyword) for keyword in DECISION_KEYWORDS))
_SENTENCE: Final = re.compile(r"(?<=[.!?。！？])\s+|\n+")  # noqa: RUF001 - CJK sentence ends are meant
_EXIT_LINE: Final = re.compile(r"Exit code \d+")
_ANSWERED: Final = "User has answered your questions: "  # Claude Code's AskUserQuestion result lead
_COMMAND_NAME: Final = re.compile(r"<command-name>(.*?)</command-name>", re.S)
_COMMAND_ARGS: Final = re.compile(r"<command-args>(.*?)</command-args>", re.S)
_BASH_INPUT: Final = re.compile(r"<bash-input>(.*?)</bash-input>", re.S)


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
    quote = options.max_quote_chars
    prompts = [item for item in items if item.kind is EvidenceKind.HUMAN_PROMPT]
    conclusions, latest = _turns(items)
    asked = [Bullet(cut(p.text, options.max_prompt_chars, p.line), (p.line,)) for p in prompts]
    sections.add(Heading.GOAL, asked[:1] + asked[-1:] if len(asked) > 1 else asked, None)
    sections.add(Heading.CONSTRAINTS, asked, None)  # every prompt: exempt from the bullet cap
    sections.add(Heading.COMPLETED, [_quote(item, quote) for item in conclusions], cap)
    in_progress = [_quote(latest, quote, "Latest update: ")] if latest is not None else []
    in_progress += [
        Bullet(f"{_TODO_LABEL[t.status]}: {cut(t.content, quote, t.line)}", (t.line,))
        for t in state.todos
        if t.status in _TODO_LABEL
    ]
    sections.add(Heading.IN_PROGRESS, in_progress, cap)
    sections.add(Heading.FILES, _files(state), cap)
    sections.add(Heading.COMMANDS, _commands(items, state, quote), cap)
    sections.add(Heading.DECISIONS, _decisions(items, quote), cap)
    sections.add(Heading.ERRORS, _errors(items, quote), cap)
    steps = [Bullet(cut(t.content, quote, t.line), (t.line,)) for t in state.todos if t.status == "pending"]
    if prompts and latest is None:  # the last prompt got no assistant text yet
        steps.append(
            Bullet(
                "Unanswered request: " + cut(prompts[-1].text, quote, prompts[-1].line), (prompts[-1].line,)
            )
        )
    sections.add(Heading.NEXT_STEPS, steps, cap)


_TODO_LABEL: Final = {"in_progress": "In progress", "pending": "Pending"}


def _turns(items: Sequence[EvidenceItem]) -> tuple[list[EvidenceItem], EvidenceItem | None]:
    """The last assistant text of every turn a later prompt closed, and of the open last turn."""
    conclusions: list[EvidenceItem] = []
    last: EvidenceItem | None = None
    for item in items:
        if item.kind is EvidenceKind.HUMAN_PROMPT:
            if last is not None:
                conclusions.append(last)
            last = None
        elif item.kind is EvidenceKind.ASSISTANT_TEXT:
            last = item
    return conclusions, last


def _quote(item: EvidenceItem, limit: int, label: str = "") -> Bullet:
    return Bullet(label + cut(item.text.strip(), limit, item.line), (item.line,))


def _files(state: DeterministicState) -> list[Bullet]:
    bullets = []
    for action, noun in ((FileAction.MODIFIED, "Modified"), (FileAction.READ, "Read")):
        ops = [op for op in state.file_operations if op.action is action]
        if not ops:
            continue
        shown = ops[-MAX_LISTED_PATHS:]
        hidden = len(ops) - len(shown)
        more = f" and {hidden} more (see File operations below)" if hidden else ""
        paths = ", ".join(op.path for op in shown)
        bullets.append(
            Bullet(f"{noun} {len(ops)} paths: {paths}{more}", bounded_lines(op.lines[-1] for op in shown))
        )
    return bullets


def _commands(items: Sequence[EvidenceItem], state: DeterministicState, quote: int) -> list[Bullet]:
    """Shell commands (latest run of each, with its outcome) and slash commands, in line order."""
    dated = [
        (run.lines[-1], Bullet(f"{run.outcome}: {cut(run.command, quote, run.lines[0])}", run.lines))
        for run in state.commands
    ]
    for item in items:
        if item.kind is EvidenceKind.COMMAND:
            name = _COMMAND_NAME.search(item.text)
            shell = _BASH_INPUT.search(item.text)
            if name is not None:
                args = _COMMAND_ARGS.search(item.text)
                line = f"{name.group(1).strip()} {args.group(1).strip() if args else ''}".strip()
                bullet = Bullet("slash command: " + cut(line, quote, item.line), (item.line,))
                dated.append((item.line, bullet))
            elif shell is not None:
                text = cut(shell.group(1).strip(), quote, item.line)
                bullet = Bullet(f"{CommandOutcome.UNKNOWN}: {text} (user shell)", (item.line,))
                dated.append((item.line, bullet))
    dated.sort(key=lambda pair: pair[0])
    return [bullet for _, bullet in dated]


def _decisions(items: Sequence[EvidenceItem], quote: int) -> list[Bullet]:
    calls = {item.tool_id: item for item in items if item.kind is EvidenceKind.TOOL_CALL and item.tool_id}
    bullets = []
    for item in items:
        if item.kind is EvidenceKind.ASSISTANT_TEXT and _DECISION.search(item.text.casefold()):
            chosen = [s.strip() for s in _SENTENCE.split(item.text) if _DECISION.search(s.casefold())]
            if chosen:
                bullets.append(Bullet(cut(" ".join(chosen), quote, item.line), (item.line,)))
        elif item.kind is EvidenceKind.TOOL_RESULT and not item.is_error and item.text.strip():
            call = calls.get(item.tool_id or "")
            if item.tool_name == "AskUserQuestion":
                lines = (item.line,) if call is None else (call.line, item.line)
                answer = item.text.strip().removeprefix(_ANSWERED)
                bullets.append(Bullet("User answered: " + cut(answer, quote, item.line), lines))
            elif item.tool_name == "ExitPlanMode" and call is not None:
                plan = call.tool_input.get("plan")
                head = _first_line(plan) if isinstance(plan, str) else ""
                approved = "Plan approved: " + cut(head, quote, call.line)
                bullets.append(Bullet(approved, (call.line, item.line)))
    return bullets


def _errors(items: Sequence[EvidenceItem], quote: int) -> list[Bullet]:
    bullets = []
    for item in items:
        if item.kind is EvidenceKind.TOOL_RESULT and item.is_error:
            label = f"{item.tool_name or 'tool'} error: "
        elif item.kind is EvidenceKind.SYSTEM_ERROR:
            label = "system error: "
        else:
            continue
        bullets.append(Bullet(label + cut(_first_line(item.text), quote, item.line), (item.line,)))
    return bullets


def _first_line(text: str) -> str:
    """The first non-blank line; after a bare `Exit code N`, the line that explains it too."""
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    if not lines:
        return "(no message)"
    head = lines[0].removeprefix("<tool_use_error>").removesuffix("</tool_use_error>")
    if _EXIT_LINE.fullmatch(head) and len(lines) > 1:
        head = f"{head}: {lines[1]}"
    return head
