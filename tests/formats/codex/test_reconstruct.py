"""The context Codex rebuilds on resume: base, replay, rollbacks, legacy compactions, answers."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pipeline.formats.codex.reconstruct import ContextItem, ItemOrigin, Rebuilt, contexts_at, rebuild_context
from pipeline.formats.codex.rollout_decode import Rollout, decode_rollout
from pipeline.formats.codex.rollout_items import materialize, replacement_items
from pipeline.formats.line_guard import LineLimits
from tests.support.rollout_builder import RolloutBuilder

LIMITS = LineLimits(max_line_bytes=1 << 20, max_json_depth=200)


def _rebuild(b: RolloutBuilder) -> tuple[Rebuilt, list[dict[str, Any]]]:
    data = b.to_bytes()
    rollout = decode_rollout(data, LIMITS)
    rebuilt = rebuild_context(rollout, replacement_items(rollout, data)[0])
    return rebuilt, list(materialize(rollout, data, rebuilt))


def _texts(items: list[dict[str, Any]]) -> list[str]:
    return [part["text"] for item in items if item["type"] == "message" for part in item["content"]]


def test_without_compaction_every_api_item_is_replayed_in_order() -> None:
    b = RolloutBuilder(seed=1)
    b.item(b.message("developer", "<permissions instructions>"))
    b.item(b.message("system", "never sent"))
    b.item({"type": "ghost_snapshot", "ghost_commit": {"id": "abc"}})
    b.exchange("first task", tools=1)
    rebuilt, items = _rebuild(b)
    assert rebuilt.base_line is None and rebuilt.resumable
    assert [item["type"] for item in items] == [
        "message", "message", "reasoning", "function_call", "function_call_output", "message",
    ]  # fmt: skip
    assert _texts(items) == ["<permissions instructions>", "first task", "Done with: first task"]


def test_the_newest_replacement_history_is_the_base_and_later_items_are_replayed() -> None:
    b = RolloutBuilder(seed=2)
    b.exchange("old task")
    b.turn("second task")
    b.compacted("first summary", [b.message("user", "old task"), b.message("user", "FIRST")])
    b.end_turn()
    b.turn("third task")
    b.tool("exec_command", {"cmd": "ls"}, "summarized by the compaction below")
    newest = b.compacted("second summary", [b.message("user", "third task"), b.message("user", "SECOND")])
    b.assistant("after the compaction")
    b.end_turn()
    b.exchange("fourth task", tools=1)
    rebuilt, items = _rebuild(b)
    assert rebuilt.base_line == newest
    assert _texts(items)[:4] == ["third task", "SECOND", "after the compaction", "fourth task"]
    assert not any(item.get("output") == "summarized by the compaction below" for item in items)
    assert [i.origin for i in rebuilt.items[:2]] == [ItemOrigin.REPLACEMENT, ItemOrigin.REPLACEMENT]
    assert "old task" not in _texts(items)


def test_a_rollback_drops_the_newest_user_turns() -> None:
    b = RolloutBuilder(seed=3)
    b.exchange("kept task", tools=1)
    b.exchange("dropped task", tools=1)
    b.rollback(1)
    rebuilt, items = _rebuild(b)
    assert "dropped task" not in _texts(items) and "Done with: dropped task" not in _texts(items)
    assert _texts(items) == ["kept task", "Done with: kept task"]
    assert rebuilt.rolled_back == 1


def test_a_compaction_inside_a_rolled_back_turn_is_not_the_base() -> None:
    b = RolloutBuilder(seed=4)
    b.exchange("task one", tools=0)
    b.compacted("summary one", [b.message("user", "task one"), b.message("user", "S1")])
    b.exchange("task two", tools=0)
    b.turn("task three")
    b.compacted("summary two", [b.message("user", "task three"), b.message("user", "S2")])
    b.end_turn()
    b.rollback(1)
    rebuilt, items = _rebuild(b)
    assert "S2" not in _texts(items) and "S1" in _texts(items)
    assert rebuilt.base_line is not None and _texts(items)[:2] == ["task one", "S1"]


def test_a_compaction_without_replacement_history_is_rebuilt_from_users_and_summary() -> None:
    b = RolloutBuilder(seed=5)
    b.context()
    b.exchange("alpha", tools=1)
    b.exchange("beta", tools=1)
    b.compacted("the summary text", None)
    b.exchange("gamma", tools=0)
    rebuilt, items = _rebuild(b)
    origins = [item.origin for item in rebuilt.items]
    assert origins[:4] == [
        ItemOrigin.INITIAL_CONTEXT,
        ItemOrigin.REBUILT_USER,
        ItemOrigin.REBUILT_USER,
        ItemOrigin.SUMMARY,
    ]
    assert _texts(items)[:4] == ["alpha", "beta", "the summary text", "gamma"]


def test_every_call_is_answered_and_orphan_outputs_are_dropped() -> None:
    b = RolloutBuilder(seed=6)
    b.turn("go")
    b.output("call_nobody", "orphan")
    unanswered = b.call("exec_command", {"cmd": "sleep 100"})
    rebuilt, items = _rebuild(b)
    assert [item["type"] for item in items] == ["message", "function_call", "function_call_output"]
    assert items[-1] == {"type": "function_call_output", "call_id": unanswered, "output": "aborted"}
    assert rebuilt.items[-1].origin is ItemOrigin.ABORTED_OUTPUT


def test_the_legacy_layout_is_not_resumable() -> None:
    b = RolloutBuilder(seed=7)
    legacy = RolloutBuilder(seed=7)
    legacy._lines = [
        b'{"id":"x","timestamp":"2025-08-19T08:25:08.061Z","instructions":null}',
        b'{"record_type":"state"}',
    ]
    legacy.raw(b'{"type":"message","id":null,"role":"user","content":[{"type":"input_text","text":"hi"}]}')
    rebuilt, items = _rebuild(legacy)
    assert not rebuilt.resumable and items == []
    assert _rebuild(b)[0].resumable


def _by_prefix(data: bytes, cuts: list[int]) -> list[tuple[ContextItem, ...]]:
    """The reference: the rollout cut before each line, rebuilt from scratch."""
    rollout = decode_rollout(data, LIMITS)
    replacements = replacement_items(rollout, data)[0]
    contexts = []
    for cut in cuts:
        end = cut - 1
        head: Rollout = replace(
            rollout,
            offsets=rollout.offsets[:end],
            lengths=rollout.lengths[:end],
            kinds=rollout.kinds[:end],
            entries=rollout.entries[:end],
        )
        contexts.append(rebuild_context(head, {k: v for k, v in replacements.items() if k < cut}).items)
    return contexts


def _in_one_pass(data: bytes, cuts: list[int]) -> list[tuple[ContextItem, ...]]:
    rollout = decode_rollout(data, LIMITS)
    return list(contexts_at(rollout, replacement_items(rollout, data)[0], cuts))


def _compacting() -> RolloutBuilder:
    b = RolloutBuilder(seed=7)
    b.context()
    b.exchange("one", tools=2)
    b.compacted("S1", [b.message("user", "one"), b.message("user", "S1")])
    b.exchange("two", tools=1)
    b.turn("three")
    b.call("exec_command", {"cmd": "sleep 9"})  # unanswered when the next compaction comes
    b.compacted("S2", None)
    b.exchange("four", tools=1)
    return b


@pytest.mark.parametrize("rolled_back", [False, True])
def test_the_context_at_every_line_is_what_resuming_there_rebuilds(rolled_back: bool) -> None:
    b = _compacting()
    if rolled_back:  # a rollback decides the base: each line rebuilt on its own
        b.rollback(1)
        b.exchange("five", tools=1)
    data = b.to_bytes()
    cuts = list(range(1, b.lines + 2))
    assert _in_one_pass(data, cuts) == _by_prefix(data, cuts)


def test_the_one_pass_replay_agrees_with_the_rebuild_on_the_corpus(codex_corpus: Path) -> None:
    for path in sorted(codex_corpus.glob("*.jsonl")):
        data = path.read_bytes()
        lines = data.count(b"\n") + 1
        cuts = sorted({*range(1, lines + 1, 37), lines})  # every 37th line and the end
        assert _in_one_pass(data, cuts) == _by_prefix(data, cuts), path.name
