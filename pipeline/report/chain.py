"""Report sections about the chain a session resumes: the seed's verdict, the leaf, the chain."""

from __future__ import annotations

from msgspec import UNSET, UnsetType

from pipeline.core.graph import UuidGraph
from pipeline.core.index import LineIndex
from pipeline.core.topology.select import Topology
from pipeline.core.topology.strict import latest_pointer_line
from pipeline.reasons import StrictReason, TopologyRefusal
from pipeline.report.sections import ExcludedSection, LineSetSection, Section, line_set
from pipeline.vocabulary import ChainEnd, LeafPolicy, LeafSource, PromptCheck, StrictStatus

__all__ = [
    "ChainSection",
    "LeafSection",
    "StrictSection",
    "excluded_section",
    "leaf_section",
    "strict_section",
]


class StrictSection(Section, frozen=True, kw_only=True):
    """The seed's strict verdict, always computed whatever policy chose the leaf."""

    status: StrictStatus
    reason: StrictReason
    pointer_line: int | None
    leaf_uuid: str | None


class LeafSection(Section, frozen=True, kw_only=True):
    """The leaf actually used and what chose it."""

    uuid: str | None
    line: int | None
    source: LeafSource
    policy: LeafPolicy
    branch_isolation: bool
    chain_end: ChainEnd | None
    external_parent: bool
    last_prompt_check: PromptCheck
    # A TopologyRefusal or a StrictReason: written as its value, read back (completion markers) as
    # text, since msgspec decodes no union of two string enums.
    refusal: str | None
    unproven: TopologyRefusal | UnsetType = UNSET  # a safety rule the chain breaks, left to the proof


class ChainSection(Section, frozen=True, kw_only=True):
    """The active chain: its size, its lines, and why the records off it are off it."""

    records: int
    api_messages: int | UnsetType = UNSET
    lines: LineSetSection
    excluded: ExcludedSection
    partial_tool_results: int | UnsetType = UNSET


def strict_section(topology: Topology) -> StrictSection:
    strict = topology.strict
    return StrictSection(
        status=strict.status,
        reason=strict.reason,
        pointer_line=strict.pointer_line,
        leaf_uuid=strict.leaf_uuid,
    )


def leaf_section(topology: Topology) -> LeafSection:
    return LeafSection(
        uuid=topology.leaf_uuid,
        line=topology.leaf_line,
        source=topology.leaf_source if topology.leaf_line else LeafSource.NONE,
        policy=topology.policy,
        branch_isolation=topology.branch_isolation,
        chain_end=topology.chain_end,
        external_parent=topology.external_parent is not None,
        last_prompt_check=topology.prompt_check,
        refusal=topology.refusal,
        unproven=topology.unproven if topology.unproven is not None else UNSET,
    )


def excluded_section(index: LineIndex, graph: UuidGraph, topology: Topology) -> ExcludedSection:
    """Why excluded uuid records are excluded: pre-compaction history, sidechains, rewinds."""
    active = set(topology.chain)
    pointer = latest_pointer_line(index)
    pre, side, after, rewound = [], [], [], []
    main_is_sidechain = bool(topology.chain) and index.entry(topology.chain[-1]).sidechain
    for line in graph.uuid_lines:
        if line in active:
            continue
        if line in topology.pre_compaction:
            pre.append(line)
        elif index.entry(line).sidechain and not main_is_sidechain:
            side.append(line)
        elif pointer is not None and line > pointer and topology.policy is not LeafPolicy.PHYSICAL:
            after.append(line)
        else:
            rewound.append(line)
    return ExcludedSection(
        pre_compaction=line_set(pre),
        sidechain=line_set(side),
        after_pointer=line_set(after),
        rewound=line_set(rewound),
    )
