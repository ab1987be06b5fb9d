"""The six-way partition: every source line lands in exactly one set (seed 004).

`summary` and `raw_keep` split the active chain at the cut (a sweep has no cut, so the whole
chain is `raw_keep`); `side_keep` holds file-history snapshots correlated with kept records;
`control_projection` holds the one pointer and the leading UI metadata the output re-projects,
and the summarized span's attachment records whose state Claude Code folds on resume, which the
output carries after its summary (`pipeline.formats.claude_code.resume_state`);
`excluded_branch` holds every other uuid record; `excluded_unattributed` holds the rest.
Excluded sets leave this module only as counts and digests.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from pipeline.core.index import LineIndex
from pipeline.core.line_runs import LineRuns
from pipeline.errors import CompactionError
from pipeline.formats.claude_code import scan
from pipeline.vocabulary import CheckpointPolicy, PartitionSet, RecordType

__all__ = [
    "LineSet",
    "Partition",
    "PartitionError",
    "checked_partition",
    "correlated_snapshots_reference",
    "line_digest",
    "partition_lines",
    "select_snapshots",
]

_CONTROL_TYPES: Final = frozenset({"mode", "permission-mode", "custom-title", "ai-title", "agent-name"})


class PartitionError(CompactionError):
    """The six sets are not disjoint or do not cover every line (an internal invariant)."""


def line_digest(lines: Iterable[int]) -> str:
    """First 16 hex of SHA-256 over the comma-joined sorted 1-based line numbers."""
    if isinstance(lines, LineRuns):  # already sorted, without repeats: joined a run at a time
        joined = ",".join(",".join(map(str, run)) for run in lines.runs())
    else:
        joined = ",".join(map(str, sorted(lines)))
    return hashlib.sha256(joined.encode("ascii")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class LineSet:
    """A set of 1-based line numbers with its content-free digest.

    The numbers are held as runs (`LineRuns`), not a frozenset: the six sets hold every line of
    the session, for as long as the compress job runs.
    """

    lines: LineRuns

    @property
    def count(self) -> int:
        """Number of lines."""
        return len(self.lines)

    @property
    def digest(self) -> str:
        """Content-free digest of the line numbers."""
        return line_digest(self.lines)


@dataclass(frozen=True, slots=True)
class Partition:
    """The six disjoint sets covering every line of one source file."""

    sets: dict[PartitionSet, LineSet]

    def __getitem__(self, name: PartitionSet) -> LineSet:
        return self.sets[name]


def control_projection_lines(index: LineIndex, pointer_line: int | None) -> frozenset[int]:
    """Leading UI metadata (before the first uuid record) and the one pointer the output projects.

    Older `last-prompt` records name leaves a compaction may drop; they are not carried over.
    """
    selected: set[int] = set() if pointer_line is None else {pointer_line}
    for number, record in enumerate(index.records, 1):
        if record is None:
            continue
        if record.uuid is not None:
            break
        if record.type in _CONTROL_TYPES and not record.uuid_malformed:
            selected.add(number)
    return frozenset(selected)


def select_snapshots(
    index: LineIndex,
    kept: Iterable[int],
    *,
    policy: CheckpointPolicy,
    limit: int,
    stop_line: int | None,
) -> frozenset[int]:
    """File-history snapshots whose ids correlate with kept records (the last `limit` of them):
    a whole-file pass, in the Rust core where built (`correlated_snapshots_reference` is what it
    is held to)."""
    if policy is CheckpointPolicy.NONE or limit <= 0:
        return frozenset()
    last = len(index) if stop_line is None else stop_line - 1
    if scan.COMPILED:
        selected = scan.snapshot_lines(index.records, tuple(kept), last)
    else:
        selected = correlated_snapshots_reference(index, kept, last)
    return frozenset(selected[-limit:])


def correlated_snapshots_reference(index: LineIndex, kept: Iterable[int], last: int) -> tuple[int, ...]:
    """The snapshot lines up to `last` (no uuid, no parent) whose message id a kept record
    carries, from one of the kept records' sessions, in file order; pure Python."""
    active_ids: set[str] = set()
    sessions: set[str] = set()
    records = index.records
    for number in kept:
        record = records[number - 1]
        if record is None:
            continue
        # The correlation kinds (uuid, message id, source tool assistant), read directly: this
        # runs for every kept record.
        for value in (record.uuid, record.message_id, record.source_tool_assistant):
            if value:
                active_ids.add(value)
        if record.session:
            sessions.add(record.session)
    selected = []
    for number, record in enumerate(records[: max(last, 0)], 1):
        if record is None or record.type != RecordType.FILE_HISTORY_SNAPSHOT or record.uuid or record.parent:
            continue
        if record.session and sessions and record.session not in sessions:
            continue
        if record.snapshot_message_id in active_ids:
            selected.append(number)
    return tuple(selected)


def partition_lines(
    index: LineIndex,
    *,
    summary: Iterable[int],
    raw_keep: Iterable[int],
    side_keep: Iterable[int],
    pointer_line: int | None,
    projected: Iterable[int] = (),
    branch_isolation: bool = True,
) -> Partition:
    """Assign every line to one set and assert the sets are disjoint and complete.

    `projected` are summarized lines the output carries as they are (they leave `summary`).
    Without branch isolation (the physical-tail mode) no uuid record is excluded as a branch.
    """
    projected_set = frozenset(projected)
    summary_set = frozenset(summary) - projected_set
    raw_set = frozenset(raw_keep)
    side_set = frozenset(side_keep)
    control_set = control_projection_lines(index, pointer_line) | projected_set
    control_set -= summary_set | raw_set
    assigned = summary_set | raw_set | side_set | control_set
    branch: frozenset[int] = frozenset()
    if branch_isolation:
        branch = frozenset(
            number
            for number, record in enumerate(index.records, 1)
            if record is not None and record.uuid is not None and number not in assigned
        )
    # One line at a time, never a set of every line: on a giant of small records such sets cost
    # more than the index (issue 35: the peak is held to 1.5 x the session's size).
    unattributed = frozenset(
        number for number in range(1, len(index) + 1) if number not in assigned and number not in branch
    )
    sets = {
        PartitionSet.SUMMARY: summary_set,
        PartitionSet.RAW_KEEP: raw_set,
        PartitionSet.SIDE_KEEP: side_set,
        PartitionSet.CONTROL_PROJECTION: control_set,
        PartitionSet.EXCLUDED_BRANCH: branch,
        PartitionSet.EXCLUDED_UNATTRIBUTED: unattributed,
    }
    return checked_partition(sets, len(index))


def checked_partition(sets: Mapping[PartitionSet, frozenset[int]], lines: int) -> Partition:
    """The six sets as a `Partition`, once they are proven disjoint and complete over `lines`.

    A format decides which line goes where (Claude Code above, a Codex rollout in its format);
    the proof is one and the same.
    """
    if set(sets) != set(PartitionSet):
        raise PartitionError(f"partition names {sorted(sets)}, not the six sets")
    total = sum(len(members) for members in sets.values())
    runs = {name: LineRuns(members) for name, members in sets.items()}
    count = _covered(runs.values(), lines)
    if total != lines or count != lines:
        raise PartitionError(f"partition covers {count} of {lines} lines with {total} assignments")
    return Partition({name: LineSet(members) for name, members in runs.items()})


def _covered(sets: Iterable[LineRuns], lines: int) -> int:
    """How many of the numbers 1 to `lines` some set holds: the sets' runs clipped and merged,
    a step a run (never a set, nor a byte a line: see `partition_lines`)."""
    spans = sorted((max(run.start, 1), min(run.stop, lines + 1)) for runs in sets for run in runs.runs())
    count, reached = 0, 1
    for start, stop in spans:
        fresh = max(start, reached)
        if stop > fresh:
            count += stop - fresh
            reached = stop
    return count
