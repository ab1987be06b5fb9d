"""The history CodeWhale resumes a session with, and what validation finds, from documents in
its serde form: the journal over `messages`, branches, the resume repair, damage as findings."""

from __future__ import annotations

import json

import pytest

from pipeline.formats.codewhale.whale_analysis import analyze_session, estimate_tokens
from pipeline.formats.codewhale.whale_history import CRASH_REPAIR_CONTENT
from pipeline.formats.line_guard import LineLimits
from pipeline.vocabulary import FindingCode, PartitionSet, Severity
from tests.support.codewhale_sessions import SessionBuilder, call, result, text

LIMITS = LineLimits(max_line_bytes=1 << 24, max_json_depth=200)


def _roles_and_texts(data: bytes) -> list[tuple[str, tuple[str, ...]]]:
    analysis = analyze_session(data, LIMITS)
    assert analysis.rebuilt is not None
    return [(i.message.role, i.message.texts()) for i in analysis.rebuilt.messages]


def test_the_journal_leaf_overrides_the_stored_messages_and_its_other_branch_is_excluded() -> None:
    session = SessionBuilder()
    root = session.add(text("user", "first question"))
    session.add(text("assistant", "abandoned answer"))
    session.add(text("assistant", "kept answer"), parent=root)  # an edit: a sibling branch
    document = session.document()
    document["messages"] = [text("user", "stale projection")]  # the journal wins on load
    data = json.dumps(document).encode()

    assert _roles_and_texts(data) == [("user", ("first question",)), ("assistant", ("kept answer",))]
    sets = analyze_session(data, LIMITS).sweep_sets()
    assert sets[PartitionSet.RAW_KEEP] == {1, 3}
    assert sets[PartitionSet.EXCLUDED_BRANCH] == {2}


def test_without_a_journal_the_messages_are_the_history() -> None:
    session = SessionBuilder(journal=False)
    session.extend([text("user", "q"), text("assistant", "a")])
    analysis = analyze_session(session.bytes(), LIMITS)
    assert [i.record for i in analysis.rebuilt.messages] == [1, 2]  # type: ignore[union-attr]
    assert analysis.resumable
    assert analysis.findings == ()


def test_an_unanswered_call_is_answered_as_codewhale_repairs_it_and_reported() -> None:
    session = SessionBuilder()
    session.extend([text("user", "run it"), call("call_1")])
    analysis = analyze_session(session.bytes(), LIMITS)
    assert analysis.rebuilt is not None
    synthetic = analysis.rebuilt.messages[2]
    assert synthetic.record is None
    assert synthetic.message.blocks[0].text == CRASH_REPAIR_CONTENT
    assert synthetic.message.blocks[0].is_error
    assert analysis.rebuilt.messages[3].message.texts()[0].startswith("[tool_history_repair] Repaired 1")
    assert [(f.code, f.ids) for f in analysis.findings] == [(FindingCode.TOOL_USE_UNANSWERED, ("call_1",))]
    assert analysis.resumable  # CodeWhale repairs it: a warning, not a refusal


def test_an_orphan_result_is_dropped_with_the_message_it_leaves_empty() -> None:
    session = SessionBuilder()
    session.extend([text("user", "q"), result("ghost", "nobody asked"), text("assistant", "a")])
    analysis = analyze_session(session.bytes(), LIMITS)
    assert analysis.rebuilt is not None
    assert [i.record for i in analysis.rebuilt.messages[:2]] == [1, 3]
    assert analysis.findings[0].code is FindingCode.TOOL_RESULT_WITHOUT_USE
    assert 2 in analysis.sweep_sets()[PartitionSet.EXCLUDED_UNATTRIBUTED]


@pytest.mark.parametrize(
    ("damage", "code"),
    [
        (
            lambda d: d["journal"]["entries"].append(dict(d["journal"]["entries"][0])),
            FindingCode.DUPLICATE_UUID,
        ),
        (lambda d: d["journal"]["entries"][1].update(parent_id="nowhere"), FindingCode.DANGLING_PARENT),
        (lambda d: d["journal"].update(leaf_id="nowhere"), FindingCode.LAST_PROMPT_MISSING_LEAF),
        (
            lambda d: d["journal"]["entries"][0].update(parent_id=d["journal"]["leaf_id"]),
            FindingCode.CHAIN_LOOP,
        ),
        (
            lambda d: d["journal"]["entries"][1]["message"]["content"].append({"type": "video"}),
            FindingCode.UNKNOWN_RECORD,
        ),
        (lambda d: d.pop("metadata"), FindingCode.SESSION_META_MISSING),
    ],
)
def test_a_journal_codewhale_refuses_is_an_error_finding_and_not_resumable(damage, code) -> None:  # type: ignore[no-untyped-def]
    session = SessionBuilder()
    session.extend([text("user", "q"), text("assistant", "a")])
    document = session.document()
    damage(document)
    analysis = analyze_session(json.dumps(document).encode(), LIMITS)
    assert code in {f.code for f in analysis.findings if f.severity is Severity.ERROR}
    assert not analysis.resumable
    assert analysis.plan_tail(10) is None


@pytest.mark.parametrize(
    "data", [b"", b"{", b"[1,2]", b"\xff\xfe", b'{"metadata": 3, "messages": []}', b"[" * 400 + b"]" * 400]
)
def test_garbage_is_a_finding_never_a_traceback(data: bytes) -> None:
    analysis = analyze_session(data, LIMITS)
    assert analysis.findings
    assert all(f.severity is Severity.ERROR for f in analysis.findings)
    assert analysis.line_count == 1
    assert not analysis.resumable


def test_the_estimate_is_codewhales_bytes_over_four_with_a_flat_image() -> None:
    session = SessionBuilder()
    session.add(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "é" * 10},
                {"type": "image_url", "image_url": {"url": "data:"}},
            ],
        }
    )
    analysis = analyze_session(session.bytes(), LIMITS)
    assert analysis.rebuilt is not None
    assert estimate_tokens(analysis.rebuilt.messages[0].message) == 20 // 4 + 1000
