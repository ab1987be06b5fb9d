"""The reason vocabulary: every code a report's `reasons` can hold is a lower-case code, never a class name.

The type checker admits only `ReasonCode` vocabularies into a `Reason`; these tests check every
member of every one of them, found by importing every module of the package.
"""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest

import pipeline
from pipeline.reasons import Figure, Reason, ReasonCode, Refusal, SummaryFailure
from pipeline.summarize.model.outcomes import FailureFacts, SummaryOutcome

CODE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
FIELD = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)*")


def _every_module() -> None:
    for module in pkgutil.walk_packages(pipeline.__path__, "pipeline."):
        importlib.import_module(module.name)


def _vocabularies() -> list[type[ReasonCode]]:
    """Every vocabulary that may reach `reasons`: the subclasses of ReasonCode, found in every module."""
    _every_module()
    found: list[type[ReasonCode]] = []
    pending = list(ReasonCode.__subclasses__())
    while pending:
        vocabulary = pending.pop()
        found.append(vocabulary)
        pending.extend(vocabulary.__subclasses__())
    return sorted(found, key=lambda v: f"{v.__module__}.{v.__qualname__}")


VOCABULARIES = _vocabularies()


def test_the_vocabularies_that_reach_reports_are_all_found() -> None:
    names = {vocabulary.__name__ for vocabulary in VOCABULARIES}
    expected = {"Refusal", "SummaryFailure", "SummaryOutcome", "FindingCode", "DefectCode", "Violation"}
    assert expected <= names, expected - names


@pytest.mark.parametrize("vocabulary", VOCABULARIES, ids=lambda v: v.__name__)
def test_every_reason_code_is_lower_case_words_joined_by_hyphens(vocabulary: type[ReasonCode]) -> None:
    assert list(vocabulary), f"{vocabulary.__name__} is empty"
    for member in vocabulary:
        assert CODE.fullmatch(member.value), f"{vocabulary.__name__}.{member.name} = {member.value!r}"


def test_figure_names_are_report_field_names() -> None:
    for figure in Figure:
        assert FIELD.fullmatch(figure.value), figure


def test_a_reason_reads_as_its_code_and_detail_and_keeps_its_figures_apart() -> None:
    figures = ((Figure.NEEDED_CHARS, 70_000), (Figure.ALLOWED_CHARS, 60_000))
    reason = Reason(Refusal.SUMMARY, SummaryFailure.BUDGET_EXCEEDED, figures)
    assert str(reason) == "summary-budget-exceeded"
    assert dict(reason.figures) == {"needed_chars": 70_000, "allowed_chars": 60_000}


def test_a_model_failure_gives_its_facts_as_figures() -> None:
    facts = FailureFacts(
        input_tokens=120_000, limit_tokens=100_000, depth=4, defects=(("human-not-cited", 3),)
    )
    assert facts.figures() == (
        (Figure.INPUT_TOKENS, 120_000),
        (Figure.LIMIT_TOKENS, 100_000),
        (Figure.DEPTH, 4),
        (Figure.DEFECTS, 3),
    )
    assert str(Reason(Refusal.SUMMARY, SummaryOutcome.INPUT_OVERFLOW)) == "summary-input-overflow"
