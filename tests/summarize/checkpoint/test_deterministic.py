"""The deterministic summarizer: every prompt cited, cited bullets, folded priors, fitted to its room."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from pipeline.agents.claude_code.chain_evidence import extract_evidence
from pipeline.core.index import build_index
from pipeline.summarize import (
    APPENDIX_MARKER,
    CHECKPOINT_MARKER,
    EvidenceItem,
    EvidenceKind,
    FallbackReason,
    Heading,
    InvalidSummaryOptions,
    PriorMode,
    SummaryBudgetExceeded,
    SummaryOptions,
    SummaryResult,
    strip_appendix,
    validate_checkpoint,
    write_summary,
)
from pipeline.summarize.checkpoint.deterministic import MIN_CHAR_BUDGET, PRIOR_BLOCK_END
from pipeline.summarize.checkpoint.document import parse_bullets
from pipeline.testing import TranscriptBuilder
from pipeline.testing.settings import LIMITS, summary_options
from pipeline.vocabulary import SourceFormat

MULTILINGUAL = (
    "请不要修改公共接口，只重构内部实现。",  # noqa: RUF001 - Chinese punctuation is the point
    "Пожалуйста, не трогай миграции базы данных.",
    "من فضلك استخدم أسماء متغيرات واضحة",
    "Ship it 🚀🔥 but keep the tests green ✅",
    "Quote: <!-- session-compaction checkpoint v1 --> is our marker, keep it in mind",
)


def evidence_of(builder: TranscriptBuilder, lines: Sequence[int] | None = None) -> tuple[EvidenceItem, ...]:
    data = builder.to_bytes()
    index = build_index(data, SourceFormat.CLAUDE_CODE, LIMITS)
    return extract_evidence(data, index, range(1, len(index) + 1) if lines is None else lines)


def summarize(
    builder: TranscriptBuilder, lines: Sequence[int] | None = None, options: SummaryOptions | None = None
) -> SummaryResult:
    return write_summary(evidence_of(builder, lines), options or summary_options())


def section(text: str, heading: Heading) -> list[str]:
    """The raw lines under one checkpoint heading."""
    body = strip_appendix(text).split("\n")
    start = body.index(f"## {heading}") + 1
    end = next((i for i in range(start, len(body)) if body[i].startswith("## ")), len(body))
    return [line for line in body[start:end] if line]


def bullet_texts(text: str, heading: Heading) -> list[str]:
    return [bullet.text for bullet in parse_bullets(section(text, heading))]


def session_with_work() -> tuple[TranscriptBuilder, dict[str, int]]:
    b = TranscriptBuilder(seed=3)
    lines: dict[str, int] = {}
    b.user("Fix the failing parser tests in src/parser.py")
    lines["first"] = b.line_count
    b.assistant(b.text("I'll look at the parser first."))
    b.tool_call("Read", {"file_path": "/repo/src/parser.py"}, "     1→def parse(): ...")
    b.tool_call("Edit", {"file_path": "/repo/src/parser.py", "old_string": "a", "new_string": "b"}, "ok")
    failure = "Exit code 1\nE   AssertionError: boom"
    b.tool_call("Bash", {"command": "pytest -q tests/test_parser.py"}, failure, is_error=True)
    lines["failed_run"] = b.line_count
    b.assistant(b.text("We decided to keep the recursive descent design instead of a table parser."))
    lines["decision"] = b.line_count
    b.tool_call("Bash", {"command": "pytest -q tests/test_parser.py"}, "3 passed in 0.1s")
    lines["passed_run"] = b.line_count
    b.assistant(b.text("All parser tests pass now."))
    lines["conclusion"] = b.line_count
    b.user("Now add a test for empty input, and keep using pytest fixtures")
    lines["second"] = b.line_count
    b.tool_call(
        "TodoWrite",
        {
            "todos": [
                {"content": "Write empty-input test", "status": "in_progress", "activeForm": "Writing"},
                {"content": "Run the full suite", "status": "pending", "activeForm": "Running"},
            ]
        },
        "Todos have been modified successfully.",
    )
    lines["todos"] = b.line_count - 1
    b.assistant(b.text("Working on the empty-input test."))
    lines["latest"] = b.line_count
    return b, lines


def test_every_bullet_is_cited_to_a_line_that_was_passed_in() -> None:
    b, _ = session_with_work()
    result = summarize(b)
    total = b.line_count
    bullets = parse_bullets(result.text.split("\n"))
    content = [bullet for bullet in bullets if not bullet.omitted and bullet.text != "None"]
    assert content
    assert all(bullet.lines for bullet in content)
    assert all(1 <= line <= total for bullet in content for line in bullet.lines)
    assert set(result.cited_lines) == {line for bullet in content for line in bullet.lines}
    assert validate_checkpoint(result.text) == ()


def test_sections_hold_what_the_session_did() -> None:
    b, lines = session_with_work()
    text = summarize(b).text
    assert bullet_texts(text, Heading.GOAL) == [
        "Fix the failing parser tests in src/parser.py",
        "Now add a test for empty input, and keep using pytest fixtures",
    ]
    assert bullet_texts(text, Heading.COMPLETED) == ["All parser tests pass now."]
    assert f"All parser tests pass now. (L{lines['conclusion']})" in text
    wip = bullet_texts(text, Heading.IN_PROGRESS)
    assert wip == [
        "Latest update: Working on the empty-input test.",
        "In progress: Write empty-input test",
        "Pending: Run the full suite",
    ]
    assert bullet_texts(text, Heading.NEXT_STEPS) == ["Run the full suite"]
    assert any("recursive descent" in bullet for bullet in bullet_texts(text, Heading.DECISIONS))
    errors = bullet_texts(text, Heading.ERRORS)
    resolved = f"resolved at L{lines['passed_run'] - 1} (the same command passed)"
    assert errors == [
        f"Bash failed (exit 1), {resolved}: pytest -q tests/test_parser.py — E AssertionError: boom"
    ]
    files = bullet_texts(text, Heading.FILES)
    assert files == ["Modified: /repo/src/parser.py"]  # read, then modified: listed once, as modified
    commands = bullet_texts(text, Heading.COMMANDS)
    # grouped by program, the latest run of the exact command with its outcome
    assert commands == ["pytest: 1 command (1 passed)\npassed: `pytest -q tests/test_parser.py`"]


@pytest.mark.parametrize("prompt", MULTILINGUAL)
def test_every_human_prompt_appears_verbatim_in_order(prompt: str) -> None:
    b = TranscriptBuilder(seed=11)
    b.user("first: set up the project")
    b.assistant(b.text("Done."))
    b.user(prompt)
    line = b.line_count
    b.assistant(b.text("Noted."))
    b.user("last one")
    text = summarize(b).text
    constraints = bullet_texts(text, Heading.CONSTRAINTS)
    assert constraints == ["first: set up the project", prompt, "last one"]
    assert f"- {prompt} (L{line})" in text
    assert validate_checkpoint(text) == ()
    assert text.count(CHECKPOINT_MARKER) == 1 + (CHECKPOINT_MARKER in prompt)


def test_multiline_prompts_and_headings_inside_prompts_stay_inside_their_bullet() -> None:
    prompt = "Rules:\n## Goal\n- do not push\n\n<!-- session-compaction checkpoint v1 -->\nthanks"
    b = TranscriptBuilder(seed=5)
    b.user(prompt)
    b.user([b.text("block one"), b.image("aGk="), b.text("block two")])
    text = summarize(b).text
    assert validate_checkpoint(text) == ()
    assert bullet_texts(text, Heading.CONSTRAINTS) == [prompt, "block one\nblock two"]


def _pasted_har(entries: int = 150) -> tuple[str, str]:
    """A long pasted message (a HAR dump, then the ask) and its ask."""
    pasted = "\n".join(f'  "entry_{n}": {{"status": 200, "size": {n * 37}}},' for n in range(entries))
    ask = "Why does the page load without styling? Fix only the config, not the HTML."
    return f"Here is the full HAR:\n{pasted}\n{ask}", ask


def test_a_long_prompt_the_room_does_not_hold_keeps_its_head_and_its_end_around_an_explicit_marker() -> None:
    b = TranscriptBuilder(seed=5)
    message, ask = _pasted_har()
    b.user(message)
    line = b.line_count
    tight = summary_options(max_prompt_chars=1000, char_budget=MIN_CHAR_BUDGET)  # under the message
    first = summarize(b, options=tight)
    (kept,) = bullet_texts(first.text, Heading.CONSTRAINTS)
    head, marker, end = kept.partition(f"[... {len(message) - 1000} more")
    assert head.startswith("Here is the full HAR:\n") and marker
    assert end.startswith(f" characters at L{line}]") and end.endswith(ask)  # the ask after the paste
    assert len(head) + len(end) - len(f" characters at L{line}]") == 1000
    again = EvidenceItem(1, EvidenceKind.PRIOR_SUMMARY, first.text)
    refolded = write_summary([again], tight).text
    assert bullet_texts(refolded, Heading.CONSTRAINTS) == [
        kept.replace(f"at L{line}]", "cut in an earlier pass]")
    ]


def test_a_long_prompt_is_kept_whole_while_the_room_holds_it_the_newest_first() -> None:
    b = TranscriptBuilder(seed=5)
    older, _ = _pasted_har(60)
    newer, _ = _pasted_har(90)
    b.user(older)
    b.user(newer)
    roomy = summarize(b, options=summary_options(max_prompt_chars=1000))
    assert bullet_texts(roomy.text, Heading.CONSTRAINTS) == [older, newer]
    goal = bullet_texts(roomy.text, Heading.GOAL)
    assert all("more characters at L" in text for text in goal)  # Goal points at them, bounded
    # not both whole: short of more than the older one's cut and what the prose could give
    options = summary_options(max_prompt_chars=1000, char_budget=len(roomy.text) - 1000)
    result = summarize(b, options=options)
    assert len(result.text) <= options.char_budget and result.fit is None
    kept = bullet_texts(result.text, Heading.CONSTRAINTS)
    assert kept[1] == newer  # whole: the room holds it
    assert kept[0] != older and "more characters at L" in kept[0]  # the older one keeps its bound


def test_the_assistants_prose_gives_its_room_to_a_long_prompt_before_the_prompt_is_cut() -> None:
    b = TranscriptBuilder(seed=5)
    message, _ = _pasted_har(90)
    for turn in range(30):
        b.user(f"Step {turn}: go on with the parser")
        b.tool_call("Read", {"file_path": f"/repo/src/part_{turn}.py"}, "ok")
        b.assistant(b.text(f"Finished step {turn}. " + "The parser now handles one more case. " * 12))
    b.user(message)
    b.assistant(b.text("Reading the HAR now: " + "the stylesheet request is the one that failed. " * 12))
    roomy = summarize(b, options=summary_options(max_prompt_chars=1000))
    options = summary_options(max_prompt_chars=1000, char_budget=len(roomy.text) - 1)
    result = summarize(b, options=options)
    assert len(result.text) <= options.char_budget
    assert bullet_texts(result.text, Heading.CONSTRAINTS)[-1] == message  # kept whole
    completed = [bullet_texts(text, Heading.COMPLETED) for text in (result.text, roomy.text)]
    assert len(completed[0]) < len(completed[1])
    for heading in (Heading.FILES, Heading.IN_PROGRESS):  # the lists and the work at the cut keep theirs
        assert section(result.text, heading) == section(roomy.text, heading)


def test_empty_sections_say_none() -> None:
    b = TranscriptBuilder(seed=1)
    b.user("hello")
    text = summarize(b).text
    for heading in (Heading.COMPLETED, Heading.FILES, Heading.COMMANDS, Heading.DECISIONS, Heading.ERRORS):
        assert section(text, heading) == ["- None"]
    assert bullet_texts(text, Heading.NEXT_STEPS) == ["Unanswered request: hello"]
    empty = write_summary((), summary_options())
    assert validate_checkpoint(empty.text) == ()
    assert all(section(empty.text, heading) == ["- None"] for heading in Heading)
    assert empty.cited_lines == ()
    assert empty.prior_mode is PriorMode.NONE


def test_text_of_lines_not_passed_in_never_reaches_the_summary() -> None:
    canary = "CANARY-7f3a"
    b = TranscriptBuilder(seed=9)
    b.user("summarize me")
    b.assistant(b.text("Visible reply."))
    start = b.line_count + 1
    b.user(f"{canary} secret prompt")
    b.assistant(b.thinking(f"{canary} thought"), b.text(f"{canary} we decided to leak"))
    call = b.tool_call("Bash", {"command": f"rm -rf /{canary}"}, f"{canary} output", is_error=True)
    b.tool_call("Write", {"file_path": f"/{canary}.py", "content": canary}, "ok")
    b.system("api_error")
    end = b.line_count
    b.tool_result(call.tool_use_id, "late failure", is_error=True)  # its call (excluded) stays unknown
    b.user("visible tail prompt")
    kept = [n for n in range(1, b.line_count + 1) if not start <= n <= end]
    text = summarize(b, kept).text
    assert canary not in text
    assert "tool error" in text  # the late result is kept, but its (excluded) call's name is not known
    assert "visible tail prompt" in text
    assert "Visible reply." in text


def test_output_is_deterministic() -> None:
    b, _ = session_with_work()
    assert summarize(b).text == summarize(b).text


def cited_prompts(text: str) -> dict[int, list[str]]:
    """Every Constraints bullet's text, by each line it cites."""
    found: dict[int, list[str]] = {}
    for bullet in parse_bullets(section(text, Heading.CONSTRAINTS)):
        for line in bullet.lines:
            found.setdefault(line, []).append(bullet.text)
    return found


def long_prompts(count: int, size: int, seed: int = 2) -> tuple[TranscriptBuilder, list[tuple[int, str]]]:
    b = TranscriptBuilder(seed=seed)
    prompts = []
    for number in range(count):
        text = f"prompt {number}: " + " ".join(f"w{number}x{k}" for k in range(size // 6))
        b.user(text)
        prompts.append((b.line_count, text))
        b.assistant(b.text(f"done with {number}"))
    return b, prompts


def test_a_summary_over_its_budget_is_fitted_never_refused() -> None:
    b, prompts = long_prompts(40, 3000)
    result = summarize(b, options=summary_options(char_budget=20_000))
    assert len(result.text) <= 20_000 and validate_checkpoint(result.text) == ()
    assert result.fit is not None and result.fit.needed_chars > 20_000 and result.fit.allowed_chars == 20_000
    found = cited_prompts(result.text)
    assert sorted(found) == [line for line, _ in prompts]  # every human message keeps its anchor
    for line, text in prompts:  # ...and at least its first 200 characters
        assert any(bullet.startswith(text[:200]) for bullet in found[line])
    newest_line, newest = prompts[-1]
    assert found[newest_line] == [newest]  # the newest stays whole
    oldest_line, oldest = prompts[0]
    cut = len(oldest) - 200
    assert found[oldest_line] == [f"{oldest[:200]}[... {cut} more characters at L{oldest_line}]"]
    assert result.fit.prompts == 40 and result.fit.prompts_verbatim >= 1
    assert result.fit.prompts_cut == 40 - result.fit.prompts_verbatim


def test_a_fitted_summary_is_the_same_bytes_every_time() -> None:
    b, _ = long_prompts(60, 2000, seed=4)
    options = summary_options(char_budget=12_000)
    assert summarize(b, options=options).text == summarize(b, options=options).text


def test_a_summary_that_fits_is_not_fitted() -> None:
    b, _ = long_prompts(4, 1500)
    result = summarize(b)
    assert result.fit is None
    assert summarize(b, options=summary_options(char_budget=len(result.text))).text == result.text


def test_the_room_the_plan_gives_bounds_the_summary_below_its_budget() -> None:
    b, prompts = long_prompts(30, 1500)
    result = write_summary(evidence_of(b), summary_options(), room=9_000)
    assert len(result.text) <= 9_000 and result.fit is not None and result.fit.allowed_chars == 9_000
    assert sorted(cited_prompts(result.text)) == [line for line, _ in prompts]


def test_thousands_of_human_messages_all_keep_their_anchor_within_the_budget() -> None:
    b, prompts = long_prompts(3000, 300, seed=6)
    result = summarize(b, options=summary_options(char_budget=60_000))
    assert len(result.text) <= 60_000 and validate_checkpoint(result.text) == ()
    assert sorted(cited_prompts(result.text)) == [line for line, _ in prompts]
    fit = result.fit
    assert fit is not None and fit.prompts_by_anchor > 0 and fit.prompts_omitted == 0
    alone = [
        b for b in parse_bullets(section(result.text, Heading.CONSTRAINTS)) if "by anchor only" in b.text
    ]
    assert sum(len(b.lines) for b in alone) == fit.prompts_by_anchor
    assert all(b.text.startswith(f"{len(b.lines)} older requests") for b in alone)  # none merged
    assert cited_prompts(result.text)[prompts[-1][0]][0].startswith(prompts[-1][1][:40])


def test_a_prior_summary_larger_than_the_budget_is_fitted_with_its_cuts_marked() -> None:
    native = "Summary:\n" + "\n".join(f"{n}. earlier work item {n}: " + "v" * 300 for n in range(2000))
    b, _ = prior_then_more(native, wrap=True)
    result = summarize(b, options=summary_options(char_budget=30_000))
    assert len(result.text) <= 30_000 and validate_checkpoint(result.text) == ()
    completed = section(result.text, Heading.COMPLETED)
    assert completed[0].startswith("- ... ") and completed[0].endswith(" older bullets omitted")
    assert f"- 1999. earlier work item 1999: {'v' * 200}" in completed[-1]
    assert "continue with the docs" in bullet_texts(result.text, Heading.CONSTRAINTS)


def test_our_own_prior_requests_are_carried_and_fitted_with_the_new_ones() -> None:
    first, prompts = long_prompts(30, 2000, seed=7)
    prior = summarize(first).text  # 30 prompts of 2000 characters: about 60,000
    b, prior_line = prior_then_more(prior, wrap=True)
    result = summarize(b, options=summary_options(char_budget=20_000))
    assert len(result.text) <= 20_000 and result.fit is not None
    carried = cited_prompts(result.text)[prior_line]
    for _, text in prompts:  # each earlier request still opens one bullet cited to the prior summary
        assert any(bullet.startswith(text[:200]) for bullet in carried)
    assert bullet_texts(result.text, Heading.CONSTRAINTS)[-1] == "continue with the docs"


def test_a_request_repeated_many_times_cites_every_line_it_was_typed_on() -> None:
    b = TranscriptBuilder(seed=12)
    typed = []
    for _ in range(30):
        b.user("continue")
        typed.append(b.line_count)
        b.assistant(b.text("ok"))
    assert cited_prompts(summarize(b).text) == {line: ["continue"] for line in typed}


def test_an_error_of_the_summarizer_carries_its_code_and_figures_never_text() -> None:
    error = SummaryBudgetExceeded(70_000, 60_000)
    assert error.failure.value == "budget-exceeded"
    assert dict(error.figures) == {"needed_chars": 70_000, "allowed_chars": 60_000}


def test_options_below_their_minimum_are_refused() -> None:
    with pytest.raises(InvalidSummaryOptions) as caught:
        replace(summary_options(), char_budget=3999)
    assert (caught.value.option, caught.value.minimum) == ("char_budget", 4000)
    with pytest.raises(InvalidSummaryOptions):
        replace(summary_options(), max_bullets_per_section=0)


def test_sections_over_the_cap_keep_the_newest_with_an_omission_marker() -> None:
    b = TranscriptBuilder(seed=4)
    for number in range(7):
        b.user(f"task {number}")
        b.assistant(b.text(f"finished task {number}"))
    b.user("wrap up")
    text = summarize(b, options=summary_options(max_bullets_per_section=3)).text
    assert section(text, Heading.COMPLETED)[0] == "- ... 4 older bullets omitted"
    kept = ["finished task 4", "finished task 5", "finished task 6"]
    assert bullet_texts(text, Heading.COMPLETED)[1:] == kept
    assert len(bullet_texts(text, Heading.CONSTRAINTS)) == 8  # prompts are never dropped


def prior_then_more(prior_text: str, *, wrap: bool, seed: int = 21) -> tuple[TranscriptBuilder, int]:
    b = TranscriptBuilder(seed=seed)
    b.compact(prior_text, wrap=wrap)
    line = b.line_count
    b.user("continue with the docs")
    b.assistant(b.text("Docs updated."))
    return b, line


def test_our_prior_summary_is_folded_bullet_by_bullet_and_recited() -> None:
    first, _ = session_with_work()
    prior = summarize(first).text
    b, prior_line = prior_then_more(prior, wrap=True)
    result = summarize(b)
    text = result.text
    assert result.prior_summaries == (prior_line,)
    assert result.prior_mode is PriorMode.FOLDED
    for heading in Heading:
        old = [t for t in bullet_texts(prior, heading) if t != "None" and not t.startswith("... ")]
        new = bullet_texts(text, heading)
        assert all(item in new for item in old), heading
    assert f"- Fix the failing parser tests in src/parser.py (L{prior_line})" in text
    assert bullet_texts(text, Heading.CONSTRAINTS)[-1] == "continue with the docs"
    assert text.count(APPENDIX_MARKER) == 1
    assert text.count(CHECKPOINT_MARKER) == 1
    assert validate_checkpoint(text) == ()


def test_summarizing_a_summary_again_reaches_a_fixed_point() -> None:
    first, _ = session_with_work()
    once = summarize(first).text
    b = TranscriptBuilder(seed=8)
    b.compact(once, wrap=False)
    twice = summarize(b).text
    c = TranscriptBuilder(seed=8)
    c.compact(twice, wrap=False)
    thrice = summarize(c).text
    assert thrice == twice
    assert twice.count(APPENDIX_MARKER) == 1
    assert "modified /repo/src/parser.py via Read, Edit (L2)" in twice  # the appendix record survives


def test_a_claude_native_prior_summary_is_carried_under_completed_work() -> None:
    native = (
        "Analysis:\nThe user wants a CLI.\n\nSummary:\n1. Primary Request: build `tool sync`\n"
        "   - keep Python 3.11 compatibility"
    )
    b, line = prior_then_more(native, wrap=True)
    result = summarize(b)
    completed = section(result.text, Heading.COMPLETED)
    for raw in native.split("\n"):
        if raw.strip():
            assert f"- {raw} (L{line})" in completed
    assert not any("This session is being continued" in entry for entry in completed)
    assert result.prior_mode is PriorMode.FOLDED


def test_verbatim_preservation_embeds_the_prior_and_falls_back_when_too_big() -> None:
    native = "Summary:\n" + "\n".join(f"fact {n}: " + "z" * 50 for n in range(20))
    b, line = prior_then_more(native, wrap=False)
    result = summarize(b, options=summary_options(preserve_prior_verbatim=True))
    assert result.prior_mode is PriorMode.VERBATIM
    assert result.fallback_reason is None
    assert "  " + native.replace("\n", "\n  ") in result.text
    assert f"  {PRIOR_BLOCK_END} (L{line})" in result.text
    assert result.budget == 90_000
    big = "Summary:\n" + "\n".join("w" * 590 for _ in range(12))
    b2, _ = prior_then_more(big, wrap=False)
    fallback = summarize(
        b2, options=summary_options(char_budget=4000, preserve_prior_verbatim=True, max_quote_chars=100)
    )
    assert fallback.prior_mode is PriorMode.FOLDED
    assert fallback.fallback_reason is FallbackReason.VERBATIM_OVER_BUDGET
    assert len(fallback.text) <= 4000


def test_system_errors_and_commands_are_listed() -> None:
    b = TranscriptBuilder(seed=6)
    b.user("go")
    b.system("api_error")
    b.user(
        "<command-name>/model</command-name>\n<command-message>model</command-message>\n"
        "<command-args>opus</command-args>",
        human=False,
    )
    text = summarize(b).text
    assert any(t.startswith("system error: API error 529") for t in bullet_texts(text, Heading.ERRORS))
    assert "slash command: /model opus" in bullet_texts(text, Heading.COMMANDS)
    assert bullet_texts(text, Heading.CONSTRAINTS) == ["go"]


def test_a_hundred_thousand_items_are_summarized_in_linear_time() -> None:
    items = []
    for n in range(25_000):
        items.append(EvidenceItem(4 * n + 1, EvidenceKind.HUMAN_PROMPT, f"p{n}"))
        items.append(EvidenceItem(4 * n + 2, EvidenceKind.ASSISTANT_TEXT, f"answer {n}"))
        items.append(
            EvidenceItem(
                4 * n + 3,
                EvidenceKind.TOOL_CALL,
                tool_name="Bash",
                tool_id=f"t{n}",
                tool_input={"command": f"echo {n % 50} > out{n % 70}.txt"},
            )
        )
        items.append(EvidenceItem(4 * n + 4, EvidenceKind.TOOL_RESULT, "", tool_name="Bash", tool_id=f"t{n}"))
    result = write_summary(items, summary_options(char_budget=1_000_000))
    assert result.bullets(Heading.CONSTRAINTS) == 25_000
    assert result.bullets(Heading.COMPLETED) == 40


def test_ten_thousand_prompts_over_the_budget_are_fitted_and_every_one_is_accounted_for() -> None:
    items = []
    for n in range(10_000):
        items.append(EvidenceItem(2 * n + 1, EvidenceKind.HUMAN_PROMPT, f"p{n} " + "x" * (n % 700)))
        items.append(EvidenceItem(2 * n + 2, EvidenceKind.ASSISTANT_TEXT, f"answer {n}"))
    result = write_summary(items, summary_options())
    fit = result.fit
    assert len(result.text) <= 60_000 and fit is not None
    assert fit.prompts_verbatim + fit.prompts_cut + fit.prompts_by_anchor + fit.prompts_omitted == 10_000
    marker = section(result.text, Heading.CONSTRAINTS)[0]
    assert marker == f"- ... {fit.prompts_omitted} older bullets omitted"  # the oldest, counted
    assert set(cited_prompts(result.text)) == {2 * n + 1 for n in range(fit.prompts_omitted, 10_000)}


def test_every_command_and_failure_is_kept_beyond_the_bullet_cap_while_the_room_holds_them() -> None:
    b = TranscriptBuilder(seed=21)
    b.user("Run every check")
    for number in range(60):
        b.tool_call("Bash", {"command": f"make check-{number}"}, "Exit code 2\nmake: *** [check] Error 2")
    text = summarize(b, options=replace(summary_options(), max_bullets_per_section=5)).text
    (commands,) = bullet_texts(text, Heading.COMMANDS)
    errors = bullet_texts(text, Heading.ERRORS)
    listed = ", ".join(f"`make check-{n}`" for n in range(60))
    assert commands == f"make: 60 commands (60 failed)\nfailed: {listed}"
    assert len(errors) == 60
    assert all(e.startswith("Bash failed (exit 2), unresolved: make check-") for e in errors)


def test_a_fitted_summary_says_how_each_failure_ended_before_it_cuts_the_rest() -> None:
    b = TranscriptBuilder(seed=22)
    for number in range(40):
        b.user(f"request {number} " + "x" * 3000)
        b.tool_call("Bash", {"command": f"pytest tests/t{number}.py " + "-k y" * 100}, "Exit code 1\nboom")
        b.tool_call("Bash", {"command": f"pytest tests/t{number}.py " + "-k y" * 100}, "Exit code 0\nok")
    options = replace(summary_options(), char_budget=20_000)
    result = summarize(b, options=options)
    assert result.fit is not None and len(result.text) <= 20_000
    errors = [e for e in bullet_texts(result.text, Heading.ERRORS) if not e.startswith("...")]
    assert errors
    assert all(", resolved at L" in e.split(":")[0] for e in errors)
