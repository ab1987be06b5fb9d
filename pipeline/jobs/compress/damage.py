"""Damage on the active chain that a compaction repairs: which defects, how far the cut must reach.

The validator's pairing errors (`API_PAIRING_CODES`: a call without its result, a result without
its call, a repeated tool id, a result not first) are records the Messages API refuses. Claude
Code resumes such a session anyway: it drops or moves some of them itself and sends the others,
which the API answers with a 400. A summary replaces every record it covers, so a cut made after
every record a defect touches leaves a candidate without the defect; the candidate is then
validated from scratch and, with the resume gate, sent through a capture server that answers as
the API does. A defect the cut cannot pass (it lies in the protected last round, or no cut is
made) stays in the kept tail: the session is refused with the defect's line and code, for a
`repair` to handle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.core.index import LineIndex
from pipeline.core.plan import Plan, PlanOutcome
from pipeline.core.validate.pairing import API_PAIRING_CODES, ApiMessage, api_messages
from pipeline.findings import Finding
from pipeline.reasons import Reason, Refusal
from pipeline.vocabulary import Severity

__all__ = ["NO_DAMAGE", "Damage", "Defect", "chain_damage", "damage_refusal"]


@dataclass(frozen=True, slots=True)
class Defect:
    """One pairing error and every chain line it touches (none may stay in the kept tail)."""

    finding: Finding
    lines: frozenset[int]


@dataclass(frozen=True, slots=True)
class Damage:
    """The repairable defects of an active chain, and the first cut position past all of them."""

    defects: tuple[Defect, ...]
    floor: int  # chain[:floor] holds every line a defect touches; 0 when there is none

    def findings(self) -> tuple[Finding, ...]:
        """The defects' findings, in line order."""
        return tuple(sorted((d.finding for d in self.defects), key=lambda f: (f.line or 0, f.code.value)))

    def left_in(self, plan: Plan) -> tuple[Finding, ...]:
        """The defects a plan does not summarize: all of them unless it cuts, else those in its tail."""
        if plan.outcome is not PlanOutcome.CUT:
            return self.findings()
        kept = frozenset(plan.raw_lines)
        return tuple(d.finding for d in self.defects if d.lines & kept)


NO_DAMAGE = Damage((), 0)


def _touched(
    index: LineIndex, chain: Sequence[int], messages: Sequence[ApiMessage], finding: Finding
) -> frozenset[int]:
    """The defect's line, the rest of its API message, and every chain line naming one of its ids."""
    lines = {finding.line} if finding.line is not None else set()
    for message in messages:
        if finding.line in message.lines:
            lines.update(message.lines)
    ids = set(finding.ids)
    if ids:
        lines.update(
            line
            for line in chain
            if ids.intersection(index.entry(line).tool_uses)
            or ids.intersection(index.entry(line).tool_results)
        )
    return frozenset(lines)


def chain_damage(index: LineIndex, chain: Sequence[int], findings: Sequence[Finding]) -> Damage:
    """The pairing errors among a chain's findings, each with the lines it touches."""
    errors = [f for f in findings if f.severity is Severity.ERROR and f.code in API_PAIRING_CODES]
    if not errors:
        return NO_DAMAGE
    position = {line: p for p, line in enumerate(chain)}
    messages = api_messages(index, tuple(chain))
    defects = tuple(Defect(f, _touched(index, chain, messages, f)) for f in errors)
    floor = max((position[line] for d in defects for line in d.lines if line in position), default=-1) + 1
    return Damage(defects, floor)


def damage_refusal(findings: Sequence[Finding]) -> tuple[Reason, ...]:
    """`source-active-chain-invalid` and the code of every defect that stays (the seed's spelling)."""
    return (
        Reason(Refusal.SOURCE_CHAIN_INVALID),
        *(Reason(code) for code in sorted({f.code for f in findings})),
    )
