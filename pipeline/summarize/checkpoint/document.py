"""The checkpoint document: nine fixed headings of cited bullets, how to write, read and check it.

A bullet is `- ` and its text; further lines of the text follow indented by two spaces, so any
text (a prompt quoting `## Goal`, the checkpoint marker or a blank line) stays inside its bullet
and reads back exactly. Every bullet except an omission marker ends with the 1-based source
lines it came from, `(L42)` or `(L42, L57)`. Lines are split on LF only, here and when reading.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from pipeline.errors import SummaryError
from pipeline.reasons import Figure, ReasonCode, SummaryFailure

__all__ = [
    "APPENDIX_MARKER",
    "CHECKPOINT_MARKER",
    "NATIVE_BOILERPLATE",
    "NONE_BULLET",
    "AppendixHeading",
    "Bullet",
    "CheckpointDefect",
    "CheckpointInvalid",
    "DefectCode",
    "Heading",
    "ParsedBullet",
    "PriorContent",
    "checkpoint_start",
    "cite",
    "cut",
    "omission_marker",
    "parse_bullets",
    "read_prior",
    "recite_cut_marker",
    "render_bullet",
    "render_section",
    "split_appendix",
    "validate_checkpoint",
]

CHECKPOINT_MARKER: Final = "<!-- session-compaction checkpoint v1 -->"
APPENDIX_MARKER: Final = "<!-- session-compaction appendix v1 -->"
NONE_BULLET: Final = "- None"
BULLET: Final = "- "
CONTINUATION: Final = "  "
HEADING: Final = "## "
_CITATION: Final = re.compile(r" \((L\d+(?:, L\d+)*)\)$")
_OMISSION: Final = re.compile(r"^\.\.\. (\d+) older (?:bullets|records) omitted$")
_CUT_MARKER: Final = re.compile(r"\[\.\.\. (\d+) more characters at L\d+\]")
_ANY_CUT_MARKER: Final = re.compile(r"\[\.\.\. \d+ more characters (?:at L\d+|cut in an earlier pass)\]")
"""A cut's marker: at the end of a head, or between a head and a tail (`cut(..., tail=N)`)."""


class Heading(StrEnum):
    """The nine checkpoint sections, in their required order (seed 001)."""

    GOAL = "Goal"
    CONSTRAINTS = "User constraints and preferences"
    COMPLETED = "Completed work"
    IN_PROGRESS = "Work in progress"
    FILES = "Files changed/read"
    COMMANDS = "Commands and validation"
    DECISIONS = "Decisions"
    ERRORS = "Errors and blockers"
    NEXT_STEPS = "Exact next steps"


class AppendixHeading(StrEnum):
    """Sections reserved for the deterministic appendix, which follows the checkpoint."""

    FILE_OPERATIONS = "File operations"
    VALIDATION = "Validation"
    ACTIVE_WORK = "Active work"
    IDENTIFIERS = "Identifiers seen"


_TITLES: Final = frozenset(heading.value for heading in Heading)
_APPENDIX_TITLES: Final = frozenset(heading.value for heading in AppendixHeading)


class DefectCode(ReasonCode):
    """Why a checkpoint's structure is invalid."""

    TEXT_BEFORE_FIRST_HEADING = "text-before-first-heading"
    MISSING_HEADING = "missing-heading"
    DUPLICATE_HEADING = "duplicate-heading"
    OUT_OF_ORDER = "out-of-order"
    UNKNOWN_HEADING = "unknown-heading"
    APPENDIX_HEADING_IN_CHECKPOINT = "appendix-heading-in-checkpoint"
    CHECKPOINT_HEADING_IN_APPENDIX = "checkpoint-heading-in-appendix"
    EMPTY_SECTION = "empty-section"
    NONE_WITH_BULLETS = "none-with-bullets"
    STRAY_LINE = "stray-line"


@dataclass(frozen=True, slots=True)
class CheckpointDefect:
    """One structural defect: its code, the section it is in, the 1-based line of the text."""

    code: DefectCode
    heading: Heading | AppendixHeading | None = None
    line: int | None = None


class CheckpointInvalid(SummaryError):
    """A checkpoint failed structural validation (codes and counts only)."""

    def __init__(self, defects: Sequence[CheckpointDefect]) -> None:
        self.defects = tuple(defects)
        codes = sorted({defect.code.value for defect in self.defects})
        message = f"invalid checkpoint structure: {len(self.defects)} defects ({', '.join(codes)})"
        super().__init__(SummaryFailure.CHECKPOINT_INVALID, ((Figure.DEFECTS, len(self.defects)),), message)


@dataclass(frozen=True, slots=True)
class Bullet:
    """A bullet to write: its text and the source lines it cites."""

    text: str
    lines: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ParsedBullet:
    """A bullet read back: its text without the citation, the lines cited, omitted count if a marker."""

    text: str
    lines: tuple[int, ...]
    omitted: int = 0


def cite(lines: Iterable[int]) -> str:
    """`(L3, L9)`: the citation that ends a bullet."""
    return "(" + ", ".join(f"L{line}" for line in lines) + ")"


def cut(text: str, limit: int, line: int, tail: int = 0) -> str:
    """`text` itself when it fits in `limit` characters, else its head, an explicit marker and its
    last `tail` characters (none by default), `limit` characters in all besides the marker.

    Text an earlier pass already cut within the limit is left as it is, so cutting is idempotent.
    """
    if len(text) <= limit:
        return text
    for done in _ANY_CUT_MARKER.finditer(text):
        if len(text) - (done.end() - done.start()) <= limit:
            return text
    tail = min(tail, limit)
    end = text[len(text) - tail :] if tail else ""
    return f"{text[: limit - tail]}[... {len(text) - limit} more characters at L{line}]{end}"


def omission_marker(count: int, noun: str = "bullets") -> str:
    """The uncited bullet that says how many older bullets or records were left out."""
    return f"{BULLET}... {count} older {noun} omitted"


def render_bullet(text: str, lines: Sequence[int]) -> str:
    """`- text (L1)`, later lines of the text indented so they stay inside the bullet."""
    body = text.replace("\n", "\n" + CONTINUATION)
    return f"{BULLET}{body} {cite(lines)}" if lines else f"{BULLET}{body}"


def render_section(title: str, bullets: Sequence[Bullet], omitted: int = 0, noun: str = "bullets") -> str:
    """A heading and its bullets (an omission marker first when some were left out), or `- None`."""
    out = [HEADING + title]
    if omitted:
        out.append(omission_marker(omitted, noun))
    out.extend(render_bullet(bullet.text, bullet.lines) for bullet in bullets)
    if len(out) == 1:
        out.append(NONE_BULLET)
    return "\n".join(out)


def split_appendix(text: str, *, marker_only: bool = False) -> tuple[str, str | None]:
    """(checkpoint part, appendix part or None), split at the appendix marker line.

    Unless `marker_only`, a reserved appendix heading also starts the appendix (one a model
    wrote without the marker is still an appendix to strip).
    """
    stops = {APPENDIX_MARKER} if marker_only else {APPENDIX_MARKER, *(HEADING + t for t in _APPENDIX_TITLES)}
    offset = 0
    for line in text.split("\n"):
        if line in stops:
            return text[:offset], text[offset:]
        offset += len(line) + 1
    return text, None


def parse_bullets(lines: Sequence[str]) -> tuple[ParsedBullet, ...]:
    """The bullets of one section's body lines (blank and stray lines are not part of any bullet)."""
    texts: list[list[str]] = []
    for line in lines:
        if line.startswith(BULLET):
            texts.append([line[len(BULLET) :]])
        elif line.startswith(CONTINUATION) and texts:
            texts[-1].append(line[len(CONTINUATION) :])
    return tuple(_parsed("\n".join(parts)) for parts in texts)


def _parsed(text: str) -> ParsedBullet:
    marker = _OMISSION.match(text)
    if marker is not None:
        return ParsedBullet(text, (), int(marker.group(1)))
    match = _CITATION.search(text)
    if match is None:
        return ParsedBullet(text, ())
    lines = tuple(int(part[1:]) for part in match.group(1).split(", "))
    return ParsedBullet(text[: match.start()], lines)


def recite_cut_marker(text: str) -> str:
    """A cut marker from an older pass names a line of an older file: say so instead."""
    return _CUT_MARKER.sub(lambda m: f"[... {m.group(1)} more characters cut in an earlier pass]", text)


def validate_checkpoint(text: str, *, preamble: str = "") -> tuple[CheckpointDefect, ...]:
    """Structural defects of a checkpoint (seed 001 ValidateCheckpoint): never judges the prose.

    The nine headings must appear once each, in order, each with at least one `- ` bullet (or
    exactly `- None`); before the first heading only `preamble`, the checkpoint marker and blank
    lines may appear; appendix headings may appear only after the appendix marker line.
    """
    body, appendix = split_appendix(text.removeprefix(preamble) if preamble else text, marker_only=True)
    first_line = 1 + (preamble.count("\n") if preamble and text.startswith(preamble) else 0)
    defects = _check_body(body.split("\n"), first_line)
    if appendix is not None:
        defects.extend(_check_appendix(appendix.split("\n"), first_line + body.count("\n")))
    return tuple(defects)


def _check_body(lines: list[str], first_line: int) -> list[CheckpointDefect]:
    defects: list[CheckpointDefect] = []
    seen: list[Heading] = []
    bodies: dict[Heading, list[str]] = {}
    current: Heading | None = None
    started = False
    for number, line in enumerate(lines, first_line):
        if line.startswith(HEADING):
            started = True
            current = _heading_line(line, number, seen, defects)
            if current is not None:
                bodies[current] = []
        elif current is None and started:
            continue  # under a heading already reported as a defect
        elif current is None:
            if line.strip() and line != CHECKPOINT_MARKER:
                defects.append(CheckpointDefect(DefectCode.TEXT_BEFORE_FIRST_HEADING, None, number))
        elif line.startswith(BULLET) or (line.startswith(CONTINUATION) and bodies[current]) or not line:
            bodies[current].append(line)
        else:
            defects.append(CheckpointDefect(DefectCode.STRAY_LINE, current, number))
    for heading in Heading:
        if heading not in bodies:
            defects.append(CheckpointDefect(DefectCode.MISSING_HEADING, heading))
            continue
        bullets = [line for line in bodies[heading] if line.startswith(BULLET)]
        if not bullets:
            defects.append(CheckpointDefect(DefectCode.EMPTY_SECTION, heading))
        elif NONE_BULLET in bullets and len(bullets) > 1:
            defects.append(CheckpointDefect(DefectCode.NONE_WITH_BULLETS, heading))
    return defects


def _heading_line(
    line: str, number: int, seen: list[Heading], defects: list[CheckpointDefect]
) -> Heading | None:
    title = line[len(HEADING) :]
    if title in _APPENDIX_TITLES:
        code = DefectCode.APPENDIX_HEADING_IN_CHECKPOINT
        defects.append(CheckpointDefect(code, AppendixHeading(title), number))
        return None
    if title not in _TITLES:
        defects.append(CheckpointDefect(DefectCode.UNKNOWN_HEADING, None, number))
        return None
    heading = Heading(title)
    order = list(Heading)
    if heading in seen:
        defects.append(CheckpointDefect(DefectCode.DUPLICATE_HEADING, heading, number))
        return None
    if seen and order.index(heading) < order.index(seen[-1]):
        defects.append(CheckpointDefect(DefectCode.OUT_OF_ORDER, heading, number))
    seen.append(heading)
    return heading


def _check_appendix(lines: list[str], first_line: int) -> list[CheckpointDefect]:
    defects: list[CheckpointDefect] = []
    for number, line in enumerate(lines, first_line):
        title = line[len(HEADING) :]
        if line.startswith(HEADING) and title in _TITLES:
            code = DefectCode.CHECKPOINT_HEADING_IN_APPENDIX
            defects.append(CheckpointDefect(code, Heading(title), number))
    return defects


# ---------------------------------------------------------------------------------------------- priors
NATIVE_BOILERPLATE: Final = (
    "This session is being continued from a previous conversation",
    "Please continue the conversation from where we left off",
)
"""Lines Claude Code wraps around its own summaries: framing, not content."""


@dataclass(frozen=True, slots=True)
class PriorContent:
    """What one prior summary carries forward: bullets per section, re-cited to its line."""

    own_format: bool
    bullets: tuple[tuple[Heading, tuple[Bullet, ...]], ...]
    omitted: tuple[tuple[Heading, int], ...] = ()


def checkpoint_start(text: str) -> int | None:
    """Offset of the checkpoint marker line in `text`, or None when there is none."""
    if text.startswith(CHECKPOINT_MARKER + "\n") or text == CHECKPOINT_MARKER:
        return 0
    found = text.find("\n" + CHECKPOINT_MARKER + "\n")
    return None if found < 0 else found + 1


def read_prior(text: str, line: int, max_line_chars: int) -> PriorContent:
    """Fold a prior summary: our own checkpoint section by section, else its non-empty lines.

    Our bullets keep their text and section and are cited to `line` (their old citations named
    lines of an older file). A Claude Code summary's lines become Completed work bullets, each
    cut to `max_line_chars`.
    """
    start = checkpoint_start(text)
    if start is not None:
        body = split_appendix(text[start:])[0]
        if not validate_checkpoint(body):
            return _read_own(body, line)
    bullets = tuple(
        Bullet(cut(raw, max_line_chars, line), (line,))
        for raw in text.split("\n")
        if raw.strip() and not raw.strip().startswith(NATIVE_BOILERPLATE)
    )
    return PriorContent(False, ((Heading.COMPLETED, bullets),))


def _read_own(body: str, line: int) -> PriorContent:
    sections: dict[Heading, list[str]] = {}
    current: list[str] | None = None
    for raw in body.split("\n"):
        if raw.startswith(HEADING):
            current = sections.setdefault(Heading(raw[len(HEADING) :]), [])
        elif current is not None:
            current.append(raw)
    bullets: list[tuple[Heading, tuple[Bullet, ...]]] = []
    omitted: list[tuple[Heading, int]] = []
    for heading, lines in sections.items():
        parsed = parse_bullets(lines)
        count = sum(bullet.omitted for bullet in parsed)
        if count:
            omitted.append((heading, count))
        kept = tuple(
            Bullet(recite_cut_marker(bullet.text), (line,))
            for bullet in parsed
            if not bullet.omitted and not (bullet.text == "None" and not bullet.lines)
        )
        bullets.append((heading, kept))
    return PriorContent(True, tuple(bullets), tuple(omitted))
