"""A pi compaction: where it cuts, the appended compaction entry, and re-reading the candidate."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from pipeline.formats.context_items import TailPlan
from pipeline.formats.pi.chat_form import MessageOrigin
from pipeline.formats.pi.compaction_entry import compose_compaction
from pipeline.formats.pi.cut import plan_tail, safe_cuts
from pipeline.formats.pi.session_analysis import PiAnalysis, analyze_session, compress_sets
from pipeline.formats.pi.session_decode import PiEntry
from pipeline.vocabulary import PartitionSet
from tests.support.pi_files import FIXTURES, LIMITS, pi_session_files

SUMMARY = "## Goal\nthe summary of the earlier work"


def _entries(analysis: PiAnalysis) -> dict[int, PiEntry]:
    return {entry.line: entry for entry in analysis.session.entries}


def _plan(analysis: PiAnalysis, share: int = 3) -> TailPlan | None:
    tokens = [sent.tokens for _, sent in analysis.sent()]
    return plan_tail(analysis.messages, _entries(analysis), tokens, sum(tokens) // share)


def test_no_cut_separates_a_call_from_its_result() -> None:
    analysis = analyze_session((FIXTURES / "tools.jsonl").read_bytes(), LIMITS)
    for index in safe_cuts(analysis.messages, _entries(analysis)):
        before = analysis.messages[:index]
        called = {c["id"] for m in before for c in m.body.get("tool_calls", ())}
        answered = {m.body.get("tool_call_id") for m in before if m.body["role"] == "tool"}
        assert called <= answered, index
        assert analysis.messages[index].body["role"] != "tool"


def test_the_tail_is_the_largest_that_fits_and_a_user_turn_when_one_does() -> None:
    analysis = analyze_session((FIXTURES / "tools.jsonl").read_bytes(), LIMITS)
    plan = _plan(analysis)
    assert plan is not None and plan.target_met and plan.at_turn
    tokens = [sent.tokens for _, sent in analysis.sent()]
    assert sum(tokens[plan.first_item :]) <= sum(tokens) // 3
    assert analysis.messages[plan.first_item].body["role"] == "user"


@pytest.mark.parametrize("path", pi_session_files(), ids=lambda p: p.name[-48:])
def test_the_candidate_re_reads_as_the_summary_then_the_originals_messages_from_the_cut(path: Path) -> None:
    data = path.read_bytes()
    analysis = analyze_session(data, LIMITS)
    plan = _plan(analysis)
    if plan is None:
        assert len(analysis.messages) < 2  # only a one-message session has no cut
        return
    kept = _entries(analysis)[plan.cut_line]
    candidate = compose_compaction(analysis.session, data, kept, SUMMARY, analysis.context_tokens())
    assert candidate.startswith(data)  # every original line, byte for byte
    assert candidate.count(b"\n") == data.count(b"\n") + 1 + (not data.endswith(b"\n"))
    reread = analyze_session(candidate, LIMITS)
    assert reread.messages[0].origin is MessageOrigin.SUMMARY
    assert SUMMARY in reread.messages[0].body["content"][0]["text"]
    assert [m.body for m in reread.messages[1:]] == [m.body for m in analysis.messages[plan.first_item :]]
    sets = compress_sets(analysis, plan.first_item)
    every = sorted(line for lines in sets.values() for line in lines)
    assert every == list(range(1, len(analysis.session) + 1))
    assert plan.cut_line in sets[PartitionSet.RAW_KEEP]


def test_a_version_one_session_gets_the_index_of_its_first_kept_entry() -> None:
    path = next(p for p in pi_session_files() if p.name == "badlogic__pi-mono__session.jsonl")
    data = path.read_bytes()
    analysis = analyze_session(data, LIMITS)
    plan = _plan(analysis)
    assert plan is not None
    kept = _entries(analysis)[plan.cut_line]
    candidate = compose_compaction(analysis.session, data, kept, SUMMARY, 1)
    record = orjson.loads(candidate.splitlines()[-1])
    assert "id" not in record and "parentId" not in record
    assert analysis.session.entries[record["firstKeptEntryIndex"]] is kept


def test_the_appended_entry_is_pis_compaction_parented_on_the_leaf() -> None:
    data = (FIXTURES / "tools.jsonl").read_bytes()
    analysis = analyze_session(data, LIMITS)
    plan = _plan(analysis)
    assert plan is not None
    kept = _entries(analysis)[plan.cut_line]
    record = orjson.loads(compose_compaction(analysis.session, data, kept, SUMMARY, 123).splitlines()[-1])
    leaf = analysis.branch.leaf
    assert leaf is not None
    assert record["type"] == "compaction" and record["parentId"] == leaf.entry_id
    assert record["firstKeptEntryId"] == kept.entry_id and record["tokensBefore"] == 123
    assert len(record["id"]) == 8 and record["id"] not in {e.entry_id for e in analysis.session.entries}
