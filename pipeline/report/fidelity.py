"""The report's `fidelity` section: what a resumed agent still knows of the summarized span.

Counts and recalls per probe class, the session's fidelity (the mean of the classes' recalls),
the floor it was held to, and the lost probes by anchor only (source line, class, kind and a
digest prefix), at most `lost_per_class` of each class; never a probe's text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import msgspec
from msgspec import UNSET, UnsetType

from pipeline.fidelity.score import FIDELITY_DIGITS
from pipeline.report.sections import Section

if TYPE_CHECKING:  # the builder's argument only
    from pipeline.fidelity import FidelityScore

__all__ = [
    "PROBE_SCHEMA",
    "FidelitySection",
    "LostProbeEntry",
    "ProbeClassSection",
    "ProbeReport",
    "fidelity_section",
]

PROBE_SCHEMA: Final = "session-compaction/probe-report/v1"


class ProbeClassSection(Section, frozen=True, kw_only=True):
    """One class: its probes, how many the candidate keeps, the share (null without probes)."""

    probes: int
    kept: int
    recall: float | None


class LostProbeEntry(Section, frozen=True, kw_only=True):
    """A lost probe by anchor: the source line it was read from, its class and kind, its id."""

    line: int
    klass: str = msgspec.field(name="class")
    kind: str | UnsetType = UNSET
    id: str


class FidelitySection(Section, frozen=True, kw_only=True):
    """Probes of the summarized span looked up in the candidate's resumed context."""

    span: str  # how the summarized span was known: plan, stamp, uuid-difference
    summarized_lines: int
    probes: int
    kept: int
    fidelity: float | None  # the mean of the classes' recalls; null without probes
    floor: float | UnsetType = UNSET  # the `min_fidelity` a candidate was held to, when one was set
    classes: dict[str, ProbeClassSection]
    lost: list[LostProbeEntry]
    lost_unlisted: int | UnsetType = UNSET  # lost probes over the per-class bound, counted only


class ProbeReport(FidelitySection, frozen=True, kw_only=True):
    """What `compaction probe --json` prints: the fidelity section, with its schema's version."""

    schema: str = PROBE_SCHEMA


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, FIDELITY_DIGITS)


def fidelity_section(
    score: FidelityScore,
    *,
    span: str,
    summarized_lines: int,
    lost_per_class: int,
    floor: float = 0.0,
) -> FidelitySection:
    """The section of one score; lost probes listed in line order, `lost_per_class` of each class."""
    listed: list[LostProbeEntry] = []
    shown: dict[str, int] = {}
    for lost in score.lost:
        name = lost.klass.value
        if shown.get(name, 0) >= lost_per_class:
            continue
        shown[name] = shown.get(name, 0) + 1
        listed.append(LostProbeEntry(line=lost.line, klass=name, kind=lost.kind or UNSET, id=lost.anchor))
    unlisted = len(score.lost) - len(listed)
    return FidelitySection(
        span=span,
        summarized_lines=summarized_lines,
        probes=score.probes,
        kept=score.kept,
        fidelity=_rounded(score.fidelity),
        floor=floor if floor > 0 else UNSET,
        classes={
            c.klass.value: ProbeClassSection(probes=c.probes, kept=c.kept, recall=_rounded(c.recall))
            for c in score.classes
        },
        lost=listed,
        lost_unlisted=unlisted if unlisted else UNSET,
    )
