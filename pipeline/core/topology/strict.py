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
from pipeline.vocabulary import ChainEnd, LeafSource, StrictStatus

__all__ = ["Lineage", "StrictVerdict", "analyze_lineage", "count_inversions", "strict_verdict"]

_REASON_STATUS: Final = {
    "last-prompt-absent": StrictStatus.ABSENT,
    "duplicate-uuid": StrictStatus.DUPLICATE_UUID,
    "leaf-uuid-malformed": StrictStatus.MALFORMED,
    "chain-missing-uuid": StrictStatus.DANGLING,
    "chain-loop": StrictStatus.LOOP,
    "chain-malformed-parent": StrictStatus.MALFORMED_PARENT,
    "chain-empty": StrictStatus.DANGLING,
    "chain-non-monotonic": StrictStatus.NON_MONOTONIC,
    "lineage-unsafe": StrictStatus.SESSION_MISMATCH,
    "extension-limit-exceeded": StrictStatus.EXTENSION_LIMIT,
    "extension-authority-session-missing": StrictStatus.SESSION_MISMATCH,
    "extension-record-missing-uuid": StrictStatus.EXTENSION_UNSAFE,
    "extension-record-not-linear-descendant": StrictStatus.EXTENSION_BRANCH,
    "extension-record-session-mismatch": StrictStatus.SESSION_MISMATCH,
    "extension-record-not-safe-closure": StrictStatus.EXTENSION_UNSAFE,
    "extension-pending-tool-ids": StrictStatus.EXTENSION_UNSAFE,
    "ok": StrictStatus.VALID,
}


@dataclass(frozen=True, slots=True)
class Lineage:
    """Contiguous sessionId runs along a chain (seed: one-way lineage, no A-B-A)."""

    ok: bool
    reason: str | None
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
    reason: str
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
        if parent.type == child.type == "attachment" and parent.session and parent.session == child.session:
            compatible += 1
        else:
            incompatible += 1
    return incompatible, compatible


def analyze_lineage(index: LineIndex, chain: tuple[int, ...], authority: str | None) -> Lineage:
    """One-way session lineage check of a root-to-leaf chain against the pointer's session."""
    sessions = [
        (position, record.session)
        for position, line in enumerate(chain)
        if (record := index.record(line)) is not None and record.session
    ]
    if not sessions:
        return Lineage(True, None, 0, None, 0)
    runs: list[tuple[str, int]] = []
    for position, session in sessions:
        if not runs or runs[-1][0] != session:
            runs.append((session, position))
    final_session, final_start = runs[-1]
    ids = [session for session, _ in runs]
    reason = None
    if len(runs) == 1:
        if authority and authority != final_session:
            reason = "authority-session-does-not-match-chain"
    elif len(sessions) != len(chain):
        reason = "mixed-session-lineage-has-missing-session-id"
    elif len(ids) != len(set(ids)):
        reason = "session-lineage-returns-to-an-earlier-session"
    elif not authority:
        reason = "mixed-session-lineage-requires-authority-session"
    elif authority != final_session:
        reason = "authority-session-does-not-match-final-lineage-session"
    return Lineage(reason is None, reason, len(runs), final_session, final_start)


def _reject(reason: str, **fields: object) -> StrictVerdict:
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
) -> tuple[str, tuple[int, ...], str | None]:
    """Accept records after the pointer only as a direct, same-session tool-result closure."""
    after = [number for number in range(pointer_line + 1, len(index) + 1) if index.record(number) is not None]
    if not after:
        return "ok", (), None
    if len(after) > limit:
        return "extension-limit-exceeded", (), None
    pointer = index.record(pointer_line)
    leaf = index.record(leaf_line)
    assert pointer is not None
    assert leaf is not None
    if not pointer.session:
        return "extension-authority-session-missing", (), None
    expected_parent = leaf.uuid
    pending = set(leaf.tool_uses)
    for number in after:
        record = index.record(number)
        assert record is not None
        if record.uuid is None:
            return "extension-record-missing-uuid", (), None
        if record.parent != expected_parent:
            return "extension-record-not-linear-descendant", (), None
        if record.session != pointer.session:
            return "extension-record-session-mismatch", (), None
        closes = (
            record.is_api
            and record.role == "user"
            and record.tool_results
            and set(record.tool_results) <= pending
            and set(record.blocks) == {"R"}
        )
        if not closes:
            return "extension-record-not-safe-closure", (), None
        pending.difference_update(record.tool_results)
        expected_parent = record.uuid
    if pending:
        return "extension-pending-tool-ids", (), None
    return "ok", tuple(after), expected_parent


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
        return _reject("duplicate-uuid", leaf_source=source, detail_uuid=graph.duplicates[0])
    pointer_line = latest_pointer_line(index)
    if pointer_line is None:
        return _reject("last-prompt-absent", leaf_source=source)
    pointer = index.record(pointer_line)
    assert pointer is not None
    leaf = resume_leaf or pointer.pointer
    common: dict[str, object] = {"leaf_source": source, "pointer_line": pointer_line, "leaf_uuid": leaf}
    if not leaf:
        return _reject("leaf-uuid-malformed", **common)
    leaf_line = graph.line_of.get(leaf)
    if leaf_line is None:
        return _reject("chain-missing-uuid", detail_uuid=leaf, **common)
    trace = graph.trace(index, leaf_line)
    if trace.end is ChainEnd.EXTERNAL_PARENT:
        return _reject("chain-missing-uuid", detail_uuid=trace.missing_uuid, **common)
    if trace.end is ChainEnd.LOOP:
        return _reject("chain-loop", detail_uuid=trace.loop_uuid, **common)
    if trace.end is ChainEnd.MALFORMED_PARENT:
        malformed = index.record(trace.malformed_line or 0) if trace.malformed_line else None
        return _reject("chain-malformed-parent", detail_uuid=malformed.uuid if malformed else None, **common)
    chain = trace.lines
    if not chain:
        return _reject("chain-empty", **common)
    incompatible, compatible = count_inversions(index, chain)
    common.update(inversions=incompatible + compatible, attachment_inversions=compatible)
    if incompatible:
        return _reject("chain-non-monotonic", **common)
    lineage = analyze_lineage(index, chain, pointer.session)
    common["lineage"] = lineage
    if not lineage.ok:
        return _reject("lineage-unsafe", **common)
    extension: tuple[int, ...] = ()
    if max_extension > 0:
        reason, extension, new_leaf = _extension(index, graph, pointer_line, leaf_line, max_extension)
        if reason != "ok":
            return _reject(reason, **common)
        if extension:
            common.update(leaf_uuid=new_leaf, leaf_source=LeafSource.POST_LAST_PROMPT_CLOSURE)
    return StrictVerdict(
        status=StrictStatus.VALID,
        reason="ok",
        chain=chain + extension,
        extension_lines=extension,
        **common,  # type: ignore[arg-type]
    )
