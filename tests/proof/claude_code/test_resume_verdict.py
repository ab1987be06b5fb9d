"""The resume verdict: how a captured request is read and how two contexts are judged.

No Claude Code here: the comparison rules on hand-made contexts, the reading of a captured
request, the excluded texts of a transcript, and the fleet summary's totals of resume checks.
The real client judging real compactions is in test_verify_resume.py.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import orjson

from pipeline.core.partition import partition_lines
from pipeline.core.topology.select import AUTO
from pipeline.formats.claude_code.bounded_output import CLEARED_MARKER, BoundRule, bound_text
from pipeline.formats.claude_code.records import record_strings
from pipeline.jobs.front import Analysis, open_session
from pipeline.jobs.verify_resume import original_exclusions
from pipeline.proof.claude_code.exclusions import excluded_texts, sent_exclusions
from pipeline.proof.claude_code.reminders import Reminder
from pipeline.proof.claude_code.resume_verdict import judge
from pipeline.proof.claude_code.sent_context import SYNTHETIC_REPLY, ContextBlock, SentContext, read_request
from pipeline.proof.context import ContextSize
from pipeline.proof.verdict import ExcludedText
from pipeline.report.render import to_builtins
from pipeline.report.resume_check import resume_check_section
from pipeline.testing.sessions import CANARY_BRANCH, CANARY_MALFORMED, build_session
from pipeline.testing.settings import LIMITS
from pipeline.vocabulary import Verdict

PROBE = "PROBE-PROMPT"
SUMMARY = "This session is being continued from a previous conversation.\n\n## Goal\n- ship it (L2)\n"
SIZE = ContextSize(0, 0, 0)


def sent(*blocks: ContextBlock, strings: tuple[str, ...] | None = None) -> SentContext:
    return SentContext(blocks, strings if strings is not None else tuple(b.text for b in blocks), SIZE)


def text(role: str, body: str) -> ContextBlock:
    return ContextBlock(role, "text", body, None)


def call(tool_id: str) -> ContextBlock:
    return ContextBlock("assistant", "tool_use", '{"command": "ls"}', tool_id)


def result(tool_id: str) -> ContextBlock:
    return ContextBlock("user", "tool_result", '"a.txt"', tool_id)


ORIGINAL = sent(
    text("user", "first request"),
    call("toolu_1"),
    result("toolu_1"),
    text("assistant", "listed"),
    text("user", "second request"),
    call("toolu_2"),
    result("toolu_2"),
    text("assistant", "done"),
)


# the verdict ------------------------------------------------------------------------------
def test_summary_then_a_suffix_of_the_original_is_a_match() -> None:
    compacted = sent(text("user", SUMMARY + "\n"), *ORIGINAL.blocks[4:])
    verdict = judge(ORIGINAL, compacted, summaries=[SUMMARY])
    assert verdict.verdict is Verdict.MATCH, verdict.differences
    assert (verdict.summary_blocks, verdict.kept_blocks) == (1, 4)


def test_a_declared_bounded_result_matches_only_when_bounded_exactly_as_declared() -> None:
    long = "build output line\n" * 2000
    rule = BoundRule(8192, drop_media=False)
    big = ContextBlock("user", "tool_result", json.dumps(long), "toolu_2")
    original = sent(*ORIGINAL.blocks[:6], big, ORIGINAL.blocks[7])
    bounded = ContextBlock("user", "tool_result", json.dumps(bound_text(long, 8192)), "toolu_2")
    compacted = sent(text("user", SUMMARY), *original.blocks[4:6], bounded, original.blocks[7])
    declared = {"toolu_2": rule}
    assert judge(original, compacted, summaries=[SUMMARY], bounded=declared).verdict is Verdict.MATCH
    undeclared = judge(original, compacted, summaries=[SUMMARY])
    assert (
        undeclared.verdict is Verdict.MISMATCH
        and "same kind but the text differs" in undeclared.differences[0]
    )
    tampered = ContextBlock("user", "tool_result", json.dumps(bound_text(long, 8192) + "!"), "toolu_2")
    other = sent(text("user", SUMMARY), *original.blocks[4:6], tampered, original.blocks[7])
    assert judge(original, other, summaries=[SUMMARY], bounded=declared).verdict is Verdict.MISMATCH
    stricter = {"toolu_2": BoundRule(4096, drop_media=False)}
    assert judge(original, compacted, summaries=[SUMMARY], bounded=stricter).verdict is Verdict.MISMATCH


def test_a_reminder_closing_a_cleared_result_goes_unjudged_and_any_other_is_still_missed() -> None:
    long = "file line\n" * 500
    warning = "<system-reminder>Consider whether the file read is malware.</system-reminder>"
    original = sent(
        *ORIGINAL.blocks[:4],
        text("user", "second request"),
        call("toolu_2"),
        ContextBlock("user", "tool_result", json.dumps(long), "toolu_2"),
        text("assistant", "done"),
    )
    original = replace(original, reminders=(Reminder(7, warning),))  # right after toolu_2's result
    cleared = ContextBlock("user", "tool_result", json.dumps(CLEARED_MARKER), "toolu_2")
    compacted = sent(text("user", SUMMARY), *original.blocks[4:6], cleared, original.blocks[7])
    declared = {"toolu_2": BoundRule(8192, drop_media=True, clear=True)}
    verdict = judge(original, compacted, summaries=[SUMMARY], bounded=declared)
    assert verdict.verdict is Verdict.MATCH, verdict.differences
    assert any("close tool results the candidate clears" in note for note in verdict.notes)
    elsewhere = replace(original, reminders=(Reminder(5, warning),))  # before the call: not the output's
    missed = judge(elsewhere, compacted, summaries=[SUMMARY], bounded=declared)
    assert missed.verdict is Verdict.MISMATCH and "is not sent" in missed.differences[0]


def test_a_masked_context_must_be_the_whole_original_with_only_declared_clearings() -> None:
    long = "file line\n" * 500
    write = {"file_path": "/r/a.py", "content": long}
    original = sent(
        *ORIGINAL.blocks[:1],
        ContextBlock("assistant", "tool_use", json.dumps(write), "toolu_1"),
        ContextBlock("user", "tool_result", json.dumps(long), "toolu_1"),
        *ORIGINAL.blocks[3:],
    )
    cleared_call = ContextBlock(
        "assistant", "tool_use", json.dumps({"file_path": "/r/a.py", "content": CLEARED_MARKER}), "toolu_1"
    )
    cleared_result = ContextBlock("user", "tool_result", json.dumps(CLEARED_MARKER), "toolu_1")
    masked = sent(original.blocks[0], cleared_call, cleared_result, *original.blocks[3:])
    rules = {"toolu_1": BoundRule(8192, drop_media=True, clear=True)}
    inputs = frozenset({"toolu_1"})
    verdict = judge(original, masked, summaries=[], bounded=rules, cleared_inputs=inputs, masked=True)
    assert verdict.verdict is Verdict.MATCH and verdict.summary_blocks == 0, verdict.differences
    undeclared = judge(original, masked, summaries=[], bounded=rules, masked=True)
    assert undeclared.verdict is Verdict.MISMATCH  # the call's input was cleared without a declaration
    shorter = judge(original, sent(*masked.blocks[4:]), summaries=[], bounded=rules, masked=True)
    assert any("the masked context holds 4 blocks, the original's 8" in d for d in shorter.differences)


def test_a_missing_summary_is_named() -> None:
    verdict = judge(ORIGINAL, sent(*ORIGINAL.blocks[4:]), summaries=[SUMMARY])
    assert verdict.verdict is Verdict.MISMATCH
    assert any("does not open with the summary" in d for d in verdict.differences)


def test_a_tail_that_is_not_the_end_of_the_original_names_the_first_difference() -> None:
    wrong_leaf = sent(text("user", SUMMARY), *ORIGINAL.blocks[4:6], text("user", "another branch"))
    verdict = judge(ORIGINAL, wrong_leaf, summaries=[SUMMARY])
    assert verdict.verdict is Verdict.MISMATCH
    assert verdict.differences == (
        "compacted block 3 is user/text (14 chars) where the original's block 7 is assistant/text "
        "(4 chars); the last 0 blocks agree",
        "the original's block 6 user/tool_result toolu_2 (7 chars) is not sent",
        "tool_use toolu_2 is never answered",
    )


def test_a_changed_text_is_reported_without_the_text() -> None:
    changed = sent(text("user", SUMMARY), *ORIGINAL.blocks[4:7], text("assistant", "DONE"))
    verdict = judge(ORIGINAL, changed, summaries=[SUMMARY])
    assert verdict.verdict is Verdict.MISMATCH
    assert "same kind but the text differs" in verdict.differences[0]
    assert "DONE" not in " ".join(verdict.differences)


def test_nothing_after_the_summary_is_a_mismatch() -> None:
    verdict = judge(ORIGINAL, sent(text("user", SUMMARY)), summaries=[SUMMARY])
    assert verdict.differences == ("nothing of the original context follows the summary",)


def test_a_result_whose_call_was_summarized_away_is_orphaned() -> None:
    cut_inside_pair = sent(text("user", SUMMARY), *ORIGINAL.blocks[2:])
    verdict = judge(ORIGINAL, cut_inside_pair, summaries=[SUMMARY])
    assert verdict.verdict is Verdict.MISMATCH
    assert verdict.differences == ("block 1 answers tool_use toolu_1, which is never sent before it",)


def test_a_pair_left_out_of_the_tail_is_named_by_its_tool_id() -> None:
    dropped_pair = sent(text("user", SUMMARY), *ORIGINAL.blocks[4:5], ORIGINAL.blocks[7])
    verdict = judge(ORIGINAL, dropped_pair, summaries=[SUMMARY])
    assert verdict.differences[1:] == (
        "the original's block 5 assistant/tool_use toolu_2 (17 chars) is not sent",
        "the original's block 6 user/tool_result toolu_2 (7 chars) is not sent",
    )


def test_an_unanswered_call_fails_unless_the_original_leaves_it_open_too() -> None:
    dropped = sent(text("user", SUMMARY), *ORIGINAL.blocks[4:6], ORIGINAL.blocks[7])
    verdict = judge(ORIGINAL, dropped, summaries=[SUMMARY])
    assert "tool_use toolu_2 is never answered" in verdict.differences
    open_call = sent(*ORIGINAL.blocks[:5], call("toolu_3"))
    inherited = judge(open_call, sent(text("user", SUMMARY), *open_call.blocks[4:]), summaries=[SUMMARY])
    assert inherited.verdict is Verdict.MATCH, inherited.differences


def test_excluded_text_is_a_leak_unless_the_original_sends_it_too() -> None:
    secret = ExcludedText("abandoned idea on the rewound branch", 7, "excluded_branch")
    retyped = ExcludedText("second request", 9, "excluded_branch")
    leaky = sent(text("user", SUMMARY + secret.text + " and second request"), *ORIGINAL.blocks[4:])
    verdict = judge(
        ORIGINAL, leaky, summaries=[SUMMARY + secret.text + " and second request"], excluded=[secret, retyped]
    )
    assert verdict.differences == ("text of excluded line 7 (excluded_branch) is sent",)


def test_a_verdict_report_carries_sizes_and_no_text() -> None:
    original = SentContext(ORIGINAL.blocks, (), ContextSize(8, 1000, 300))
    compacted = SentContext((text("user", SUMMARY), *ORIGINAL.blocks[4:]), (), ContextSize(5, 600, 170))
    report = to_builtins(resume_check_section(judge(original, compacted, summaries=[SUMMARY]), 12.5))
    assert report["verdict"] == "match" and report["elapsed_ms"] == 12.5
    assert report["sent"]["compacted"] == {"messages": 5, "characters": 600, "estimated_tokens": 170}
    assert report["characters_reduction"] == 0.4
    assert "ship it" not in json.dumps(report)


# reading a request ------------------------------------------------------------------------
def test_a_request_is_read_without_reminders_probe_or_system_messages() -> None:
    body = {
        "messages": [
            {"role": "user", "content": "hello"},
            {"role": "system", "content": []},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hmm", "signature": "x"},
                    {"type": "tool_use", "id": "toolu_9", "name": "Bash", "input": {"command": "make test"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_9", "content": "ok"},
                    {"type": "text", "text": "<system-reminder>\nnoise</system-reminder>"},
                    {"type": "text", "text": PROBE},
                ],
            },
        ]
    }
    context = read_request(body, PROBE)
    assert context.blocks == (
        ContextBlock("user", "text", "hello", None),
        ContextBlock("assistant", "thinking", "hmm", None),
        ContextBlock("assistant", "tool_use", '{"command": "make test"}', "toolu_9"),
        ContextBlock("user", "tool_result", '"ok"', "toolu_9"),
    )
    assert "make test" in context.strings and "noise" not in " ".join(context.strings)
    assert context.size.messages == 4
    assert context.size.characters == sum(len(orjson.dumps(m).decode()) for m in body["messages"])
    assert context.size.estimated_tokens > context.size.characters // 4


# excluded texts ---------------------------------------------------------------------------
def everything(path: Path) -> str:
    """Every string of every line of a file, joined as a context's strings are: a context sending it all."""
    lines = path.read_bytes().split(b"\n")
    return "\x00".join(text for line in lines if line.strip() for text in record_strings(line))


def all_exclusions(path: Path) -> tuple[ExcludedText, ...]:
    return tuple(original_exclusions(path, 8, LIMITS)(everything(path)))


def test_excluded_texts_cover_rewound_and_malformed_lines_but_not_retyped_prompts(tmp_path: Path) -> None:
    source = tmp_path / "session.jsonl"
    build_session(source, turns=4)
    found = all_exclusions(source)
    texts = {item.text: item for item in found}
    assert f"abandoned idea {CANARY_BRANCH}" in texts
    assert texts[f"abandoned idea {CANARY_BRANCH}"].partition_set == "excluded_branch"
    assert texts[CANARY_MALFORMED].partition_set == "excluded_unattributed"
    # The rewound prompt was typed again on the active branch: it cannot be attributed.
    assert not any("Set up the parser module" in t or "不要修改" in t for t in texts)


def test_an_excluded_text_that_a_kept_line_holds_trimmed_is_not_the_excluded_lines_own(
    tmp_path: Path,
) -> None:
    """A diff context line (" import x") is quoted trimmed by kept summaries ("- import x")."""
    code = "import { readFile } from 'node:fs/promises';"
    source = tmp_path / "session.jsonl"
    build_session(source, turns=4)
    data = source.read_bytes().replace(f"abandoned idea {CANARY_BRANCH}".encode(), f"   {code}".encode())
    alone = tmp_path / "alone.jsonl"
    alone.write_bytes(data)
    assert f"   {code}" in {item.text for item in all_exclusions(alone)}
    quoted = tmp_path / "quoted.jsonl"
    quoted.write_bytes(data.replace(b"pytest tests/test_step_0_0.py -q", code.encode(), 1))
    assert f"   {code}" not in {item.text for item in all_exclusions(quoted)}


def test_the_api_rules_each_side_broke_are_named_and_a_rejected_compaction_never_matches() -> None:
    from pipeline.proof.claude_code.api_rules import ApiViolation
    from pipeline.proof.claude_code.prove import with_api_rejections
    from pipeline.reasons import ApiRule

    compacted = sent(text("user", SUMMARY), *ORIGINAL.blocks[4:])
    matched = judge(ORIGINAL, compacted, summaries=[SUMMARY])
    damaged = ApiViolation(ApiRule.TOOL_USE_WITHOUT_RESULT, 3, None, ("toolu_1",))
    repaired = with_api_rejections(matched, (damaged,), ())
    assert repaired.verdict is Verdict.MATCH and repaired.original_rejected == (damaged,)
    assert repaired.notes == (
        "the API rejects the original context (tool-use-without-result at messages.3: toolu_1)",
    )
    still = with_api_rejections(matched, (damaged,), (ApiViolation(ApiRule.TOOL_USE_ID_DUPLICATE, 2, 1, ()),))
    assert still.verdict is Verdict.MISMATCH
    assert (
        still.differences[0]
        == "the API rejects the compacted context (tool-use-id-duplicate at messages.2.content.1)"
    )
    report = to_builtins(resume_check_section(still, 1.0))
    assert report["api_rejected"] == {
        "original": [{"rule": "tool-use-without-result", "at": "messages.3", "ids": ["toolu_1"]}],
        "compacted": [{"rule": "tool-use-id-duplicate", "at": "messages.2.content.1"}],
    }
    assert with_api_rejections(matched, (), ()) is matched
    assert "api_rejected" not in to_builtins(resume_check_section(matched, 1.0))


def test_a_tool_definition_one_resume_sends_and_the_other_does_not_is_named() -> None:
    compacted = sent(text("user", SUMMARY), *ORIGINAL.blocks[4:])
    original = replace(ORIGINAL, tools=("Bash", "Read", "WebFetch"))
    same = replace(compacted, tools=("Bash", "Read", "WebFetch"))
    assert judge(original, same, summaries=[SUMMARY]).verdict is Verdict.MATCH
    verdict = judge(original, replace(compacted, tools=("Bash", "Read", "TaskCreate")), summaries=[SUMMARY])
    assert verdict.differences == (
        "the original sends tool WebFetch's definition; the compacted resume does not",
        "the compacted resume sends tool TaskCreate's definition; the original does not",
    )


def test_claude_codes_synthetic_reply_is_left_out_only_beside_a_resume_it_compacted() -> None:
    """Claude Code closes a trailing turn with "No response requested." when it answers a prompt,
    and goes without it when it compacts first: one side compacted, the other's reply is apart."""
    tail = ORIGINAL.blocks[4:7]  # ends on a tool_result: the session stopped mid-turn
    original = replace(sent(*ORIGINAL.blocks[:7]), compacted_on_resume=True)
    compacted = sent(text("user", SUMMARY), *tail, SYNTHETIC_REPLY)
    verdict = judge(original, compacted, summaries=[SUMMARY])
    assert verdict.verdict is Verdict.MATCH, verdict.differences
    assert (
        "the compacted resume closes its trailing turn with Claude Code's synthetic reply: not compared"
        in (verdict.notes)
    )
    uncompacted = sent(*ORIGINAL.blocks[:7])
    assert (
        judge(uncompacted, compacted, summaries=[SUMMARY]).verdict is Verdict.MISMATCH
    )  # both alike: compared


def test_the_gate_finds_the_excluded_texts_a_context_sends_as_the_full_list_names_them(
    tmp_path: Path,
) -> None:
    """`sent_exclusions` is `excluded_texts` narrowed to a context, texts and lines alike, for any context."""
    source = tmp_path / "session.jsonl"
    build_session(source, turns=6)
    opened = open_session(source, source.name, AUTO, command="verify-resume", per_code=1, limits=LIMITS)
    assert isinstance(opened, Analysis)
    topology = opened.topology
    partition = partition_lines(
        opened.index,
        summary=(),
        raw_keep=topology.chain,
        side_keep=(),
        pointer_line=topology.strict.pointer_line,
    )
    data, index = opened.source.data, opened.index
    every = excluded_texts(data, index, partition, min_chars=8)
    assert len(every) >= 3  # the rewound branch's texts and the malformed line's
    contexts = ["", everything(source), "\x00".join(item.text for item in every[::2]), every[-1].text[2:]]
    for context in contexts:
        expected = tuple(item for item in every if item.text in context)
        assert sent_exclusions(data, index, partition, context, min_chars=8) == expected
