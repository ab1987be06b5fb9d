"""The reminders Claude Code adds to what it sends, read apart from the transcript's own content.

Claude Code 2.1.332 derives reminders at resume time (deferred tools newly available or gone,
agent and skill listings, MCP instructions, the date, the environment) from the attachment
records of the whole chain, and sends them three ways depending on the model: as
`<system-reminder>` text blocks of the last user message, as `system`-role messages, or folded
into the content of the last tool_result it sends. Two resumes compare on transcript content with
the reminders apart, and on the reminders themselves by paragraph: what the original says at
resume time the compaction must say too, and the compaction must say nothing the original never
says. Paths of the throwaway home are written as `<scratch>` so two runs compare. A difference is
named by the reminder's kind (a closed list of Claude Code's openers) and length, never its text.

Two kinds are cadences, not state: Claude Code nudges toward its task tools (and tool search)
once enough assistant turns passed without them, counting the turns it is sent, so a compaction,
which sends fewer turns by design, shifts when the nudge comes; those differences are notes. When
Claude Code compacted one resume and not the other, the reminders of the resume turn follow its
own compaction (it re-announces tools and listings after its summary), so only the reminders of
the kept part are compared, and a note says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

__all__ = [
    "REMINDER_PREFIX",
    "SCRATCH",
    "Reminder",
    "ReminderKind",
    "closing_paragraphs",
    "folded_reminders",
    "reminder_differences",
    "reminder_kind",
    "without_closing",
    "without_folded_reminders",
]


class ReminderKind(StrEnum):
    """What a reminder Claude Code adds says, named from its opener (never its text)."""

    DEFERRED_TOOLS = "deferred-tools"
    AGENT_LISTING = "agent-listing"
    SKILL_LISTING = "skill-listing"
    MCP_INSTRUCTIONS = "mcp-instructions"
    DATE = "date"
    ENVIRONMENT = "environment"
    MODEL = "model"
    TASKS = "tasks"
    TOKEN_BUDGET = "token-budget"
    ATTRIBUTION = "attribution"
    QUEUED_MESSAGE = "queued-message"
    BACKGROUND_TASKS = "background-tasks"  # tasks the chain started that never reported back
    READ = "read"  # the caution Claude Code closes a file read with
    OTHER = "other"


CADENCES: Final = frozenset({ReminderKind.TASKS})  # derived from turn counts, not from state

REMINDER_PREFIX: Final = "<system-reminder>"
_REMINDER_END: Final = "</system-reminder>"
SCRATCH: Final = "<scratch>"  # the throwaway home's path, the same for both resumes
# A run of reminders closing a string, with the whitespace Claude Code joins them by.
_TRAILING: Final = re.compile(r"(?:\s*<system-reminder>.*?</system-reminder>)+\s*\Z", re.DOTALL)
_SEGMENT: Final = re.compile(r"<system-reminder>(.*?)</system-reminder>", re.DOTALL)
_PARAGRAPH: Final = re.compile(r"\n\s*\n")
# How Claude Code renders a `task_status` record of a running shell (a carried one, on a candidate).
_RUNNING_SHELL: Final = re.compile(r"Background (?:shell|monitor) (\S+) \(")
# Claude Code's openers, by kind (2.1.332); a paragraph with no known opener takes the kind of the
# paragraph before it in the same reminder.
_OPENERS: Final = (
    ("The following deferred tools", ReminderKind.DEFERRED_TOOLS),
    ("deferred tool", ReminderKind.DEFERRED_TOOLS),
    ("Available agent types", ReminderKind.AGENT_LISTING),
    ("The following skills are available", ReminderKind.SKILL_LISTING),
    ("# MCP Server Instructions", ReminderKind.MCP_INSTRUCTIONS),
    ("Today's date", ReminderKind.DATE),
    ("The date has changed", ReminderKind.DATE),
    ("# Environment", ReminderKind.ENVIRONMENT),
    ("You are powered by the model", ReminderKind.MODEL),
    ("The task tools haven't been used", ReminderKind.TASKS),
    ("The TodoWrite tool hasn't been used", ReminderKind.TASKS),
    ("<total_tokens>", ReminderKind.TOKEN_BUDGET),
    ("Attribution for git commits", ReminderKind.ATTRIBUTION),
    ("The user sent the following message", ReminderKind.QUEUED_MESSAGE),
    ("[SYSTEM NOTIFICATION", ReminderKind.BACKGROUND_TASKS),
    ("Background shell ", ReminderKind.BACKGROUND_TASKS),
    ("Background monitor ", ReminderKind.BACKGROUND_TASKS),
    ("<task-notification>", ReminderKind.BACKGROUND_TASKS),
    (
        "Whenever you read a file, you should consider whether it would be considered malware",
        ReminderKind.READ,
    ),
)


@dataclass(frozen=True, slots=True)
class Reminder:
    """One reminder as sent: its text (scratch paths normalized) and where it stood.

    `position` is the index of the transcript block it was folded into (`inside`), or of the
    block it precedes (the number of blocks sent before it).
    """

    position: int
    text: str
    inside: bool = False


def reminder_kind(paragraph: str) -> ReminderKind | None:
    """The kind a paragraph's opener names, or None."""
    text = paragraph.strip().removeprefix(REMINDER_PREFIX).strip()
    return next((kind for opener, kind in _OPENERS if text.startswith(opener)), None)


def _paragraphs(reminder: Reminder) -> Iterable[tuple[str, ReminderKind]]:
    """The reminder's paragraphs (tags off, outer whitespace off), each with its kind."""
    inner = [m.group(1) for m in _SEGMENT.finditer(reminder.text)] or [reminder.text]
    for segment in inner:
        kind = ReminderKind.OTHER
        for piece in _PARAGRAPH.split(segment):
            paragraph = piece.strip()
            if paragraph:
                kind = reminder_kind(paragraph) or kind
                yield paragraph, kind


def _strip_string(text: str, tail: str = "") -> tuple[str, list[str]]:
    match = _TRAILING.search(text)
    if match is None or REMINDER_PREFIX not in match.group(0):
        return text, []
    return text[: match.start()] + tail, [m.group(0) for m in _SEGMENT.finditer(match.group(0))]


def _is_text_item(item: Any) -> bool:
    return isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("text"), str)


def _strip_items(items: list[Any], tail: str) -> tuple[Any, list[str]]:
    """Trailing reminder items off a content list; one text item left reads as its string."""
    kept: list[Any] = list(items)
    found: list[str] = []
    while kept and _is_text_item(kept[-1]):
        base, segments = _strip_string(kept[-1]["text"])
        if not segments:
            break
        found = segments + found
        if base.strip():
            kept[-1] = {**kept[-1], "text": base + tail}
            break
        kept.pop()
    if len(kept) == 1 and _is_text_item(kept[0]) and set(kept[0]) == {"type", "text"}:
        return kept[0]["text"], found
    return kept, found


def _split(shown: str, tail: str = "") -> tuple[str, list[str]]:
    """A tool_result's shown text (the JSON of its content) without its closing reminders, the
    whitespace before them replaced by `tail`."""
    try:
        content = json.loads(shown)
    except ValueError:
        return _strip_string(shown, tail)
    if isinstance(content, str):
        base, found = _strip_string(content, tail)
    elif isinstance(content, list):
        base, found = _strip_items(content, tail)
    else:
        return shown, []
    return (json.dumps(base), found) if found else (shown, [])


def without_folded_reminders(shown: str, tail: str = "") -> str:
    """The shown text of a tool_result with the reminders that close it taken off, and the
    whitespace Claude Code put before them (`tail` in its place: the content's own trailing
    whitespace cannot be told from Claude Code's separator)."""
    return _split(shown, tail)[0]


def folded_reminders(shown: str) -> list[str]:
    """The reminders closing a tool_result's shown text, in order."""
    return _split(shown)[1]


def _normalized(text: str, scratch: Sequence[str]) -> str:
    for path in scratch:
        if path:
            text = text.replace(path, SCRATCH)
    return text


def normalized(reminder: Reminder, scratch: Sequence[str]) -> Reminder:
    """The reminder with the throwaway home's paths written as `<scratch>`."""
    return Reminder(reminder.position, _normalized(reminder.text, scratch), reminder.inside)


def _after(reminder: Reminder, start: int) -> bool:
    """Whether a reminder stands within the original's part that a compaction keeps."""
    return reminder.position >= start if reminder.inside else reminder.position > start


def _describe(kind: ReminderKind, position: int, text: str, lost: bool) -> str:
    where = f"{kind.value} reminder before block {position} ({len(text)} chars)"
    if lost:
        return f"the original's {where} is not sent"
    return f"compacted {where} is not one the original sends"


def _carried(text: str, carried: frozenset[str]) -> bool:
    """Whether a paragraph is Claude Code's rendering of a background shell the candidate carries."""
    found = _RUNNING_SHELL.match(text)
    return found is not None and found.group(1) in carried


def _listing(text: str) -> tuple[str, frozenset[str]]:
    """A deferred-tools paragraph's opening line and the tool names listed on the lines after it."""
    head, _, rest = text.partition("\n")
    return head, frozenset(line.strip() for line in rest.splitlines() if line.strip())


def _lists_loaded(new: str, lost: Sequence[str], loaded: frozenset[str]) -> str | None:
    """Whether a deferred-tools paragraph the compacted resume sends is one the original sends but
    for tools the candidate declares loaded before its boundary: the original's paragraph it
    stands for ("" when the original sends none), or None."""
    head, names = _listing(new)
    extra = names & loaded
    if not extra:
        return None
    for text in lost:
        their_head, theirs = _listing(text)
        if their_head == head and theirs <= names and names - theirs <= loaded:
            return text
    return "" if names <= loaded else None


def _loaded_note(position: int, new: str, loaded: frozenset[str]) -> str:
    listed = ", ".join(sorted(_listing(new)[1] & loaded))
    return (
        f"compacted deferred-tools reminder before block {position} ({len(new)} chars) also lists {listed}, "
        "loaded before its boundary (preCompactDiscoveredTools), as after Claude Code's own compaction"
    )


_Paragraph = tuple[int, str, ReminderKind]  # where it stood, its text, its kind


def _listed_again(
    lost: Sequence[_Paragraph], new: Sequence[_Paragraph], loaded: frozenset[str]
) -> tuple[set[str], list[str]]:
    """The deferred-tools paragraphs explained by tools declared loaded (each new one and the lost
    one it stands for), and a note for each."""
    seen: set[str] = set()
    notes: list[str] = []
    listings = [text for _, text, kind in lost if kind is ReminderKind.DEFERRED_TOOLS]
    for position, text, kind in new:
        if kind is not ReminderKind.DEFERRED_TOOLS or text in seen:
            continue
        explained = _lists_loaded(text, listings, loaded)
        if explained is not None:
            seen.update((text, explained))
            notes.append(_loaded_note(position, text, loaded))
    return seen, notes


def reminder_differences(
    original: Sequence[Reminder],
    compacted: Sequence[Reminder],
    kept_from: int,
    carried: frozenset[str] = frozenset(),
    loaded: frozenset[str] = frozenset(),
) -> tuple[list[str], list[str]]:
    """What the compacted resume leaves out of, or adds to, the original's reminders: (differences,
    notes); a cadence's differences are notes.

    `kept_from` is the original's block where the kept part begins. Lost: a paragraph of a
    reminder the original sends within or after its kept part that the compacted resume never
    sends. New: a paragraph the compacted resume sends that the original sends nowhere (a
    reminder rendered from a projected record repeats one of the original's history), but for the
    one announcing a background shell the candidate declares it carries (`carried` task ids), and
    the deferred-tools listing that differs from the original's only by naming tools the candidate
    declares loaded before its boundary (`loaded`: Claude Code counts as loaded only the ToolSearch
    results after the last boundary, yet sends those tools' definitions): notes, as a model reads
    them after Claude Code's own compaction.
    """
    sent = {text for reminder in compacted for text, _ in _paragraphs(reminder)}
    anywhere = {text for reminder in original for text, _ in _paragraphs(reminder)}
    lost = [
        (reminder.position, text, kind)
        for reminder in original
        if _after(reminder, kept_from)
        for text, kind in _paragraphs(reminder)
        if text not in sent
    ]
    new = [
        (reminder.position, text, kind)
        for reminder in compacted
        for text, kind in _paragraphs(reminder)
        if text not in anywhere
    ]
    differences: list[str] = []
    seen, notes = _listed_again(lost, new, loaded)
    for (position, text, kind), is_lost in (
        *((item, True) for item in lost),
        *((item, False) for item in new),
    ):
        if text in seen:
            continue
        seen.add(text)
        if not is_lost and _carried(text, carried):
            notes.append(
                f"compacted {kind.value} reminder before block {position} ({len(text)} chars) "
                "announces a background shell the candidate declares it carries"
            )
            continue
        described = _describe(kind, position, text, is_lost)
        (notes if kind in CADENCES else differences).append(described)
    return differences, notes


def _is_closing(reminder: Reminder, blocks: int) -> bool:
    return reminder.position >= blocks or (reminder.inside and reminder.position == blocks - 1)


def without_closing(reminders: Sequence[Reminder], blocks: int) -> tuple[Reminder, ...]:
    """The reminders of a context of `blocks` blocks but those of its resume turn."""
    return tuple(r for r in reminders if not _is_closing(r, blocks))


def closing_paragraphs(reminders: Sequence[Reminder], blocks: int) -> frozenset[tuple[ReminderKind, str]]:
    """The paragraphs of the reminders a context of `blocks` blocks sends with its resume turn
    (those Claude Code derives at resume time), each with its kind."""
    return frozenset(
        (kind, text) for r in reminders if _is_closing(r, blocks) for text, kind in _paragraphs(r)
    )
