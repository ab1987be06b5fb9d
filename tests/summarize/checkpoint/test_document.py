"""Checkpoint structure: bullets round-trip exactly, and structural defects are named by code."""

from __future__ import annotations

import pytest

from pipeline.summarize import (
    CHECKPOINT_MARKER,
    AppendixHeading,
    CheckpointDefect,
    DefectCode,
    Heading,
    validate_checkpoint,
)
from pipeline.summarize.checkpoint.document import (
    cut,
    parse_bullets,
    read_prior,
    recite_cut_marker,
    render_bullet,
)
from pipeline.summarize.evidence.items import bounded_lines


def document(sections: dict[str, list[str]] | None = None, head: str = CHECKPOINT_MARKER) -> str:
    """A checkpoint with every heading in order, each with one bullet unless given."""
    parts = [head]
    for heading in Heading:
        bullets = (sections or {}).get(heading.value, [f"- {heading.value} fact (L1)"])
        parts.append("\n".join([f"## {heading.value}", *bullets]))
    return "\n\n".join(parts)


def codes(text: str) -> list[tuple[DefectCode, object]]:
    return [(defect.code, defect.heading) for defect in validate_checkpoint(text)]


def test_a_complete_checkpoint_has_no_defects() -> None:
    assert validate_checkpoint(document()) == ()
    assert validate_checkpoint(document(head="")) == ()
    preamble = "This session is being continued.\n\n"
    assert validate_checkpoint(preamble + document(), preamble=preamble) == ()


def test_missing_duplicate_and_out_of_order_headings() -> None:
    text = document().replace("## Decisions\n- Decisions fact (L1)\n\n", "")
    assert codes(text) == [(DefectCode.MISSING_HEADING, Heading.DECISIONS)]
    dup = document() + "\n\n## Goal\n- again (L2)"
    assert codes(dup) == [(DefectCode.DUPLICATE_HEADING, Heading.GOAL)]
    swapped = (
        document()
        .replace("## Goal", "## TEMP")
        .replace("## Completed work", "## Goal")
        .replace("## TEMP", "## Completed work")
    )
    assert DefectCode.OUT_OF_ORDER in [code for code, _ in codes(swapped)]


@pytest.mark.parametrize(
    ("sections", "expected"),
    [
        ({"Decisions": []}, [(DefectCode.EMPTY_SECTION, Heading.DECISIONS)]),
        (
            {"Decisions": ["just prose"]},
            [(DefectCode.STRAY_LINE, Heading.DECISIONS), (DefectCode.EMPTY_SECTION, Heading.DECISIONS)],
        ),
        ({"Decisions": ["- None", "- a (L1)"]}, [(DefectCode.NONE_WITH_BULLETS, Heading.DECISIONS)]),
        ({"Decisions": ["- None"]}, []),
        ({"Decisions": ["- a (L1)", "  continued", "", "- b (L2)"]}, []),
        (
            {"Decisions": ["- a (L1)", "## Active work", "- x (L1)"]},
            [(DefectCode.APPENDIX_HEADING_IN_CHECKPOINT, AppendixHeading.ACTIVE_WORK)],
        ),
    ],
)
def test_section_body_defects(
    sections: dict[str, list[str]], expected: list[tuple[DefectCode, object]]
) -> None:
    assert codes(document(sections)) == expected


def test_text_before_the_first_heading_and_unknown_headings() -> None:
    assert codes("Sure! Here is the summary.\n" + document(head="")) == [
        (DefectCode.TEXT_BEFORE_FIRST_HEADING, None)
    ]
    text = document({"Goal": ["- g (L1)", "## Notes", "- n (L1)"]})
    assert (DefectCode.UNKNOWN_HEADING, None) in codes(text)


def test_checkpoint_headings_may_not_appear_in_the_appendix() -> None:
    appendix = "<!-- session-compaction appendix v1 -->\n\n## File operations\n- None\n\n## Goal\n- x"
    text = document() + "\n\n" + appendix
    assert codes(text) == [(DefectCode.CHECKPOINT_HEADING_IN_APPENDIX, Heading.GOAL)]


def test_defects_carry_codes_and_line_numbers_only() -> None:
    defect = validate_checkpoint("SECRET TEXT\n" + document(head=""))[0]
    assert defect == CheckpointDefect(DefectCode.TEXT_BEFORE_FIRST_HEADING, None, 1)
    assert "SECRET" not in repr(defect)


@pytest.mark.parametrize(
    "text",
    [
        "plain",
        "multi\nline\n\nwith blank",
        "## Goal\n- not a bullet",
        "ends with newline\n",
        "\nstarts with newline",
        "looks cited (L9)",
        "None",
        "... 3 older bullets omitted",
        "trailing spaces   \n  indented",
        "<!-- session-compaction checkpoint v1 -->",
    ],
)
def test_bullets_read_back_exactly(text: str) -> None:
    rendered = render_bullet(text, (4, 12)).split("\n")
    assert parse_bullets(rendered)[0].text == text
    assert parse_bullets(rendered)[0].lines == (4, 12)


def test_cut_is_explicit_and_idempotent() -> None:
    once = cut("a" * 50, 10, 7)
    assert once == "a" * 10 + "[... 40 more characters at L7]"
    assert cut(once, 10, 9) == once
    assert cut(recite_cut_marker(once), 10, 9) == "a" * 10 + "[... 40 more characters cut in an earlier pass]"
    assert cut("short", 10, 1) == "short"


def test_citations_are_bounded_to_first_and_newest() -> None:
    assert bounded_lines([5, 3, 3, 9]) == (3, 5, 9)
    assert bounded_lines(range(1, 21)) == (1, 14, 15, 16, 17, 18, 19, 20)


def test_a_prior_that_only_quotes_the_marker_is_read_as_native() -> None:
    native = f"Summary:\n{CHECKPOINT_MARKER}\n- user pasted this"
    prior = read_prior(native, 5, 600)
    assert not prior.own_format
    assert [bullet.text for bullet in dict(prior.bullets)[Heading.COMPLETED]] == [
        "Summary:",
        CHECKPOINT_MARKER,
        "- user pasted this",
    ]
