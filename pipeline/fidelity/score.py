"""Scoring: each class's recall in the resumed context, the session's fidelity, the lost probes.

A session's fidelity is the mean of the recalls of the classes it has probes of: every class
weighs the same, so two hundred files read cannot hide the errors a summary lost. A session
with no probes has no fidelity (None), and no floor refuses it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.fidelity.match import carried
from pipeline.fidelity.passages import ResumedContext
from pipeline.fidelity.probe_value import Probe, ProbeClass

__all__ = ["FIDELITY_DIGITS", "ClassScore", "FidelityScore", "LostProbe", "score_probes"]

FIDELITY_DIGITS = 4
"""Recalls and fidelity are reported to four digits, and a floor is held to the figure reported."""


@dataclass(frozen=True, slots=True)
class ClassScore:
    """How many probes of one class there were and how many the resumed context carries."""

    klass: ProbeClass
    probes: int
    kept: int

    @property
    def recall(self) -> float | None:
        """Kept over probes; None without probes."""
        return self.kept / self.probes if self.probes else None


@dataclass(frozen=True, slots=True)
class LostProbe:
    """A probe the resumed context lost, by anchor only: its line, class, kind and digest id."""

    line: int
    klass: ProbeClass
    kind: str
    anchor: str


@dataclass(frozen=True, slots=True)
class FidelityScore:
    """Every class's score (in `ProbeClass` order) and every lost probe (by line)."""

    classes: tuple[ClassScore, ...]
    lost: tuple[LostProbe, ...]

    @property
    def probes(self) -> int:
        return sum(score.probes for score in self.classes)

    @property
    def kept(self) -> int:
        return sum(score.kept for score in self.classes)

    @property
    def fidelity(self) -> float | None:
        """The mean recall of the classes with probes; None when there are none."""
        recalls = [score.recall for score in self.classes if score.recall is not None]
        return sum(recalls) / len(recalls) if recalls else None

    def of(self, klass: ProbeClass) -> ClassScore:
        """One class's score."""
        return next(score for score in self.classes if score.klass is klass)

    def below(self, floor: float) -> bool:
        """Whether a floor refuses this score, as reported (never one without probes, nor a floor of 0)."""
        fidelity = self.fidelity
        return floor > 0 and fidelity is not None and round(fidelity, FIDELITY_DIGITS) < floor


def score_probes(probes: Sequence[Probe], context: ResumedContext) -> FidelityScore:
    """Look every probe up in the resumed context."""
    kept = {klass: 0 for klass in ProbeClass}
    total = {klass: 0 for klass in ProbeClass}
    lost: list[LostProbe] = []
    for probe in probes:
        total[probe.klass] += 1
        if carried(probe, context):
            kept[probe.klass] += 1
        else:
            lost.append(LostProbe(probe.line, probe.klass, probe.kind, probe.anchor))
    lost.sort(key=lambda entry: (entry.line, list(ProbeClass).index(entry.klass)))
    return FidelityScore(tuple(ClassScore(k, total[k], kept[k]) for k in ProbeClass), tuple(lost))
