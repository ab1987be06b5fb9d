"""The seed's strict topology verdict, computed for every session whatever policy is in force.

Rules follow seed 004 ("Authoritative last-prompt", "Records after last-prompt", "UUID chain"):
the physically last `last-prompt` is authoritative and is never skipped for an older one; its
leaf's parent walk must be complete, acyclic, physically monotonic (except same-session
attachment-to-attachment edges) and of a one-way session lineage; records after the pointer are
accepted only as an explicit, bounded, safe tool-result closure.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import Final

from pipeline.core.graph import UuidGraph
from pipeline.core.index import LineIndex
from pipeline.formats.claude_code import scan
from pipeline.reasons import LineageReason, StrictReason
from pipeline.vocabulary import ChainEnd, LeafSource, RecordType, Role, StrictStatus

__all__ = [
    "Lineage",
    "StrictVerdict",
    "analyze_lineage",
    "count_inversions",
    "session_runs",
    "session_runs_reference",
    "strict_verdict",
]

_REASON_STATUS: Final = {
    StrictReason.LAST_PROMPT_ABSENT: StrictStatus.ABSENT,
    StrictReason.DUPLICATE_UUID: StrictStatus.DUPLICATE_UUID,
    StrictReason.LEAF_UUID_MALFORMED: StrictStatus.MALFORMED,
    StrictReason.CHAIN_MISSING_UUID: StrictStatus.DANGLING,
    StrictReason.CHAIN_LOOP: StrictStatus.LOOP,
    StrictReason.CHAIN_MALFORMED_PARENT: StrictStatus.MALFORMED_PARENT,
    StrictReason.CHAIN_EMPTY: StrictStatus.DANGLING,
    StrictReason.CHAIN_NON_MONOTONIC: StrictStatus.NON_MONOTONIC,
    StrictReason.LINEAGE_UNSAFE: StrictStatus.SESSION_MISMATCH,
    StrictReason.EXTENSION_LIMIT_EXCEEDED: StrictStatus.EXTENSION_LIMIT,
    StrictReason.EXTENSION_AUTHORITY_SESSION_MISSING: StrictStatus.SESSION_MISMATCH,
    StrictReason.EXTENSION_RECORD_MISSING_UUID: StrictStatus.EXTENSION_UNSAFE,
    StrictReason.EXTENSION_RECORD_NOT_LINEAR_DESCENDANT: StrictStatus.EXTENSION_BRANCH,
    StrictReason.EXTENSION_RECORD_SESSION_MISMATCH: StrictStatus.SESSION_MISMATCH,
    StrictReason.EXTENSION_RECORD_NOT_SAFE_CLOSURE: StrictStatus.EXTENSION_UNSAFE,
    StrictReason.EXTENSION_PENDING_TOOL_IDS: StrictStatus.EXTENSION_UNSAFE,
    StrictReason.OK: StrictStatus.VALID,
}


@dataclass(frozen=True, slots=True)
class Lineage:
    """Contiguous sessionId runs along a chain (seed: one-way lineage, no A-B-A)."""

    ok: bool
    reason: LineageReason | None
    run_count: int
    current_session: str | None
    current_start: int  # position in the chain where the final session's run begins

    @property
    def transitions(self) -> int:
        """Number of session changes along the chain."""
        return max(0, self.run_count - 1)


@dataclass(frozen=True, slots=True)
class StrictVerdict:
    """The strict verdict and, when valid, the chain it selects."""

    status: StrictStatus
    reason: StrictReason
    leaf_uuid: str | None
    leaf_source: LeafSource
    pointer_line: int | None
    chain: tuple[int, ...]  # root-to-leaf lines, extension included; empty unless valid
    inversions: int
    attachment_inversions: int
    lineage: Lineage | None
    extension_lines: tuple[int, ...]
    detail_uuid: str | None = None  # the missing, looping or malformed uuid, when relevant


def count_inversions(index: LineIndex, chain: tuple[int, ...]) -> tuple[int, int]:
    """(incompatible, compatible) parent edges whose child is physically before its parent."""
    incompatible = compatible = 0
    for parent_line, child_line in pairwise(chain):
        if child_line > parent_line:
            continue
        parent, child = index.record(parent_line), index.record(child_line)
        assert parent is not None
        assert child is not None
        if (
            parent.type == child.type == RecordType.ATTACHMENT
            and parent.session
            and parent.session == child.session
        ):
            compatible += 1
        else:
            incompatible += 1
    return incompatible, compatible


def analyze_lineage(index: LineIndex, chain: tuple[int, ...], authority: str | None) -> Lineage:
    """One-way session lineage check of a root-to-leaf chain against the pointer's session."""
    runs, named = session_runs(index, chain)
    if not named:
        return Lineage(True, None, 0, None, 0)
    final_session, final_start = runs[-1]
    ids = [session for session, _ in runs]
    reason = None
    if len(runs) == 1:
        if authority and authority != final_session:
            reason = LineageReason.AUTHORITY_MISMATCH
    elif named != len(chain):
        reason = LineageReason.MISSING_SESSION_ID
    elif len(ids) != len(set(ids)):
        reason = LineageReason.RETURNS_TO_EARLIER
    elif not authority:
        reason = LineageReason.REQUIRES_AUTHORITY
    elif authority != final_session:
        reason = LineageReason.AUTHORITY_NOT_FINAL
    return Lineage(reason is None, reason, len(runs), final_session, final_start)


def session_runs(index: LineIndex, chain: tuple[int, ...]) -> scan.SessionRuns:
    """The runs of equal named sessions along a chain, (session, position) each, and how many of
    its records name a session: one pass over the chain, in the Rust core where built."""
    return scan.session_runs(index.records, chain) if scan.COMPILED else session_runs_reference(index, chain)


def session_runs_reference(index: LineIndex, chain: tuple[int, ...]) -> scan.SessionRuns:
    """`session_runs` in pure Python."""
    runs: list[tuple[str, int]] = []
    named = 0
    for position, line in enumerate(chain):
        record = index.record(line)
        if record is None or not record.session:
            continue
        named += 1
        if not runs or runs[-1][0] != record.session:
            runs.append((record.session, position))
    return tuple(runs), named


def _reject(reason: StrictReason, **fields: object) -> StrictVerdict:
    base: dict[str, object] = {
        "leaf_uuid": None,
        "leaf_source": LeafSource.LAST_PROMPT,
        "pointer_line": None,
        "chain": (),
        "inversions": 0,
        "attachment_inversions": 0,
        "lineage": None,
        "extension_lines": (),
    }
    base.update(fields)
    return StrictVerdict(status=_REASON_STATUS[reason], reason=reason, **base)  # type: ignore[arg-type]


def latest_pointer_line(index: LineIndex) -> int | None:
    """Line of the physically last `last-prompt` record, malformed or not."""
    return index.latest_pointer


def _extension(  # noqa: PLR0911 - one early return per seed extension rule, in the seed's order
    index: LineIndex, graph: UuidGraph, pointer_line: int, leaf_line: int, limit: int
) -> tuple[StrictReason, tuple[int, ...], str | None]:
    """Accept records after the pointer only as a direct, same-session tool-result closure."""
    after = [number for number in range(pointer_line + 1, len(index) + 1) if index.record(number) is not None]
    if not after:
        return StrictReason.OK, (), None
    if len(after) > limit:
        return StrictReason.EXTENSION_LIMIT_EXCEEDED, (), None
    pointer = index.record(pointer_line)
    leaf = index.record(leaf_line)
    assert pointer is not None
    assert leaf is not None
    if not pointer.session:
        return StrictReason.EXTENSION_AUTHORITY_SESSION_MISSING, (), None
    expected_parent = leaf.uuid
    pending = set(leaf.tool_uses)
    for number in after:
        record = index.record(number)
        assert record is not None
        if record.uuid is None:
            return StrictReason.EXTENSION_RECORD_MISSING_UUID, (), None
        if record.parent != expected_parent:
            return StrictReason.EXTENSION_RECORD_NOT_LINEAR_DESCENDANT, (), None
        if record.session != pointer.session:
            return StrictReason.EXTENSION_RECORD_SESSION_MISMATCH, (), None
        closes = (
            record.is_api
            and record.role == Role.USER
            and record.tool_results
            and set(record.tool_results) <= pending
            and set(record.blocks) == {"R"}
        )
        if not closes:
            return StrictReason.EXTENSION_RECORD_NOT_SAFE_CLOSURE, (), None
        pending.difference_update(record.tool_results)
        expected_parent = record.uuid
    if pending:
        return StrictReason.EXTENSION_PENDING_TOOL_IDS, (), None
    return StrictReason.OK, tuple(after), expected_parent


def strict_verdict(  # noqa: PLR0911, PLR0912 - the seed's checks, one early return each, in order
    index: LineIndex,
    graph: UuidGraph,
    *,
    resume_leaf: str | None = None,
    max_extension: int = 0,
) -> StrictVerdict:
    """The seed's verdict for this file, exactly as the reference engine decides it."""
    source = LeafSource.MANUAL_OVERRIDE if resume_leaf else LeafSource.LAST_PROMPT
    if graph.duplicates:
        return _reject(StrictReason.DUPLICATE_UUID, leaf_source=source, detail_uuid=graph.duplicates[0])
    pointer_line = latest_pointer_line(index)
    if pointer_line is None:
        return _reject(StrictReason.LAST_PROMPT_ABSENT, leaf_source=source)
    pointer = index.record(pointer_line)
    assert pointer is not None
    leaf = resume_leaf or pointer.pointer
    common: dict[str, object] = {"leaf_source": source, "pointer_line": pointer_line, "leaf_uuid": leaf}
    if not leaf:
        return _reject(StrictReason.LEAF_UUID_MALFORMED, **common)
    leaf_line = graph.line_of.get(leaf)
    if leaf_line is None:
        return _reject(StrictReason.CHAIN_MISSING_UUID, detail_uuid=leaf, **common)
    trace = graph.trace(index, leaf_line)
    if trace.end is ChainEnd.EXTERNAL_PARENT:
        return _reject(StrictReason.CHAIN_MISSING_UUID, detail_uuid=trace.missing_uuid, **common)
    if trace.end is ChainEnd.LOOP:
        return _reject(StrictReason.CHAIN_LOOP, detail_uuid=trace.loop_uuid, **common)
    if trace.end is ChainEnd.MALFORMED_PARENT:
        malformed = index.record(trace.malformed_line or 0) if trace.malformed_line else None
        return _reject(
            StrictReason.CHAIN_MALFORMED_PARENT, detail_uuid=malformed.uuid if malformed else None, **common
        )
    chain = trace.lines
    if not chain:
        return _reject(StrictReason.CHAIN_EMPTY, **common)
    incompatible, compatible = count_inversions(index, chain)
    common.update(inversions=incompatible + compatible, attachment_inversions=compatible)
    if incompatible:
        return _reject(StrictReason.CHAIN_NON_MONOTONIC, **common)
    lineage = analyze_lineage(index, chain, pointer.session)
    common["lineage"] = lineage
    if not lineage.ok:
        return _reject(StrictReason.LINEAGE_UNSAFE, **common)
    extension: tuple[int, ...] = ()
    if max_extension > 0:
        reason, extension, new_leaf = _extension(index, graph, pointer_line, leaf_line, max_extension)
        if reason != StrictReason.OK:
            return _reject(reason, **common)
        if extension:
            common.update(leaf_uuid=new_leaf, leaf_source=LeafSource.POST_LAST_PROMPT_CLOSURE)
    return StrictVerdict(
        status=StrictStatus.VALID,
        reason=StrictReason.OK,
        chain=chain + extension,
        extension_lines=extension,
        **common,  # type: ignore[arg-type]
    )
