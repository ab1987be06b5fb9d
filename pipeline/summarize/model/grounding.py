"""The grounding gate: a model's checkpoint must have the nine headings and cite what it read.

Structure is seed 001's `validate_checkpoint`. Grounding is seed 004's: every substantive bullet
cites `L<line>` anchors that the model was shown (the exact bullet `Unknown from provided
anchors.` is the one exemption), every human message of the summarized span is cited at least
once, and a quoted phrase is an exact substring of a record its bullet cites. Defects carry codes,
headings, answer line numbers and anchors, never text, so they can be listed in a repair request
and counted in a report.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from pipeline.formats import json_text
from pipeline.summarize.checkpoint.document import (
    APPENDIX_MARKER,
    BULLET,
    CHECKPOINT_MARKER,
    CONTINUATION,
    HEADING,
    NONE_BULLET,
    DefectCode,
    Heading,
    validate_checkpoint,
)

__all__ = [
    "UNKNOWN_LINE",
    "GroundingCode",
    "GroundingDefect",
    "GroundingEvidence",
    "check_answer",
    "cited_lines",
    "defect_counts",
    "normalize_answer",
]

UNKNOWN_LINE: Final = "Unknown from provided anchors."
"""The only bullet text that needs no citation (seed 004)."""
_ANCHOR: Final = re.compile(r"\bL(\d{1,9})\b")
_QUOTE: Final = re.compile(r"\"([^\"\n]+)\"|\u201c([^\u201d\n]+)\u201d")
_FENCE: Final = re.compile(r"^```[A-Za-z]*\n(.*)\n```$", re.S)


class GroundingCode(StrEnum):
    """Why an answer is not a grounded checkpoint."""

    STRUCTURE = "structure"
    APPENDIX_IN_ANSWER = "appendix-in-answer"
    UNCITED_BULLET = "uncited-bullet"
    UNKNOWN_ANCHOR = "unknown-anchor"
    HUMAN_NOT_CITED = "human-not-cited"
    QUOTE_NOT_FOUND = "quote-not-found"


@dataclass(frozen=True, slots=True)
class GroundingDefect:
    """One defect: its code, the structural detail, the section, the answer line, the anchor."""

    code: GroundingCode
    structure: DefectCode | None = None
    heading: Heading | None = None
    answer_line: int | None = None
    anchor: int | None = None

    def describe(self) -> str:
        """One line for a repair request: codes, headings, numbers (no text of the answer)."""
        parts = [self.structure.value if self.structure else self.code.value]
        if self.heading is not None:
            parts.append(f"section '{self.heading.value}'")
        if self.answer_line is not None:
            parts.append(f"answer line {self.answer_line}")
        if self.anchor is not None:
            parts.append(f"L{self.anchor}")
        return ": ".join(parts[:1]) + (" (" + ", ".join(parts[1:]) + ")" if parts[1:] else "")


@dataclass(frozen=True, slots=True)
class GroundingEvidence:
    """What the model was shown: anchored lines, the human lines it must cite, each line's text."""

    anchors: frozenset[int]
    humans: tuple[int, ...]
    texts: Mapping[int, str]


def normalize_answer(text: str) -> str:
    """The answer without what models add around a document: outer whitespace, one code fence,
    a copied checkpoint marker. Nothing inside the document changes."""
    body = text.strip().replace("\r\n", "\n")
    fenced = _FENCE.match(body)
    if fenced is not None:
        body = fenced.group(1).strip()
    if body.startswith(CHECKPOINT_MARKER):
        body = body[len(CHECKPOINT_MARKER) :].lstrip("\n")
    return body


def check_answer(answer: str, evidence: GroundingEvidence) -> tuple[GroundingDefect, ...]:
    """Every structural and grounding defect of a normalized answer, in answer order."""
    lines = answer.split("\n")
    defects = [
        GroundingDefect(GroundingCode.STRUCTURE, d.code, _checkpoint_heading(d.heading), d.line)
        for d in validate_checkpoint(answer)
    ]
    defects.extend(
        GroundingDefect(GroundingCode.APPENDIX_IN_ANSWER, answer_line=number)
        for number, line in enumerate(lines, 1)
        if line.strip() == APPENDIX_MARKER
    )
    cited: set[int] = set()
    for heading, number, text in _bullets(lines):
        defects.extend(_bullet_defects(heading, number, text, evidence, cited))
    defects.extend(
        GroundingDefect(GroundingCode.HUMAN_NOT_CITED, anchor=line)
        for line in evidence.humans
        if line not in cited
    )
    return tuple(defects)


def _checkpoint_heading(heading: object) -> Heading | None:
    return heading if isinstance(heading, Heading) else None


def _bullets(lines: Sequence[str]) -> Iterable[tuple[Heading | None, int, str]]:
    """(section, answer line of the bullet, bullet text with its continuation lines)."""
    heading: Heading | None = None
    current: tuple[Heading | None, int, list[str]] | None = None
    for number, line in enumerate(lines, 1):
        if line.startswith(HEADING):
            if current is not None:
                yield current[0], current[1], "\n".join(current[2])
            current = None
            title = line[len(HEADING) :]
            heading = Heading(title) if title in Heading.__members__.values() else None
        elif line.startswith(BULLET):
            if current is not None:
                yield current[0], current[1], "\n".join(current[2])
            current = (heading, number, [line[len(BULLET) :]])
        elif line.startswith(CONTINUATION) and current is not None:
            current[2].append(line[len(CONTINUATION) :])
    if current is not None:
        yield current[0], current[1], "\n".join(current[2])


def _bullet_defects(
    heading: Heading | None, number: int, text: str, evidence: GroundingEvidence, cited: set[int]
) -> Iterable[GroundingDefect]:
    stripped = text.strip()
    if BULLET + stripped == NONE_BULLET or stripped == UNKNOWN_LINE:
        return
    anchors = [int(match.group(1)) for match in _ANCHOR.finditer(text)]
    if not anchors:
        yield GroundingDefect(GroundingCode.UNCITED_BULLET, heading=heading, answer_line=number)
        return
    known = [line for line in anchors if line in evidence.anchors]
    cited.update(known)
    for line in sorted(set(anchors) - set(known)):
        yield GroundingDefect(GroundingCode.UNKNOWN_ANCHOR, heading=heading, answer_line=number, anchor=line)
    sources = [evidence.texts.get(line, "") for line in known]
    for match in _QUOTE.finditer(text):
        quote = match.group(1) or match.group(2)
        if not any(_contains(source, quote) for source in sources):
            yield GroundingDefect(GroundingCode.QUOTE_NOT_FOUND, heading=heading, answer_line=number)


def _contains(source: str, quote: str) -> bool:
    """The quote as the record's text has it, or as its JSON-escaped pack line showed it."""
    return quote in source or quote in json_text.dumps(source).decode()[1:-1]


def cited_lines(answer: str) -> tuple[int, ...]:
    """Every line an answer cites, ascending."""
    return tuple(sorted({int(match.group(1)) for match in _ANCHOR.finditer(answer)}))


def defect_counts(defects: Iterable[GroundingDefect]) -> tuple[tuple[str, int], ...]:
    """Defect codes (structural ones by their detail) with counts, for a failure's facts."""
    counts = Counter(d.structure.value if d.structure else d.code.value for d in defects)
    return tuple(sorted(counts.items()))
