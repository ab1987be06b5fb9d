"""Reminders read apart from the transcript's content, and compared by paragraph.

No Claude Code here: the three ways 2.1.332 sends a reminder (a `<system-reminder>` text block, a
`system`-role message, text folded into the last tool_result), the rules that judge two resumes'
reminders, and the content-free way a difference is named. Real resumes are in
test_claude_code_resume.py.
"""

from __future__ import annotations

import json

import pytest

from pipeline.formats.claude_code.bounded_output import BoundRule, bound_content
from pipeline.proof.claude_code.reminders import (
    Reminder,
    ReminderKind,
    folded_reminders,
    reminder_differences,
    reminder_kind,
    without_folded_reminders,
)
from pipeline.proof.claude_code.resume_verdict import judge
from pipeline.proof.claude_code.sent_context import ContextBlock, SentContext, closing_prompt, read_request
from pipeline.proof.context import ContextSize
from pipeline.vocabulary import Verdict

PROBE = "PROBE-PROMPT"
SUMMARY = "This session is being continued from a previous conversation.\n\n## Goal\n- ship it (L2)\n"
GONE = "The following deferred tools are no longer available. Do not search for them:\nmcp__github__search"
NEW = "The following deferred tools are now available via ToolSearch:\nWebFetch"
DATE = "Today's date is 2026-12-01."
TASKS = "The task tools haven't been used recently. Consider TaskCreate."


def tag(text: str) -> str:
    return f"<system-reminder>\n{text}\n</system-reminder>\n"


def tool_result(tool_id: str, content: object) -> dict[str, object]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content}


@pytest.mark.parametrize(
    ("content", "base"),
    [
        ("file text\n\n" + tag(GONE) + tag(DATE), "file text"),
        ([{"type": "text", "text": "file text"}, {"type": "text", "text": tag(GONE)}], "file text"),
        (
            [
                {"type": "text", "text": "a"},
                {"type": "image", "source": {}},
                {"type": "text", "text": tag(DATE)},
            ],
            None,
        ),
    ],
)
def test_reminders_closing_a_tool_result_come_apart_from_its_content(
    content: object, base: str | None
) -> None:
    shown = json.dumps(content)
    apart = without_folded_reminders(shown)
    assert "system-reminder" not in apart
    if base is not None:  # a string, or a list of one text item, reads as the string
        assert apart == json.dumps(base)
    assert folded_reminders(shown) and all(r.startswith("<system-reminder>") for r in folded_reminders(shown))


def test_a_reminder_inside_the_content_rather_than_closing_it_stays_content() -> None:
    shown = json.dumps("before " + tag(DATE) + " after")
    assert without_folded_reminders(shown) == shown and folded_reminders(shown) == []


def test_a_request_keeps_each_reminder_with_where_it_stood() -> None:
    body = {
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "hello"}, {"type": "text", "text": tag(NEW)}],
            },
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}],
            },
            {"role": "user", "content": [tool_result("toolu_1", "file\n\n" + tag(GONE))]},
            {
                "role": "system",
                "content": [{"type": "text", "text": "# Environment\n - dir: /tmp/cc-x/project"}],
            },
            {"role": "user", "content": [{"type": "text", "text": PROBE}]},
        ]
    }
    context = read_request(body, PROBE, scratch=("/tmp/cc-x",))
    assert [b.kind for b in context.blocks] == ["text", "tool_use", "tool_result"]
    assert context.blocks[2].text == json.dumps("file\n\n" + tag(GONE))  # the block itself is as sent
    positions = [(r.position, r.inside) for r in context.reminders]
    assert positions == [(1, False), (2, True), (3, False)]
    assert "<scratch>/project" in context.reminders[2].text and "/tmp/cc-x" not in context.reminders[2].text


def test_compaction_instructions_followed_by_a_system_reminder_are_still_the_closing_prompt() -> None:
    # Claude Code 2.1.332 may send the date as a system message after its compaction instructions
    # (seen on a generated 1.0.98 session compacted on resume): the instructions are no block.
    instructions = "CRITICAL: Respond with TEXT ONLY. Summarize the conversation above."
    body = {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hello"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "## Current state"}]},
            {"role": "user", "content": instructions},
            {"role": "system", "content": "Today's date is 2026-12-07."},
        ]
    }
    assert closing_prompt(body) == instructions
    context = read_request(body, instructions)
    assert [(b.role, b.text) for b in context.blocks] == [
        ("user", "hello"),
        ("assistant", "## Current state"),
    ]
    assert [reminder_kind(r.text) for r in context.reminders] == [ReminderKind.DATE]


@pytest.mark.parametrize(
    ("paragraph", "kind"),
    [
        (GONE, ReminderKind.DEFERRED_TOOLS),
        (tag(DATE), ReminderKind.DATE),
        ("Available agent types for the Agent tool:\n- Explore", ReminderKind.AGENT_LISTING),
        ("<task-notification>\n<task-id>ab</task-id>", ReminderKind.BACKGROUND_TASKS),
        ("something new", None),
    ],
)
def test_a_paragraph_is_named_by_claude_codes_opener(paragraph: str, kind: ReminderKind | None) -> None:
    assert reminder_kind(paragraph) is kind


def test_what_the_original_says_at_resume_the_compaction_must_say() -> None:
    original = [Reminder(3, tag(GONE)), Reminder(3, tag(DATE))]
    differences, notes = reminder_differences(original, [Reminder(2, tag(NEW)), Reminder(2, tag(DATE))], 1)
    assert differences == [
        f"the original's deferred-tools reminder before block 3 ({len(GONE)} chars) is not sent",
        f"compacted deferred-tools reminder before block 2 ({len(NEW)} chars) is not one the original sends",
    ]
    assert notes == [] and not any("mcp__" in d for d in differences)


def test_a_reminder_the_original_says_in_its_history_may_be_repeated_after_the_summary() -> None:
    original = [Reminder(0, tag(NEW)), Reminder(5, tag(GONE))]
    compacted = [Reminder(1, tag(NEW)), Reminder(3, tag(GONE))]
    assert reminder_differences(original, compacted, 2) == ([], [])


def test_a_summarized_reminder_need_not_be_repeated() -> None:
    assert reminder_differences([Reminder(1, tag(NEW))], [], 2) == ([], [])
    assert reminder_differences([Reminder(2, tag(NEW), inside=True)], [], 2)[0]  # inside a kept block


def test_a_task_nudge_that_comes_at_another_turn_is_a_note() -> None:
    differences, notes = reminder_differences([Reminder(4, tag(TASKS))], [], 1)
    assert differences == [] and notes == [
        f"the original's tasks reminder before block 4 ({len(TASKS)} chars) is not sent"
    ]


# the verdict with reminders ---------------------------------------------------------------
ORIGINAL_BLOCKS = (
    ContextBlock("user", "text", "first request", None),
    ContextBlock("assistant", "tool_use", "{}", "toolu_1"),
    ContextBlock("user", "tool_result", json.dumps("a.txt"), "toolu_1"),
    ContextBlock("user", "text", "second request", None),
    ContextBlock("assistant", "tool_use", "{}", "toolu_2"),
    ContextBlock("user", "tool_result", json.dumps("b.txt\n\n" + tag(GONE)), "toolu_2"),
)


def context(
    blocks: tuple[ContextBlock, ...], reminders: tuple[Reminder, ...], compacted: bool = False
) -> SentContext:
    return SentContext(blocks, tuple(b.text for b in blocks), ContextSize(0, 0, 0), reminders, compacted)


def test_the_last_tool_result_matches_with_its_resume_reminders_apart_and_they_are_judged() -> None:
    original = context(ORIGINAL_BLOCKS, (Reminder(5, tag(GONE), inside=True),))
    folded_new = ContextBlock("user", "tool_result", json.dumps("b.txt\n\n" + tag(NEW)), "toolu_2")
    summary = ContextBlock("user", "text", SUMMARY, None)
    same = context((summary, *ORIGINAL_BLOCKS[3:]), (Reminder(3, tag(GONE), inside=True),))
    assert judge(original, same, summaries=[SUMMARY]).verdict is Verdict.MATCH
    other = context((summary, *ORIGINAL_BLOCKS[3:5], folded_new), (Reminder(3, tag(NEW), inside=True),))
    verdict = judge(original, other, summaries=[SUMMARY])
    assert verdict.verdict is Verdict.MISMATCH
    assert not any("same kind but the text differs" in d for d in verdict.differences)  # the block agrees
    assert any(d.startswith("the original's deferred-tools reminder") for d in verdict.differences)


def test_a_changed_kept_result_is_still_refused_with_its_reminders_apart() -> None:
    original = context(ORIGINAL_BLOCKS, (Reminder(5, tag(GONE), inside=True),))
    changed = ContextBlock("user", "tool_result", json.dumps("c.txt\n\n" + tag(GONE)), "toolu_2")
    summary = ContextBlock("user", "text", SUMMARY, None)
    compacted = context((summary, *ORIGINAL_BLOCKS[3:5], changed), (Reminder(3, tag(GONE), inside=True),))
    verdict = judge(original, compacted, summaries=[SUMMARY])
    assert verdict.verdict is Verdict.MISMATCH and "same kind but the text differs" in verdict.differences[0]


def test_when_claude_code_compacts_one_side_only_the_resume_turn_goes_unjudged() -> None:
    original = context(ORIGINAL_BLOCKS, (Reminder(6, tag(GONE)),), compacted=True)
    summary = ContextBlock("user", "text", SUMMARY, None)
    compacted = context((summary, *ORIGINAL_BLOCKS[3:]), (Reminder(4, tag(NEW)),))
    verdict = judge(original, compacted, summaries=[SUMMARY])
    assert verdict.verdict is Verdict.MATCH, verdict.differences
    assert any("compacted the original on resume" in note for note in verdict.notes)
    kept = context(ORIGINAL_BLOCKS, (Reminder(4, tag(GONE)),), compacted=True)
    assert judge(kept, compacted, summaries=[SUMMARY]).verdict is Verdict.MISMATCH  # a kept part's reminder


RUNNING = 'Background shell b1 ("Start the dev server") is still running (command, shown on one line: `npm run dev`).'


def test_a_running_shell_announced_for_a_declared_carried_shell_is_a_note_and_otherwise_a_difference() -> (
    None
):
    compacted = [Reminder(1, tag(RUNNING))]
    assert reminder_differences([], compacted, 0, carried=frozenset({"b1"})) == (
        [],
        [
            f"compacted background-tasks reminder before block 1 ({len(RUNNING)} chars) "
            "announces a background shell the candidate declares it carries"
        ],
    )
    differences, _ = reminder_differences([], compacted, 0, carried=frozenset({"b2"}))
    assert differences == [
        f"compacted background-tasks reminder before block 1 ({len(RUNNING)} chars) is not one the original sends"
    ]


def test_a_bounded_result_closed_by_a_reminder_matches_whatever_whitespace_stood_before_it() -> None:
    """The content's own trailing newline and Claude Code's separator look alike; the bounded
    text's digest tells which was the content's."""
    output = "line\n" * 3000
    rule = BoundRule(limit=2000, drop_media=False)
    original_block = ContextBlock(
        "user", "tool_result", json.dumps(output + "\n" + tag(DATE).strip()), "toolu_2"
    )
    bounded = ContextBlock("user", "tool_result", json.dumps(bound_content(output, rule)), "toolu_2")
    original = context((*ORIGINAL_BLOCKS[:5], original_block), ())
    summary = ContextBlock("user", "text", SUMMARY, None)
    compacted = context((summary, *ORIGINAL_BLOCKS[3:5], bounded), ())
    verdict = judge(original, compacted, summaries=[SUMMARY], bounded={"toolu_2": rule})
    assert verdict.verdict is Verdict.MATCH, verdict.differences
    other = ContextBlock("user", "tool_result", json.dumps(bound_content(output + "x", rule)), "toolu_2")
    assert (
        judge(
            original,
            context((summary, *ORIGINAL_BLOCKS[3:5], other), ()),
            summaries=[SUMMARY],
            bounded={"toolu_2": rule},
        ).verdict
        is Verdict.MISMATCH
    )


LISTED = "The following deferred tools are now available via ToolSearch:\nCronCreate\nMonitor"


def test_a_deferred_listing_that_only_adds_a_declared_loaded_tool_is_a_note_and_otherwise_a_difference() -> (
    None
):
    again = LISTED + "\nWebFetch"  # Claude Code lists a tool loaded before the last boundary again
    original, compacted = [Reminder(4, tag(LISTED))], [Reminder(2, tag(again))]
    differences, notes = reminder_differences(original, compacted, 1, loaded=frozenset({"WebFetch"}))
    assert differences == []
    assert notes == [
        f"compacted deferred-tools reminder before block 2 ({len(again)} chars) also lists WebFetch, loaded "
        "before its boundary (preCompactDiscoveredTools), as after Claude Code's own compaction"
    ]
    assert reminder_differences(original, compacted, 1)[0]  # undeclared: both named
    other = LISTED.replace("Monitor", "WebSearch") + "\nWebFetch"  # a tool also went missing: named
    differences, _ = reminder_differences(
        original, [Reminder(2, tag(other))], 1, loaded=frozenset({"WebFetch"})
    )
    assert len(differences) == 2
    only = "The following deferred tools are now available via ToolSearch:\nWebFetch"  # nothing else to list
    assert reminder_differences([], [Reminder(2, tag(only))], 1, loaded=frozenset({"WebFetch"}))[0] == []
