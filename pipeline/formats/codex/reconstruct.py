"""The context Codex rebuilds when it resumes a rollout, as Codex's own reconstruction does it.

Codex (0.171, `rollout_reconstruction.rs`) scans the rollout newest to oldest in user-turn
segments, skipping the segments a `thread_rolled_back` drops, until the newest surviving
`compacted` record with `replacement_history` is found: that history is the base, and every
record buffered after it is replayed forward (response items recorded, later compactions replace
the history, rollbacks drop the newest user turns). A `compacted` record without
`replacement_history` is rebuilt from Codex's initial context, the user messages before it and its
summary message. Before sending, Codex answers every unanswered call with "aborted" and drops
outputs whose call is gone. Only records after the base are replayed (the items of a mid-turn
compaction's own turn before it are what its replacement_history summarizes). Here each rebuilt
item is a reference to where it comes from, never its text; `rollout_items.materialize` reads the
items when a caller needs them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Final

from pipeline.formats.codex.item_types import API_ITEM_TYPES, CALL_OUTPUTS, CALL_TYPES, OUTPUT_TYPES
from pipeline.formats.codex.rollout_decode import Rollout, RolloutEntry, RolloutKind

__all__ = ["ContextItem", "ItemOrigin", "Rebuilt", "contexts_at", "rebuild_context"]

_STARTED: Final = frozenset({"task_started", "turn_started"})
_COMPLETE: Final = frozenset({"task_complete", "turn_complete"})


class ItemOrigin(StrEnum):
    """Where one item of the rebuilt context comes from."""

    LINE = "line"  # a response item record, as written
    REPLACEMENT = "replacement"  # an item of a `compacted` record's replacement_history
    INITIAL_CONTEXT = "initial-context"  # Codex's own instructions, rebuilt from its settings
    REBUILT_USER = "rebuilt-user"  # a user message's text, re-sent after a legacy compaction
    SUMMARY = "summary"  # a legacy compaction's summary message
    ABORTED_OUTPUT = "aborted-output"  # Codex's answer to a call that was never answered


@dataclass(frozen=True, slots=True)
class ContextItem:
    """One item of the rebuilt context: its origin, source line (and slot), and its kind."""

    origin: ItemOrigin
    line: int
    slot: int | None
    type: str | None
    role: str | None = None
    call_id: str | None = None
    user_turn: bool = False


@dataclass(frozen=True, slots=True)
class Rebuilt:
    """The context Codex rebuilds, and the lines that decided it."""

    items: tuple[ContextItem, ...]
    base_line: int | None  # the `compacted` record whose replacement_history is the base
    replayed: tuple[int, ...]  # the lines replayed forward after the base, in order
    rolled_back: int  # user turns a rollback dropped
    resumable: bool  # Codex resumes the file at all (the 0.2x layout it does not)
    orphans: tuple[ContextItem, ...] = ()  # outputs Codex drops: their call is not in the context


@dataclass(slots=True)
class _Segment:
    turn_id: str | None = None
    user_turn: bool = False
    has_model: bool = False
    reference: str = "never"  # never | cleared | set
    base: int | None = None


@dataclass(slots=True)
class _Scan:
    base: int | None = None
    model_known: bool | None = None
    reference: str = "never"
    pending: int = 0
    rolled_back: int = 0
    suffix: list[int] = field(default_factory=list)

    def finalize(self, segment: _Segment) -> None:
        if self.pending > 0:
            if segment.user_turn:
                self.pending -= 1
                self.rolled_back += 1
            return
        if self.base is None and segment.base is not None:
            self.base = segment.base
        if self.model_known is None and segment.user_turn:
            self.model_known = segment.has_model
        if self.reference == "never" and (segment.user_turn or segment.reference == "cleared"):
            self.reference = segment.reference

    @property
    def settled(self) -> bool:
        return self.base is not None and bool(self.model_known) and self.reference != "never"


def _compatible(active: str | None, other: str | None) -> bool:
    return active is None or other is None or active == other


def _step(
    scan: _Scan, active: _Segment | None, line: int, entry: RolloutEntry
) -> tuple[_Segment | None, bool]:
    """One record of the reverse scan: the active segment after it, and whether it is buffered."""
    kind, item = entry.kind, entry.item if entry.kind is RolloutKind.EVENT_MSG else None
    if kind is RolloutKind.COMPACTED:
        active = active or _Segment()
        active.reference = "cleared" if active.reference == "never" else active.reference
        if active.base is None and entry.replacement:
            active.base = line
            return active, False
    elif item == "thread_rolled_back":
        scan.pending += entry.rollback
    elif item in _STARTED:
        if active is not None and _compatible(active.turn_id, entry.turn_id):
            scan.finalize(active)
            return None, True
    elif item in _COMPLETE:
        active = active or _Segment()
        active.turn_id = active.turn_id or entry.turn_id
    elif item == "turn_aborted":
        if active is not None:
            active.turn_id = active.turn_id or entry.turn_id
        elif entry.turn_id is not None:
            active = _Segment(turn_id=entry.turn_id)
    elif item == "user_message":
        active = active or _Segment()
        active.user_turn = True
    elif kind is RolloutKind.TURN_CONTEXT:
        active = active or _Segment()
        _turn_context(active, entry)
    return active, True


def _scan_back(rollout: Rollout) -> _Scan:
    """The reverse scan: the base, the rollback budget used, and the surviving suffix (reversed)."""
    scan, active = _Scan(), None
    for line in range(len(rollout), 0, -1):
        entry = rollout.entry(line)
        if entry is None:
            continue
        active, buffer = _step(scan, active, line, entry)
        if scan.settled:
            break
        if buffer:
            scan.suffix.append(line)
    if active is not None:
        scan.finalize(active)
    return scan


def _turn_context(segment: _Segment, entry: RolloutEntry) -> None:
    if segment.turn_id is None:
        segment.turn_id = entry.turn_id
        segment.user_turn = True
    if _compatible(segment.turn_id, entry.turn_id):
        segment.has_model = True
        if segment.reference == "never":
            segment.reference = "set"


def rebuild_context(rollout: Rollout, replacements: dict[int, tuple[ContextItem, ...]]) -> Rebuilt:
    """The context Codex sends on resume (before its own initial context and the new prompt).

    `replacements` maps each `compacted` line with replacement_history to its items (read by
    `rollout_items.replacement_items`); the reverse scan decides which of them is the base.
    """
    if rollout.legacy:
        return Rebuilt((), None, (), 0, resumable=False)
    scan = _scan_back(rollout)
    history: list[ContextItem] = list(replacements.get(scan.base, ())) if scan.base is not None else []
    # Only what follows the base is replayed: a mid-turn compaction (every one in the corpus) has
    # its turn's earlier items in the segment the reverse scan buffered, and they are summarized.
    replayed = tuple(line for line in reversed(scan.suffix) if scan.base is None or line > scan.base)
    for line in replayed:
        entry = rollout.entry(line)
        assert entry is not None  # only record lines are buffered
        history = _replay(history, line, entry, replacements)
    sent, orphans = _for_prompt(history)
    return Rebuilt(sent, scan.base, replayed, scan.rolled_back, resumable=True, orphans=orphans)


def _replay(
    history: list[ContextItem],
    line: int,
    entry: RolloutEntry,
    replacements: dict[int, tuple[ContextItem, ...]],
) -> list[ContextItem]:
    """The history after one record: an item appended, a compaction's history installed, or the
    newest user turns dropped by a rollback."""
    if entry.is_item and _is_api(entry):
        history.append(
            ContextItem(ItemOrigin.LINE, line, None, entry.item, entry.role, entry.call_id, entry.user_turn)
        )
    elif entry.kind is RolloutKind.COMPACTED:
        history = list(replacements[line]) if entry.replacement else _legacy_compaction(history, line)
    elif entry.kind is RolloutKind.EVENT_MSG and entry.item == "thread_rolled_back":
        history = _drop_user_turns(history, entry.rollback)
    return history


def _head(rollout: Rollout, cut: int) -> Rollout:
    """The rollout's lines before `cut`, as a file of their own."""
    end = cut - 1
    return replace(
        rollout,
        offsets=rollout.offsets[:end],
        lengths=rollout.lengths[:end],
        kinds=rollout.kinds[:end],
        entries=rollout.entries[:end],
    )


def contexts_at(
    rollout: Rollout, replacements: dict[int, tuple[ContextItem, ...]], cuts: Sequence[int]
) -> Iterator[tuple[ContextItem, ...]]:
    """The context Codex sends at each of the ascending `cuts`: what resuming the rollout cut just
    before it rebuilds. Without a rollback that is the forward replay the rebuild does after its
    base (the newest compaction installs its history), so one pass gives every cut; with one, a
    rollback decides which compaction is the base, and each cut is rebuilt on its own."""
    if rollout.legacy:
        yield from (() for _ in cuts)
        return
    if any(e is not None and e.item == "thread_rolled_back" for e in rollout.entries):
        for cut in cuts:
            head = {line: items for line, items in replacements.items() if line < cut}
            yield rebuild_context(_head(rollout, cut), head).items
        return
    history: list[ContextItem] = []
    replayed = 0  # the lines before this one are in `history`
    for cut in cuts:
        for line in range(replayed + 1, cut):
            entry = rollout.entry(line)
            if entry is not None:
                history = _replay(history, line, entry, replacements)
        replayed = max(replayed, cut - 1)
        yield _for_prompt(history)[0]


def _is_api(entry: RolloutEntry) -> bool:
    return entry.item in API_ITEM_TYPES and not (entry.item == "message" and entry.role == "system")


def _drop_user_turns(history: list[ContextItem], turns: int) -> list[ContextItem]:
    """Codex's `drop_last_n_user_turns`: cut the history at the n-th newest user turn."""
    starts = [position for position, item in enumerate(history) if item.user_turn]
    if turns <= 0 or not starts:
        return history
    return history[: starts[max(len(starts) - turns, 0)]]


def _legacy_compaction(history: list[ContextItem], line: int) -> list[ContextItem]:
    """A compaction without replacement_history: initial context, the user messages, the summary."""
    users = [
        ContextItem(ItemOrigin.REBUILT_USER, item.line, item.slot, "message", "user", user_turn=True)
        for item in history
        if item.user_turn
    ]
    summary = ContextItem(ItemOrigin.SUMMARY, line, None, "message", "user")
    return [ContextItem(ItemOrigin.INITIAL_CONTEXT, line, None, None), *users, summary]


def _for_prompt(history: list[ContextItem]) -> tuple[tuple[ContextItem, ...], tuple[ContextItem, ...]]:
    """What Codex sends: every call answered (with "aborted" right after it), orphan outputs gone."""
    calls = {item.call_id for item in history if item.type in CALL_TYPES and item.call_id}
    answered = {item.call_id for item in history if item.type in OUTPUT_TYPES and item.call_id}
    sent: list[ContextItem] = []
    orphans: list[ContextItem] = []
    for item in history:
        if item.type in OUTPUT_TYPES and item.call_id not in calls:
            orphans.append(item)
            continue
        sent.append(item)
        if item.type in CALL_TYPES and item.call_id and item.call_id not in answered:
            output = CALL_OUTPUTS[item.type]
            sent.append(
                ContextItem(ItemOrigin.ABORTED_OUTPUT, item.line, item.slot, output, call_id=item.call_id)
            )
            answered.add(item.call_id)
    return tuple(sent), tuple(orphans)
