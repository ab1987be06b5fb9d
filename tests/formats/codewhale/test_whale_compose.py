"""A CodeWhale compaction: where it may cut, the candidate in CodeWhale's checkpoint form, and
the check that matters: re-read, the candidate resumes as the checkpoint then the original's
messages from the cut, digest for digest, and passes seed 000's survival checks."""

from __future__ import annotations

import json

from pipeline.formats.codewhale.whale_analysis import CodewhaleAnalysis, analyze_session
from pipeline.formats.codewhale.whale_markers import (
    PROVENANCE,
    SUMMARY_HEADER,
    is_checkpoint,
    is_runtime_owned,
    is_wire_checkpoint,
)
from pipeline.formats.codewhale.whale_survival import Breach, last_round_start, survival_breaches
from pipeline.formats.line_guard import LineLimits
from pipeline.vocabulary import PartitionSet
from tests.support.codewhale_sessions import SessionBuilder, call, result, text

LIMITS = LineLimits(max_line_bytes=1 << 24, max_json_depth=200)


def _long_session(builder: SessionBuilder | None = None) -> SessionBuilder:
    session = builder or SessionBuilder()
    for turn in range(4):
        session.extend(
            [
                text("user", f"step {turn}: " + "explain the build " * 20),
                call(f"call_{turn}", say=f"running step {turn}"),
                result(f"call_{turn}", "output line\n" * 200, error=turn == 1),
                text("assistant", f"step {turn} done " * 10),
            ]
        )
    return session


def _messages(analysis: CodewhaleAnalysis) -> list:  # type: ignore[type-arg]
    assert analysis.rebuilt is not None
    return [item.message for item in analysis.rebuilt.messages]


def test_the_candidate_resumes_as_the_checkpoint_then_the_original_suffix() -> None:
    original = analyze_session(_long_session().bytes(), LIMITS)
    plan = original.plan_tail(room=1500)
    assert plan is not None
    assert plan.target_met
    assert plan.first_item > 0
    candidate = analyze_session(original.compose(plan, "Steps 0-2 built the tree."), LIMITS)

    assert candidate.findings == ()
    assert candidate.resumable
    sent = [item.digest for item in candidate.sent]
    assert sent[0] == original.summary_message("Steps 0-2 built the tree.").digest
    assert sent[1:] == [item.digest for item in original.sent[plan.first_item :]]
    assert is_wire_checkpoint(_messages(candidate)[0])
    assert survival_breaches(_messages(original), _messages(candidate)) == ()
    assert sum(i.tokens for i in candidate.sent) < sum(i.tokens for i in original.sent)


def test_the_sets_split_the_sent_records_at_the_cut() -> None:
    original = analyze_session(_long_session().bytes(), LIMITS)
    plan = original.plan_tail(room=1500)
    assert plan is not None
    sets = original.compress_sets(plan)
    assert sets[PartitionSet.SUMMARY] == set(range(1, plan.cut_line))
    assert sets[PartitionSet.RAW_KEEP] == set(range(plan.cut_line, original.line_count + 1))


def test_a_second_compaction_replaces_the_checkpoint_and_restates_the_pins() -> None:
    first = analyze_session(_long_session().bytes(), LIMITS)
    plan = first.plan_tail(room=1500)
    assert plan is not None
    document = json.loads(first.compose(plan, "first summary"))
    note = document["journal"]["entries"][0]["message"]["content"][0]
    note["text"] = note["text"].replace(
        "first summary", "first summary\n\nUser-pinned anchors (verbatim):\n- never push to main"
    )
    document["messages"][0]["content"][0]["text"] = note["text"]
    builder = SessionBuilder(entries=document["journal"]["entries"], leaf=document["journal"]["leaf_id"])
    second = analyze_session(_long_session(builder).bytes(), LIMITS)
    assert second.anchors() == "- never push to main"

    plan = second.plan_tail(room=1500)
    assert plan is not None
    candidate = analyze_session(second.compose(plan, "second summary"), LIMITS)
    messages = _messages(candidate)
    assert sum(is_checkpoint(m) for m in messages) == 1
    assert "first summary" not in messages[0].blocks[0].text
    assert survival_breaches(_messages(second), messages) == ()


def test_no_cut_splits_a_call_from_its_result_or_enters_the_last_round() -> None:
    original = analyze_session(_long_session().bytes(), LIMITS)
    plan = original.plan_tail(room=1)
    assert plan is not None
    assert not plan.target_met
    last_user = max(i for i, m in enumerate(_messages(original)) if m.role == "user" and m.texts())
    assert plan.first_item == last_user  # the smallest safe tail is the protected round itself


def test_a_history_without_a_user_turn_before_the_last_round_has_no_cut() -> None:
    session = SessionBuilder()
    session.extend([text("user", "only turn"), call("c"), result("c", "x")])
    assert analyze_session(session.bytes(), LIMITS).plan_tail(10_000) is None


def test_a_runtime_notice_after_the_last_prompt_does_not_open_the_protected_round() -> None:
    """CodeWhale writes notices as user messages whose turn_meta names a non-authoritative
    provenance (`is_runtime_owned_user_message`); the round still starts at the user's prompt."""
    notice = {
        "role": "user",
        "content": [
            {"type": "text", "text": "[runtime] background job finished"},
            {
                "type": "text",
                "text": "<turn_meta>\nInput provenance: runtime (non-authoritative)\n</turn_meta>",
            },
        ],
    }
    messages = _messages(analyze_session(_long_session().bytes(), LIMITS))
    builder = _long_session()
    builder.extend([notice, call("c9"), result("c9", "y")])
    with_notice = analyze_session(builder.bytes(), LIMITS)
    assert is_runtime_owned(_messages(with_notice)[-3]) and not is_runtime_owned(messages[-4])
    assert last_round_start(_messages(with_notice)) == last_round_start(messages) == len(messages) - 4


def test_the_survival_checks_catch_what_seed_000_forbids() -> None:
    original = analyze_session(_long_session().bytes(), LIMITS)
    plan = original.plan_tail(room=1500)
    assert plan is not None
    candidate = _messages(analyze_session(original.compose(plan, "summary"), LIMITS))
    dropped_round = candidate[:-4]
    assert Breach.USER_TEXT_DROPPED in survival_breaches(_messages(original), dropped_round)
    assert Breach.RESULT_DROPPED in survival_breaches(_messages(original), dropped_round)
    stacked = [candidate[0], *candidate]
    assert Breach.STACKED_CHECKPOINTS in survival_breaches(_messages(original), stacked)
    placeholder = _messages(analyze_session(original.compose(plan, "   "), LIMITS))
    assert Breach.PLACEHOLDER_CHECKPOINT in survival_breaches(_messages(original), placeholder)
    assert Breach.NO_CHECKPOINT in survival_breaches(_messages(original), candidate[1:])


def test_checkpoint_recognition_is_structural_for_the_current_marker() -> None:
    quoting = analyze_session(SessionBuilder().bytes(), LIMITS)
    assert quoting.findings  # an empty journal: nothing to resume
    session = SessionBuilder()
    session.add(text("user", SUMMARY_HEADER + " quoted by the user"))
    session.add(
        {
            "role": "user",
            "content": [{"type": "text", "text": SUMMARY_HEADER}, {"type": "text", "text": PROVENANCE}],
        }
    )
    session.add(text("user", "Another language model started to solve this problem. Old checkpoint."))
    messages = _messages(analyze_session(session.bytes(), LIMITS))
    assert [is_checkpoint(m) for m in messages] == [False, True, True]
    assert [is_wire_checkpoint(m) for m in messages] == [False, True, False]
