"""Where a rollout's compaction cuts: by tokens, at a user turn when one fits, never splitting a
call from its output or a reasoning item from what follows it, never reaching back over a rollback."""

from __future__ import annotations

from pipeline.formats.codex.analysis import analyze_rollout
from pipeline.formats.codex.item_types import CALL_TYPES, OUTPUT_TYPES
from pipeline.formats.codex.rollout_decode import RolloutKind
from pipeline.formats.codex.tail import plan_tail
from pipeline.testing.settings import LIMITS
from tests.support.rollout_builder import RolloutBuilder


def _plan(b: RolloutBuilder, room: int):  # type: ignore[no-untyped-def]
    analysis = analyze_rollout(b.to_bytes(), LIMITS)
    items = list(analysis.rebuilt.items)
    tokens = [100] * len(items)
    return analysis, items, plan_tail(analysis.rollout, analysis.rebuilt, items, tokens, room)


def _long() -> RolloutBuilder:
    b = RolloutBuilder(seed=61)
    for turn in range(6):
        b.exchange(f"turn {turn}", tools=2)
    return b


def test_the_largest_tail_within_room_starts_at_a_turn_with_its_lifecycle() -> None:
    analysis, items, plan = _plan(_long(), room=1_000)
    assert plan is not None and plan.target_met and plan.at_turn
    assert (len(items) - plan.first_item) * 100 <= 1_000
    assert items[plan.first_item].user_turn
    entry = analysis.rollout.entry(plan.cut_line)
    assert entry is not None and entry.kind is RolloutKind.EVENT_MSG and entry.item == "task_started"


def test_a_tail_inside_a_turn_never_splits_a_call_or_follows_reasoning() -> None:
    for room in range(100, 800, 100):
        _, items, plan = _plan(_long(), room=room)
        assert plan is not None
        kept = items[plan.first_item :]
        calls = {i.call_id for i in kept if i.type in CALL_TYPES}
        assert all(i.call_id in calls for i in kept if i.type in OUTPUT_TYPES)
        assert items[plan.first_item - 1].type != "reasoning"


def test_when_nothing_fits_the_smallest_safe_tail_is_kept_and_says_so() -> None:
    _, items, plan = _plan(_long(), room=0)
    assert plan is not None and not plan.target_met and plan.first_item < len(items)


def test_a_tail_never_reaches_back_over_a_rollback() -> None:
    b = _long()
    rolled_back = b.rollback(1)
    b.exchange("after the rollback", tools=1)
    _, _, plan = _plan(b, room=100_000)
    assert plan is not None and plan.cut_line > rolled_back
