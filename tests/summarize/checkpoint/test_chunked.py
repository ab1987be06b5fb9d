"""A span read in chunks and merged in rounds keeps what one pass keeps, within the rounds' bounds."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pipeline.summarize import EvidenceItem, EvidenceKind, Heading, write_summary
from pipeline.summarize.checkpoint.chunked import (
    MAX_CHUNKS_PER_ROUND,
    MAX_REDUCTION_DEPTH,
    partial_of,
    reduced,
)
from pipeline.summarize.checkpoint.deterministic import write_partial
from pipeline.testing import TranscriptBuilder
from pipeline.testing.settings import summary_options
from tests.summarize.checkpoint.test_deterministic import (
    bullet_texts,
    evidence_of,
    section,
    session_with_work,
)

PROGRAMS = ("pytest", "make", "cargo", "npm", "ruff")


def wide_span(turns: int) -> tuple[EvidenceItem, ...]:
    """A session of `turns` turns, each a prompt, reads, an edit, a shell command and a reply; every
    fourth command fails with a traceback, and half the files and commands come back later."""
    b = TranscriptBuilder(seed=7)
    for turn in range(turns):
        again = turn // 2 if turn % 2 else turn
        b.user(f"Turn {turn}: handle module {again} and keep the public API unchanged")
        b.tool_call("Read", {"file_path": f"/repo/pkg{again % 9}/mod{again}.py"}, f"def f{again}(): ...")
        b.tool_call(
            "Edit",
            {"file_path": f"/repo/src{turn % 5}/edit{again}.py", "old_string": "a", "new_string": "b"},
            "ok",
        )
        command = f"{PROGRAMS[turn % len(PROGRAMS)]} run target{again}"
        if turn % 4 == 3:
            failure = f"Exit code 1\nTraceback (most recent call last):\nValueError: bad target{again}"
            b.tool_call("Bash", {"command": command}, failure, is_error=True)
        else:
            b.tool_call("Bash", {"command": command}, "ok")
        b.assistant(b.text(f"Done with module {again}."))
    return evidence_of(b)


def test_one_chunk_is_byte_identical_to_one_pass() -> None:
    b, _ = session_with_work()
    items = evidence_of(b)
    for options in (summary_options(), summary_options(char_budget=4000, max_quote_chars=40)):
        one_pass = write_summary(items, options)
        chunked = reduced(items, len(items))
        assert chunked.chunks == 1
        assert write_partial(chunked.partial, options) == one_pass
        assert write_partial(partial_of(items), options) == one_pass
        assert write_summary(items, replace(options, chunk_evidence_items=len(items))) == one_pass


def test_a_span_many_chunks_long_keeps_what_one_pass_keeps() -> None:
    items = wide_span(120)
    ample = summary_options(char_budget=400_000)
    one_pass = write_summary(items, ample)
    chunked = write_summary(items, replace(ample, chunk_evidence_items=25))
    assert reduced(items, 25).chunks > 20
    for heading in (Heading.CONSTRAINTS, Heading.FILES, Heading.COMMANDS):
        assert bullet_texts(chunked.text, heading) == bullet_texts(one_pass.text, heading), heading
    prompts = [item.text for item in items if item.kind is EvidenceKind.HUMAN_PROMPT]
    assert len(prompts) == 120
    assert all(prompt in chunked.text for prompt in prompts)
    for turn in range(3, 120, 4):
        assert f"ValueError: bad target{turn // 2 if turn % 2 else turn}" in "\n".join(
            section(chunked.text, Heading.ERRORS)
        )
    assert len(chunked.text) <= ample.char_budget


def test_a_large_span_is_fitted_into_its_budget() -> None:
    items = wide_span(120)
    tight = replace(summary_options(char_budget=6000), chunk_evidence_items=25)
    assert len(write_summary(items, tight).text) <= 6000


def test_merges_take_at_most_a_round_width_for_at_most_the_rounds_bound() -> None:
    items = wide_span(60)
    every = reduced(items, 1)  # one item a chunk (a call and its result stay together)
    assert every.chunks > MAX_CHUNKS_PER_ROUND
    assert all(max(merges) <= MAX_CHUNKS_PER_ROUND for merges in every.rounds)
    assert len(every.rounds) <= MAX_REDUCTION_DEPTH
    assert sum(every.rounds[0]) == every.chunks
    assert all(
        sum(later) == len(earlier) for earlier, later in zip(every.rounds, every.rounds[1:], strict=False)
    )
    assert every.rounds[-1] == (len(every.rounds[-2]),)


@pytest.mark.parametrize(("width", "depth"), [(2, 2), (3, 3), (4, 2)])
def test_the_last_round_merges_all_that_is_left(width: int, depth: int) -> None:
    items = wide_span(30)
    bounded = reduced(items, 4, width, depth)
    assert len(bounded.rounds) == depth
    assert all(max(merges) <= width for merges in bounded.rounds[:-1])
    assert len(bounded.rounds[-1]) == 1 and bounded.rounds[-1][0] > width  # past the bound, said so
    assert bounded.partial.state.file_operations == partial_of(items).state.file_operations


def test_a_failure_is_resolved_by_the_same_command_passing_in_a_later_chunk() -> None:
    b = TranscriptBuilder(seed=11)
    b.user("Run the checks")
    b.tool_call("Bash", {"command": "make check"}, "Exit code 2\nerror: first cause", is_error=True)
    for turn in range(12):  # chunks apart
        b.user(f"Look at part {turn}")
        b.tool_call("Read", {"file_path": f"/repo/part{turn}.py"}, "x = 1")
        b.assistant(b.text(f"Part {turn} is fine."))
    b.tool_call("Bash", {"command": "make check"}, "all checks passed")
    b.tool_call("Bash", {"command": "make check"}, "Exit code 2\nerror: second cause", is_error=True)
    items = evidence_of(b)
    options = summary_options()
    one_pass = bullet_texts(write_summary(items, options).text, Heading.ERRORS)
    chunked = bullet_texts(
        write_summary(items, replace(options, chunk_evidence_items=6)).text, Heading.ERRORS
    )
    assert reduced(items, 6).chunks > 4
    assert any("resolved at" in bullet and "first cause" in bullet for bullet in one_pass)
    assert chunked == one_pass


def test_a_later_chunk_rewrites_the_todos_and_resolves_a_declined_edit() -> None:
    b = TranscriptBuilder(seed=12)
    b.user("Plan the work")
    todos = [
        {"content": "Port the parser", "status": "in_progress"},
        {"content": "Docs", "status": "pending"},
    ]
    b.tool_call("TodoWrite", {"todos": todos}, "Todos updated")
    declined = "The user doesn't want to proceed with this tool use. The tool use was rejected."
    b.tool_call(
        "Edit", {"file_path": "/repo/a.py", "old_string": "x", "new_string": "y"}, declined, is_error=True
    )
    for turn in range(10):  # chunks apart
        b.user(f"Step {turn}")
        b.assistant(b.text(f"Step {turn} done."))
    b.tool_call("Edit", {"file_path": "/repo/a.py", "old_string": "x", "new_string": "z"}, "updated")
    done = [
        {"content": "Port the parser", "status": "completed"},
        {"content": "Docs", "status": "in_progress"},
    ]
    b.tool_call("TodoWrite", {"todos": done}, "Todos updated")
    items = evidence_of(b)
    options = summary_options()
    assert reduced(items, 5).chunks > 3
    assert (
        write_summary(items, replace(options, chunk_evidence_items=5)).text
        == write_summary(items, options).text
    )
