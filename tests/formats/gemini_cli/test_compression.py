"""A compaction in Gemini CLI's own compression form: the cut, the candidate, and its check
(re-reading the candidate gives the summary, then the original's items from the cut)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.formats.gemini_cli.chat_analysis import analyze_chat
from pipeline.formats.gemini_cli.compression_records import (
    SUMMARY_LINE,
    compose_compression,
    compress_sets,
    plan_tail,
    summary_sent,
)
from pipeline.formats.line_guard import LineLimits
from pipeline.vocabulary import PartitionSet
from tests.support.gemini_files import LEGACY_CORPUS, fixture

LIMITS = LineLimits(64 << 20, 256)
SUMMARY = "<state_snapshot>\nthe work so far\n</state_snapshot>"


def _sources() -> list[Path]:
    found = [fixture("tools.jsonl"), fixture("compressed.jsonl"), fixture("long.jsonl")]
    return [*found, LEGACY_CORPUS] if LEGACY_CORPUS.is_file() else found


@pytest.mark.parametrize("path", _sources(), ids=lambda p: p.name[-20:])
def test_the_candidate_reads_as_the_summary_then_the_originals_items_from_the_cut(path: Path) -> None:
    original = analyze_chat(path.read_bytes(), LIMITS)
    plan = plan_tail(original, room=60)
    assert plan is not None and plan.at_turn
    candidate = analyze_chat(compose_compression(original, plan, SUMMARY), LIMITS)
    assert not candidate.legacy and candidate.findings == ()
    assert candidate.sent()[0] == summary_sent(SUMMARY)
    assert candidate.sent()[1:] == original.sent()[plan.first_item :]
    assert len(candidate.data) < len(original.data)
    assert b"<state_snapshot>" in candidate.chat.raw_line(candidate.data, SUMMARY_LINE)


def test_the_largest_tail_within_room_is_kept_and_a_miss_is_said() -> None:
    original = analyze_chat(fixture("tools.jsonl").read_bytes(), LIMITS)
    tokens = [item.tokens for item in original.sent()]
    roomy = plan_tail(original, room=sum(tokens))
    tight = plan_tail(original, room=0)
    assert roomy is not None and tight is not None
    assert roomy.target_met and not tight.target_met and roomy.first_item < tight.first_item
    assert sum(tokens[roomy.first_item :]) <= sum(tokens)


def test_the_compaction_sets_partition_the_lines() -> None:
    original = analyze_chat(fixture("tools.jsonl").read_bytes(), LIMITS)
    plan = plan_tail(original, room=60)
    assert plan is not None
    sets = compress_sets(original, plan)
    assert sum(map(len, sets.values())) == len(original.chat)
    assert sets[PartitionSet.RAW_KEEP] and sets[PartitionSet.SUMMARY]


def test_a_long_task_meets_a_target_its_prompts_allow() -> None:
    original = analyze_chat(fixture("long.jsonl").read_bytes(), LIMITS)
    total = sum(item.tokens for item in original.sent())
    plan = plan_tail(original, room=total // 2)
    assert plan is not None and plan.target_met
    assert sum(item.tokens for item in original.sent()[plan.first_item :]) <= total // 2
