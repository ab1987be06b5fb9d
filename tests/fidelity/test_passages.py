"""The resumed context: a summary's passages, the kept records' passages and their runs."""

from __future__ import annotations

from pipeline.fidelity import KeptCall, resumed_context, summary_passages
from pipeline.summarize.evidence.items import EvidenceItem, EvidenceKind
from pipeline.summarize.evidence.shell import CommandOutcome
from tests.fidelity._items import bash, call, prompt, summary

SUMMARY = """Preamble line one
still the preamble.

## Commands and validation
- failed: cd test && python -c "
  import sys
  - not a new item: indented
  " (L65, L66)
- passed: ls (L70)
Paragraph right after a list item.

1. numbered item
"""


def test_a_summary_is_read_as_headings_list_items_with_their_indented_lines_and_paragraphs() -> None:
    assert list(summary_passages(SUMMARY)) == [
        "Preamble line one still the preamble.",
        "## Commands and validation",
        '- failed: cd test && python -c " import sys - not a new item: indented " (L65, L66)',
        "- passed: ls (L70) Paragraph right after a list item.",
        "1. numbered item",
    ]


def test_kept_calls_are_read_as_runs_and_thinking_is_left_out() -> None:
    items = [
        summary("## Goal\n- ship it"),
        prompt(10, "go on"),
        EvidenceItem(11, EvidenceKind.THINKING, "secret plan"),
        *bash(12, "pytest -x", "Exit code 1\nFAILED t.py::a"),
        *call(14, "Read", {"file_path": "/r/a.py"}, "print(1)"),
    ]
    context = resumed_context(items)
    assert context.calls == (
        KeptCall("Bash", "pytest -x", "", CommandOutcome.FAILED),
        KeptCall("Read", "", "/r/a.py", CommandOutcome.PASSED),
    )
    assert "secret plan" not in context.text
    assert context.passages[:2] == ("## Goal", "- ship it")
    assert "go on" in context.passages and "Bash pytest -x Exit code 1 FAILED t.py::a" in context.passages
    assert context.summary_lines == ("## Goal", "- ship it")


def test_the_whole_text_holds_each_summary_whole_so_a_quote_may_span_its_paragraphs() -> None:
    quoted = "First paragraph of the instruction.\n\nSecond paragraph, with\n- a list line."
    context = resumed_context([summary(f"<<<<<<< instruction, verbatim\n{quoted}\n>>>>>>> end")])
    assert "First paragraph of the instruction. Second paragraph, with - a list line." in context.text
    assert not any("Second paragraph" in p and "First paragraph" in p for p in context.passages)
