"""The candidate check on its own: a real candidate passes, and each way of breaking it is named.

The candidate comes from compress's own stages over a builder session; each test damages its
bytes the way a bug in composing could, and the check must refuse with the matching reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from pipeline.core.check.candidate import CandidateCheck, check_candidate, contract_messages
from pipeline.core.check.contract import Violation, restate
from pipeline.core.index import build_index
from pipeline.jobs.compress.planning import Planned, plan_and_summarize
from pipeline.jobs.compress.stages import Candidate, candidate_partition, compose_and_check
from pipeline.jobs.front import Analysis, open_session
from pipeline.reasons import CandidateFailure, Figure
from pipeline.testing import TranscriptBuilder
from pipeline.testing.sessions import PROMPTS, build_session
from pipeline.testing.settings import LIMITS, compress_options
from pipeline.vocabulary import FindingCode, SourceFormat


@dataclass(frozen=True, slots=True)
class Made:
    """A candidate and the inputs the check was given for it."""

    data: bytes
    expected_uuids: tuple[str, ...]
    new_lines: tuple[int, ...]
    analysis: Analysis
    protected_from: int

    def check(
        self, data: bytes | None = None, *, expected: tuple[str, ...] | None = None, target: int | None = None
    ) -> CandidateCheck:
        index, chain = self.analysis.index, self.analysis.topology.chain
        return check_candidate(
            self.data if data is None else data,
            expected_chain_uuids=self.expected_uuids if expected is None else expected,
            new_lines=self.new_lines,
            source_messages=contract_messages(
                self.analysis.source.data, index, chain, from_line=self.protected_from
            ),
            target_estimated_tokens=target,
            limits=LIMITS,
        )


def _made(folder: Path, **knobs: Any) -> Made:
    options = compress_options(folder / "out", min_tokens=0, **knobs)
    analysis = open_session(
        folder / "session.jsonl", "s", options.topology(), command="compress", per_code=9, limits=LIMITS
    )
    assert isinstance(analysis, Analysis)
    planned = plan_and_summarize(analysis, options)
    assert isinstance(planned, Planned) and planned.summary is not None
    plan = planned.plan
    partition, side = candidate_partition(analysis, options, plan)
    text = planned.text
    candidate = compose_and_check(analysis, options, planned, partition, text, side)
    assert isinstance(candidate, Candidate) and candidate.checked.ok, candidate
    composed = candidate.composed
    expected = (
        composed.boundary_uuid,
        composed.summary_uuid,
        *(analysis.index.entry(line).uuid or "" for line in plan.raw_lines),
    )
    new = tuple(i for i, origin in enumerate(composed.source_lines, 1) if origin is None)
    return Made(composed.data, expected, new, analysis, analysis.topology.chain[plan.protected.group_start])


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Made:
    folder = tmp_path_factory.mktemp("candidate")
    build_session(folder / "session.jsonl", turns=6)
    return _made(folder, min_recent_records=8)


LONG_INSTRUCTION = "Port the module to the new API:\n" + "  - keep each name\tand its docstring\n" * 150


@pytest.fixture(scope="module")
def long_task(tmp_path_factory: pytest.TempPathFactory) -> Made:
    """One task, cut between its completed exchanges: its instruction is restated in the summary."""
    folder = tmp_path_factory.mktemp("long-task")
    b = TranscriptBuilder(seed=71)
    b.user(LONG_INSTRUCTION)
    for step in range(30):
        b.tool_call("Bash", {"command": f"step {step}"}, "output of the step\n" * 300)
    b.assistant(b.text("ported"))
    b.write(folder / "session.jsonl")
    return _made(folder)


def _lines(data: bytes) -> list[bytes]:
    return data.rstrip(b"\n").split(b"\n")


def _join(lines: list[bytes]) -> bytes:
    return b"\n".join(lines) + b"\n"


def _failures(check: CandidateCheck) -> set[str]:
    return {reason.code for reason in check.failures}


def test_the_composed_candidate_passes_with_its_figures(made: Made) -> None:
    check = made.check()
    assert check.ok and not check.violations
    assert check.output_lines == len(_lines(made.data)) and check.output_tokens > 0


def test_a_second_compact_pair_is_refused(made: Made) -> None:
    lines = _lines(made.data)
    boundary, summary = made.new_lines[0], made.new_lines[1]
    extra = [lines[boundary - 1], lines[summary - 1]]
    damaged = _join(lines[:2] + extra + lines[2:]) if boundary > 2 else _join(extra + lines)
    assert CandidateFailure.COMPACT_PAIR_COUNT in _failures(made.check(damaged))


def test_an_internal_planning_field_in_a_new_record_is_refused(made: Made) -> None:
    lines = _lines(made.data)
    at = made.new_lines[1] - 1
    lines[at] = orjson.dumps({**orjson.loads(lines[at]), "_plan_cut": 12})
    assert CandidateFailure.INTERNAL_FIELD in _failures(made.check(_join(lines)))


def test_a_result_that_answers_no_call_is_refused(made: Made) -> None:
    lines = _lines(made.data)
    at = max(i for i, line in enumerate(lines) if b'"tool_result"' in line)
    record = orjson.loads(lines[at])
    record["message"]["content"][0]["tool_use_id"] = "toolu_01NeverIssued"
    lines[at] = orjson.dumps(record)
    check = made.check(_join(lines))
    assert CandidateFailure.VALIDATION_ERRORS in _failures(check)
    assert [(f.code, f.ids) for f in check.findings] == [
        (FindingCode.TOOL_RESULT_MISMATCH, ("toolu_01NeverIssued",))
    ]


def test_a_chain_other_than_the_plan_is_refused(made: Made) -> None:
    expected = (*made.expected_uuids[:-1], "some-other-leaf")
    check = made.check(expected=expected)
    assert _failures(check) == {CandidateFailure.CHAIN_DIFFERS_FROM_PLAN}
    assert check.internal  # our own inconsistency, not the session's
    (reason,) = check.failures
    figures = dict(reason.figures)
    last = len(made.expected_uuids) - 1
    assert figures[Figure.EXPECTED_RECORDS] == figures[Figure.CANDIDATE_RECORDS] == last + 1
    assert figures[Figure.FIRST_DIFFERENCE] == last  # where the chains part, and the line there
    index = build_index(made.data, SourceFormat.CLAUDE_CODE, LIMITS)
    assert index.record(figures[Figure.LINE]).uuid == made.expected_uuids[-1]


def test_other_failures_are_the_sessions_not_internal(made: Made) -> None:
    tokens = made.check().output_tokens
    check = made.check(target=tokens - 1)
    assert not check.ok and not check.internal


def test_the_token_target_is_a_hard_gate_when_set(made: Made) -> None:
    tokens = made.check().output_tokens
    assert made.check(target=tokens).ok
    assert _failures(made.check(target=tokens - 1)) == {CandidateFailure.OVER_TOKEN_TARGET}


def test_a_lost_current_instruction_breaks_the_survival_contract(made: Made) -> None:
    last_prompt = PROMPTS[5 % len(PROMPTS)].encode()
    assert last_prompt in made.data
    damaged = made.data.replace(last_prompt, b"something else entirely")
    check = made.check(damaged)
    assert CandidateFailure.CONTRACT in _failures(check) and check.violations


def _with_summary(made: Made, edit: Callable[[str], str]) -> bytes:
    lines = _lines(made.data)
    at = made.new_lines[1] - 1
    record = orjson.loads(lines[at])
    record["message"]["content"] = edit(record["message"]["content"])
    lines[at] = orjson.dumps(record)
    return _join(lines)


def test_a_summarized_instruction_survives_only_restated_exactly(long_task: Made) -> None:
    assert long_task.check().ok
    block = restate(LONG_INSTRUCTION)
    quoted = "- " + LONG_INSTRUCTION.strip() + " (L1)"  # what a summary bullet would quote
    retabbed = restate(LONG_INSTRUCTION.replace("\t", " "))  # same length, one character changed each line
    for edit in (
        lambda text: text.replace(block, quoted),
        lambda text: text.replace(block, retabbed),
        lambda text: text.replace(block, block.replace(" characters)", " characters) ")),
    ):
        check = long_task.check(_with_summary(long_task, edit))
        assert check.violations == (Violation.USER_TEXT_DROPPED,)
        assert CandidateFailure.CONTRACT in _failures(check)
