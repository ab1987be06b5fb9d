"""The grounding gate: nine headings, cited bullets, every human message cited, exact quotes."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from pipeline.summarize.checkpoint.document import CHECKPOINT_MARKER, DefectCode, Heading
from pipeline.summarize.model.grounding import (
    GroundingCode,
    GroundingEvidence,
    check_answer,
    cited_lines,
    defect_counts,
    normalize_answer,
)

EVIDENCE = GroundingEvidence(
    frozenset({3, 4, 9}),
    (3, 9),
    MappingProxyType({3: 'Never touch "prod.db", ever', 4: "I ran the tests", 9: "line one\nline two"}),
)


def answer(**sections: str) -> str:
    """A checkpoint: the given section bodies (by enum name), `- None` elsewhere."""
    body = {
        "GOAL": "- Ship the fix (L3)",
        "CONSTRAINTS": '- Never touch "prod.db" (L3)\n- Keep going (L9)',
    } | sections
    return "\n".join(f"## {h.value}\n{body.get(h.name, '- None')}" for h in Heading)


def codes(text: str) -> list[tuple[GroundingCode, int | None]]:
    return [(defect.code, defect.anchor) for defect in check_answer(text, EVIDENCE)]


def test_a_grounded_checkpoint_passes() -> None:
    text = answer(
        COMPLETED="- Tests ran (L4)\n  and passed, see L4", NEXT_STEPS="- Unknown from provided anchors."
    )
    assert check_answer(text, EVIDENCE) == ()
    assert cited_lines(text) == (3, 4, 9)


@pytest.mark.parametrize(
    ("sections", "expected"),
    [
        ({"COMPLETED": "- Tests ran"}, [(GroundingCode.UNCITED_BULLET, None)]),
        ({"COMPLETED": "- Tests ran (L4, L77)"}, [(GroundingCode.UNKNOWN_ANCHOR, 77)]),
        ({"CONSTRAINTS": "- Never touch prod (L3)"}, [(GroundingCode.HUMAN_NOT_CITED, 9)]),
        ({"CONSTRAINTS": '- "never touch prod.db" (L3, L9)'}, [(GroundingCode.QUOTE_NOT_FOUND, None)]),
        ({"CONSTRAINTS": '- "prod.db" (L4, L9)'}, [(GroundingCode.QUOTE_NOT_FOUND, None)]),  # not in L4 or L9
        (
            {"NEXT_STEPS": "- Unknown from provided anchors. Probably deploy."},
            [(GroundingCode.UNCITED_BULLET, None)],
        ),
    ],
)
def test_each_grounding_rule_reports_its_defect(
    sections: dict[str, str], expected: list[tuple[GroundingCode, int | None]]
) -> None:
    assert codes(answer(**sections)) == expected


def test_a_quote_may_span_lines_as_the_pack_showed_them() -> None:
    assert codes(answer(CONSTRAINTS='- "line one\\nline two" and "prod.db" (L9, L3)')) == []


def test_structure_defects_come_from_the_checkpoint_validator() -> None:
    missing = answer().replace("## Decisions\n- None\n", "")
    assert [(d.code, d.structure, d.heading) for d in check_answer(missing, EVIDENCE)] == [
        (GroundingCode.STRUCTURE, DefectCode.MISSING_HEADING, Heading.DECISIONS)
    ]
    prose = "Here is your summary:\n" + answer() + "\n\n<!-- session-compaction appendix v1 -->"
    found = check_answer(prose, EVIDENCE)
    assert found[0].structure is DefectCode.TEXT_BEFORE_FIRST_HEADING and found[0].answer_line == 1
    assert GroundingCode.APPENDIX_IN_ANSWER in {defect.code for defect in found}
    assert defect_counts(found) == (("appendix-in-answer", 1), ("text-before-first-heading", 1))


def test_normalizing_strips_a_fence_and_a_copied_marker_only() -> None:
    text = answer()
    assert normalize_answer(f"\n```markdown\n{CHECKPOINT_MARKER}\n{text}\n```\n") == text
    assert normalize_answer(text + "\r\n") == text


def test_defects_describe_themselves_without_answer_text() -> None:
    (defect,) = check_answer(answer(COMPLETED="- secret plan (L77, L4)"), EVIDENCE)
    assert defect.describe() == "unknown-anchor (section 'Completed work', answer line 7, L77)"
