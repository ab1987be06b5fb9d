"""Topology: choose the resume leaf under a named policy and derive the active chain.

`strict` is the seed's authority and nothing else. `physical` is the seed's physical-tail
compatibility mode (no branch isolation). `auto` follows Claude Code (`resume.py`): where Claude
Code resumes at the leaf the seed's pointer names, the strict chain is used as the seed builds it;
where they disagree (the session went on below the pointer, the pointer names nothing in the
file, or no pointer names a leaf) the leaf is the one Claude Code resumes, reported under its own
source and held to the same safety rules. The strict verdict is always computed and reported,
whatever the policy.

Two of those rules guard against what Claude Code itself does not mind: a parent written after
its child (`chain-non-monotonic`) and a chain whose sessionId runs are not a one-way lineage
(`lineage-unsafe`; `/clear`, resumed and forked sessions). Claude Code walks `parentUuid` from its
leaf whatever the file order or session ids say, so when a resume proof will judge the result
(`TopologyOptions.provable`), such a chain is selected anyway and marked `unproven` with the rule
it breaks; without a proof it stays refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from pipeline.core.graph import UuidGraph
from pipeline.core.index import LineIndex
from pipeline.core.topology.checkpoint import ResumeStart, resume_start
from pipeline.core.topology.resume_chain import ResumeChain, claude_code_chain, with_recovered_rows
from pipeline.core.topology.strict import (
    Lineage,
    StrictVerdict,
    analyze_lineage,
    count_inversions,
    latest_pointer_line,
    strict_verdict,
)
from pipeline.findings import Finding
from pipeline.formats.claude_code.decode import RecordFlag
from pipeline.reasons import StrictReason, TopologyRefusal
from pipeline.vocabulary import (
    ChainEnd,
    FindingCode,
    LeafPolicy,
    LeafSource,
    PromptCheck,
    RecordType,
    Severity,
    StrictStatus,
)

__all__ = ["AUTO", "PROVABLE", "Topology", "TopologyOptions", "resolve_topology"]

_COMPACT_BOUNDARY: Final = RecordFlag.COMPACT_BOUNDARY.value

C = FindingCode


@dataclass(frozen=True, slots=True)
class TopologyOptions:
    """The knobs that choose a leaf."""

    policy: LeafPolicy
    resume_leaf: str | None
    max_post_last_prompt_extension: int
    provable: bool = False  # a resume proof will judge: select a chain the seed's safety rules refuse


AUTO: Final = TopologyOptions(LeafPolicy.AUTO, None, 0)
PROVABLE: Final = frozenset({TopologyRefusal.CHAIN_NON_MONOTONIC, TopologyRefusal.LINEAGE_UNSAFE})
"""Safety rules Claude Code does not need: a proof of the candidate can stand in for them."""
"""Claude Code's own choice with no override: what a candidate is checked with and the proof reads."""


@dataclass(frozen=True, slots=True)
class Topology:
    """The leaf actually used, what chose it, and the active chain it selects."""

    policy: LeafPolicy
    strict: StrictVerdict
    leaf_uuid: str | None
    leaf_line: int | None
    leaf_source: LeafSource
    chain: tuple[int, ...]  # active lines, logical root-to-leaf order; empty when refused
    chain_end: ChainEnd | None
    external_parent: str | None
    pre_compaction: frozenset[int]
    refusal: TopologyRefusal | StrictReason | None  # when no chain could be selected safely
    prompt_check: PromptCheck
    lineage: Lineage | None
    branch_isolation: bool
    findings: tuple[Finding, ...] = field(default=())
    unproven: TopologyRefusal | None = None  # the safety rule a provable chain breaks (see PROVABLE)

    @property
    def refused(self) -> bool:
        """Whether the policy could not select a chain."""
        return self.refusal is not None


def _pre_compaction(index: LineIndex, graph: UuidGraph, chain: tuple[int, ...]) -> frozenset[int]:
    """History summarized by Claude Code's own compactions: reached only via logicalParentUuid."""
    # One compiled scan for the boundaries, then set lookups: a chain walk reading every record
    # is what this replaced, and most sessions hold no boundary at all.
    boundaries = frozenset(index.flagged(_COMPACT_BOUNDARY))
    if not boundaries:
        return frozenset()
    seen: set[int] = set()
    pending = [line for line in chain if line in boundaries]
    while pending:
        boundary = index.record(pending.pop())
        target = graph.line_of.get(boundary.logical_parent or "") if boundary is not None else None
        if target is None or target in seen:
            continue
        trace = graph.trace(index, target)
        fresh = [line for line in trace.lines if line not in seen]
        seen.update(fresh)
        pending.extend(line for line in fresh if line in boundaries)
    return frozenset(seen - set(chain))


def _prompt_check(index: LineIndex, chain: tuple[int, ...], pointer_line: int | None) -> PromptCheck:
    """Compare the pointer's `lastPrompt` text with the chain's last human prompt (by fingerprint)."""
    pointer = index.record(pointer_line) if pointer_line else None
    if pointer is None or pointer.prompt_key is None:
        return PromptCheck.ABSENT
    # The chain's last human prompt decides: read from the leaf back, it is seldom far.
    for line in reversed(chain):
        record = index.record(line)
        if record is not None and record.type == RecordType.USER and record.prompt_key:
            return PromptCheck.MATCHED if pointer.prompt_key == record.prompt_key else PromptCheck.MISMATCHED
    return PromptCheck.NOT_APPLICABLE


def _from_strict(index: LineIndex, graph: UuidGraph, verdict: StrictVerdict, policy: LeafPolicy) -> Topology:
    findings: list[Finding] = []
    if verdict.status is not StrictStatus.VALID:
        findings.append(
            Finding(C.STRICT_REFUSAL, Severity.ERROR, line=verdict.pointer_line, ids=(verdict.status.value,))
        )
        return Topology(
            policy,
            verdict,
            verdict.leaf_uuid,
            None,
            verdict.leaf_source,
            (),
            None,
            None,
            frozenset(),
            verdict.reason,
            PromptCheck.NOT_APPLICABLE,
            verdict.lineage,
            True,
            tuple(findings),
        )
    chain = verdict.chain
    if policy is LeafPolicy.AUTO and not verdict.extension_lines:
        # The pointer names the leaf; the chain around it is built the way Claude Code builds it.
        chain = with_recovered_rows(index, graph, chain, below_until=verdict.pointer_line)
    if verdict.attachment_inversions:
        findings.append(Finding(C.ATTACHMENT_INVERSION, Severity.INFO, count=verdict.attachment_inversions))
    if verdict.lineage and verdict.lineage.transitions:
        findings.append(
            Finding(C.SESSION_LINEAGE_TRANSITION, Severity.WARNING, count=verdict.lineage.transitions)
        )
    root = index.record(chain[0])
    end = ChainEnd.COMPACT_BOUNDARY if root is not None and root.compact_boundary else ChainEnd.ROOT
    return Topology(
        policy,
        verdict,
        verdict.leaf_uuid,
        chain[-1],
        verdict.leaf_source,
        chain,
        end,
        None,
        _pre_compaction(index, graph, chain),
        None,
        _prompt_check(index, chain, verdict.pointer_line),
        verdict.lineage,
        True,
        tuple(findings),
    )


def _physical(index: LineIndex, graph: UuidGraph, verdict: StrictVerdict) -> Topology:
    chain = tuple(n for n, r in enumerate(index.records, 1) if r is not None)
    leaf_line = graph.uuid_lines[-1] if graph.uuid_lines else None
    leaf = index.record(leaf_line).uuid if leaf_line else None  # type: ignore[union-attr]
    findings = (Finding(C.NO_BRANCH_ISOLATION, Severity.WARNING),)
    return Topology(
        LeafPolicy.PHYSICAL,
        verdict,
        leaf,
        leaf_line,
        LeafSource.PHYSICAL_TAIL,
        chain,
        None,
        None,
        frozenset(),
        None,
        PromptCheck.NOT_APPLICABLE,
        None,
        False,
        findings,
    )


def _resume_source(resumed: ResumeChain, start: ResumeStart) -> tuple[LeafSource, list[Finding]]:
    """What chose a leaf Claude Code's way, and the finding that says so."""
    if start.below_checkpoint and resumed.leaf_line != start.checkpoint:
        return LeafSource.BELOW_LAST_PROMPT, [
            Finding(C.LEAF_BELOW_LAST_PROMPT, Severity.INFO, line=start.pointer_line)
        ]
    if start.checkpoint is not None:  # a pointer names it; the strict verdict beside says why it differs
        return LeafSource.LAST_PROMPT, []
    return LeafSource.NEWEST_LEAF, [Finding(C.LEAF_INFERRED, Severity.INFO, line=resumed.leaf_line)]


def _resume_safety(
    index: LineIndex, graph: UuidGraph, resumed: ResumeChain, findings: list[Finding], *, provable: bool
) -> tuple[TopologyRefusal | None, Lineage]:
    """The strict rules an inferred walk is held to: no duplicate uuid, monotonic, one-way lineage.

    With `provable`, a broken rule Claude Code does not need is a warning, not an error: the
    chain goes on to the proof that will judge it.
    """
    provable_severity = Severity.WARNING if provable else Severity.ERROR
    walk, chain = resumed.walk, resumed.chain
    incompatible, compatible = count_inversions(index, walk)
    pointer_line = latest_pointer_line(index)
    pointer = index.record(pointer_line) if pointer_line else None
    # Without a pointer naming a session, the inferred leaf's own session is the authority.
    authority = pointer.session if pointer is not None and pointer.session else None
    if authority is None and resumed.leaf_line is not None:
        authority = index.entry(resumed.leaf_line).session
    lineage = analyze_lineage(index, walk, authority)
    duplicated = set(graph.duplicates)
    if duplicated and any(index.entry(line).uuid in duplicated for line in chain):
        return TopologyRefusal.DUPLICATE_UUID, lineage
    if incompatible:
        findings.append(Finding(C.CHAIN_NON_MONOTONIC, provable_severity, count=incompatible))
        return TopologyRefusal.CHAIN_NON_MONOTONIC, lineage
    if not lineage.ok:
        findings.append(Finding(C.SESSION_LINEAGE_UNSAFE, provable_severity, ids=(lineage.reason or "",)))
        return TopologyRefusal.LINEAGE_UNSAFE, lineage
    if compatible:
        findings.append(Finding(C.ATTACHMENT_INVERSION, Severity.INFO, count=compatible))
    if lineage.transitions:
        findings.append(Finding(C.SESSION_LINEAGE_TRANSITION, Severity.WARNING, count=lineage.transitions))
    return None, lineage


def _from_resume(
    index: LineIndex,
    graph: UuidGraph,
    verdict: StrictVerdict,
    resumed: ResumeChain,
    start: ResumeStart,
    *,
    provable: bool = False,
) -> Topology:
    """A chain chosen as Claude Code chooses it, held to the same safety rules as a strict one."""
    source, findings = _resume_source(resumed, start)
    refusal, chain, lineage = resumed.refusal, resumed.chain, None
    unproven: TopologyRefusal | None = None
    if refusal is None:
        refusal, lineage = _resume_safety(index, graph, resumed, findings, provable=provable)
        if provable and refusal in PROVABLE:
            unproven, refusal = refusal, None
    if resumed.chain_end is ChainEnd.EXTERNAL_PARENT and refusal is None:
        findings.append(Finding(C.EXTERNAL_PARENT, Severity.INFO, line=chain[0] if chain else None))
    if resumed.chain_end is ChainEnd.LOOP:
        findings.append(Finding(C.CHAIN_LOOP, Severity.ERROR, line=resumed.leaf_line))
    if refusal is not None:
        findings.append(Finding(C.NO_ACTIVE_CHAIN, Severity.ERROR, ids=(refusal,)))
        chain = ()
    # A pointer's text names the prompt current when it was written: below it, compare up to it.
    judged = chain[: chain.index(start.checkpoint) + 1] if start.checkpoint in chain else chain
    check = _prompt_check(index, judged, latest_pointer_line(index))
    if check is PromptCheck.MISMATCHED:
        findings.append(
            Finding(C.LAST_PROMPT_TEXT_MISMATCH, Severity.WARNING, line=latest_pointer_line(index))
        )
    leaf_uuid = index.entry(resumed.leaf_line).uuid if resumed.leaf_line else None
    return Topology(
        LeafPolicy.AUTO,
        verdict,
        leaf_uuid,
        resumed.leaf_line,
        source,
        chain,
        resumed.chain_end,
        resumed.external_parent,
        _pre_compaction(index, graph, chain) if chain else frozenset(),
        refusal,
        check,
        lineage,
        True,
        tuple(findings),
        unproven,
    )


def resolve_topology(index: LineIndex, graph: UuidGraph, options: TopologyOptions) -> Topology:
    """Select the leaf and active chain for one transcript under the requested policy."""
    verdict = strict_verdict(
        index, graph, resume_leaf=options.resume_leaf, max_extension=options.max_post_last_prompt_extension
    )
    if options.policy is LeafPolicy.STRICT:
        return _from_strict(index, graph, verdict, LeafPolicy.STRICT)
    if options.policy is LeafPolicy.PHYSICAL:
        return _physical(index, graph, verdict)
    if options.resume_leaf:
        return _from_strict(index, graph, verdict, LeafPolicy.AUTO)
    start = resume_start(index, graph)
    named = index.record(start.checkpoint) if start.checkpoint is not None else None
    if (
        named is not None
        and not start.below_checkpoint
        and verdict.status is StrictStatus.VALID
        and verdict.leaf_uuid == named.uuid
    ):
        return _from_strict(index, graph, verdict, LeafPolicy.AUTO)  # Claude Code and the seed agree
    below_until = start.pointer_line if named is not None and not start.below_checkpoint else None
    resumed = claude_code_chain(index, graph, start.start, below_until=below_until)
    return _from_resume(index, graph, verdict, resumed, start, provable=options.provable)
