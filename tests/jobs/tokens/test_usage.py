"""Billed usage as ground truth: the per-session fit recovers a known constant and slope."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pipeline.core.topology.select import AUTO
from pipeline.estimate import calibration
from pipeline.estimate.estimators import EstimatorName
from pipeline.formats.claude_code.content_classes import split_records
from pipeline.formats.content_pieces import ContentClass
from pipeline.jobs.front import Analysis, open_session
from pipeline.jobs.tokens.job import SEED_RECORD, piece_counter, tokens_session
from pipeline.jobs.tokens.usage import (
    MIN_TURNS,
    NO_FRAMING,
    Framing,
    TurnSample,
    collect_turns,
    fit_line,
    fit_usage,
    usage_segments,
)
from pipeline.testing import TranscriptBuilder, as_json
from pipeline.testing.settings import LIMITS, tokens_options

CONSTANT = 14_000  # the system prompt and tool definitions the transcript does not hold
SLOPE = 1.3
TOOLS = (
    (
        "Bash",
        {"command": "pytest -q tests/"},
        "FAILED tests/test_a.py::test_x - AssertionError: 3 != 4\n" * 20,
    ),
    (
        "Read",
        {"file_path": "/src/app/models.py"},
        "".join(f"{n:6}→class M{n}(Base):\n" for n in range(1, 80)),
    ),
    (
        "Grep",
        {"pattern": "def handle_", "path": "src"},
        "src/a.py:12:def handle_a():\nsrc/b.py:40:def handle_b():\n",
    ),
    (
        "Edit",
        {"file_path": "/src/a.py", "old_string": "x = 1", "new_string": "x = 2"},
        "The file was updated.",
    ),
)


def write_session(
    path: Path, usage_for: Callable[[int], dict[str, Any]], *, compact_at: int | None = None
) -> Path:
    """Turns of text + a tool call; every assistant message carries `usage_for(turn)`."""
    b = TranscriptBuilder(seed=5, version="2.1.39")
    b.user("The test suite fails after the refactor; find out why and fix it.")
    turn = 0
    for round_ in range(3):
        for name, tool_input, result in TOOLS:
            if compact_at is not None and turn == compact_at:
                b.compact(
                    "Earlier: the suite failed after a refactor; the model inspected tests and sources."
                )
            message = b.assistant(
                b.thinking(f"Round {round_}: try {name} next."),
                b.text(f"Running {name}."),
                usage=usage_for(turn),
                tool_follows=True,
            )
            b.tool_call(name, tool_input, result, message_id=message.message_id)
            turn += 1
    b.assistant(b.text("The refactor renamed a fixture; fixed and the suite passes."), usage=usage_for(turn))
    b.user("Thanks!")
    return b.write(path)


def placeholder(turn: int) -> dict[str, Any]:
    return {
        "input_tokens": 1,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 1,
    }


def usage_report(path: Path, estimators: tuple[str, ...] = ("seed", "calibrated")) -> dict[str, Any]:
    outcome = tokens_session(path, path.name, tokens_options(estimators=",".join(estimators)))
    usage: dict[str, Any] = as_json(outcome)["tokens"]["usage"]
    return usage


JOB_FRAMING = Framing(calibration.FRAMING_MESSAGE, calibration.FRAMING_TOOL_BLOCK)


def session_turns(path: Path, estimator: str, framing: Framing = JOB_FRAMING) -> tuple[TurnSample, ...]:
    """Each billed turn with its prefix, counted independently of the job (content ignores usage)."""
    analysis = open_session(path, path.name, AUTO, command="tokens", per_code=1, limits=LIMITS)
    assert isinstance(analysis, Analysis)
    counts = piece_counter((EstimatorName(estimator),))
    estimates: dict[int, tuple[int, ...]] = {}
    billed: dict[int, int] = {}
    blocks: dict[int, int] = {}
    for line in split_records(analysis.index.record_lines(analysis.source.data)):
        if line.api:
            estimates[line.line] = (sum(counts(p)[0] for p in line.pieces),)
            blocks[line.line] = sum(
                1 for p in line.pieces if p.kind in (ContentClass.TOOL_USE, ContentClass.TOOL_RESULT)
            )
        if line.billed_prompt:
            billed[line.line] = line.billed_prompt
    segments = usage_segments(analysis.index, analysis.graph, analysis.topology.chain)
    return collect_turns(analysis.index, segments, estimates, billed, 1, tool_blocks=blocks, framing=framing)


def prefixes(path: Path, estimator: str, framing: Framing = JOB_FRAMING) -> list[int]:
    """Each turn's prefix estimate, framed as the job frames it."""
    return [turn.prefix[0] for turn in session_turns(path, estimator, framing)]


def billed_from(prefix: list[int]) -> Callable[[int], dict[str, Any]]:
    def usage_for(turn: int) -> dict[str, Any]:
        total = round(CONSTANT + SLOPE * prefix[turn])
        return {
            "input_tokens": 3,
            "cache_creation_input_tokens": 500,
            "cache_read_input_tokens": total - 503,
            "output_tokens": 40,
        }

    return usage_for


@pytest.mark.parametrize("compact_at", [None, 6])
def test_fit_recovers_the_constant_and_the_slope(tmp_path: Path, compact_at: int | None) -> None:
    draft = write_session(tmp_path / "draft.jsonl", placeholder, compact_at=compact_at)
    prefix = prefixes(draft, "calibrated")
    assert len(prefix) == 13
    session = write_session(tmp_path / "session.jsonl", billed_from(prefix), compact_at=compact_at)
    usage = usage_report(session)
    fit = usage["fits"]["calibrated"]
    assert usage["turns"] == 13
    assert fit["slope"] == pytest.approx(SLOPE, abs=1e-3)
    assert fit["constant"] == pytest.approx(CONSTANT, abs=2)
    assert fit["relative_rmse"] < 1e-3
    assert usage["segments"] == (2 if compact_at is not None else 1)
    assert {"seed", "calibrated", SEED_RECORD} <= set(usage["fits"])


def test_compaction_restarts_the_prefix(tmp_path: Path) -> None:
    prefix = prefixes(write_session(tmp_path / "s.jsonl", placeholder, compact_at=6), "seed")
    assert prefix[6] < prefix[5]  # the first turn after the boundary sees only the summary
    assert prefix[:6] == sorted(prefix[:6]) and prefix[6:] == sorted(prefix[6:])


def test_split_fragments_count_one_turn(tmp_path: Path) -> None:
    # Each message above is written as a thinking, a text and a tool_use fragment with one usage.
    usage = usage_report(write_session(tmp_path / "s.jsonl", placeholder))
    assert usage["assistant_lines_with_usage"] == 3 * 12 + 1
    assert usage["turns"] == 13


def test_sessions_without_usage_have_no_fit(tmp_path: Path) -> None:
    b = TranscriptBuilder(seed=9, version="2.1.39")
    b.user("hi")
    b.assistant(b.text("hello"), usage={"output_tokens": 2})
    path = b.write(tmp_path / "s.jsonl")
    usage = usage_report(path)
    assert usage["turns"] == 0 and usage["fits"] == {}


def test_synthetic_messages_are_not_turns(tmp_path: Path) -> None:
    b = TranscriptBuilder(seed=9, version="2.1.39")
    b.user("hi")
    b.assistant(
        b.text("API Error"),
        model="<synthetic>",
        usage={"input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 0},
    )
    assert usage_report(b.write(tmp_path / "s.jsonl"))["turns"] == 0


@pytest.mark.parametrize(
    ("xs", "ys", "expected"),
    [
        ([1, 2, 3], [12, 14, 16], (10.0, 2.0, 0.0)),
        ([0, 10, 20, 30], [5, 5, 5, 5], (5.0, 0.0, 0.0)),
    ],
)
def test_fit_line_is_least_squares(
    xs: list[float], ys: list[float], expected: tuple[float, float, float]
) -> None:
    fit = fit_line(xs, ys)
    assert fit is not None
    assert (fit.constant, fit.slope, fit.rmse) == pytest.approx(expected)


@pytest.mark.parametrize(("xs", "ys"), [([1, 2], [3, 4]), ([5, 5, 5], [1, 2, 3])])
def test_fit_line_needs_spread_and_points(xs: list[float], ys: list[float]) -> None:
    assert fit_line(xs, ys) is None


def test_fit_usage_reports_slope_error_per_estimator() -> None:
    turns = [
        TurnSample(line, 1000 + 2 * x, (x, 2 * x))
        for line, x in enumerate(range(100, 100 + MIN_TURNS * 50, 50))
    ]
    fits = {fit.estimator: fit for fit in fit_usage(turns, ("a", "b"))}
    assert fits["a"].slope_error == pytest.approx(1.0)
    assert fits["b"].slope_error == pytest.approx(0.0)
    assert fits["b"].to_report().constant == pytest.approx(1000)


def test_framing_is_in_use() -> None:
    # A zero framing would make the tests below unable to tell framing from no framing.
    assert calibration.FRAMING_MESSAGE > 0 and calibration.FRAMING_TOOL_BLOCK > 0


@pytest.mark.parametrize("compact_at", [None, 6])
def test_framing_counts_messages_and_tool_blocks(tmp_path: Path, compact_at: int | None) -> None:
    path = write_session(tmp_path / "s.jsonl", placeholder, compact_at=compact_at)
    turns = session_turns(path, "seed", NO_FRAMING)
    # Before turn k: the prompt (1 message), then k rounds of an assistant message holding one
    # tool_use and a user message holding its tool_result (fragments of a role merge into one).
    # After a compaction the summary is the first message and the rounds count again from it.
    start = compact_at if compact_at is not None else 0
    expected = [
        (1 + 2 * (k - start), 2 * (k - start)) if k >= start else (1 + 2 * k, 2 * k) for k in range(13)
    ]
    assert [(t.messages, t.tool_blocks) for t in turns] == expected
    framing = Framing(message=7, tool_block=100)
    framed = session_turns(path, "seed", framing)
    assert [f.prefix[0] - t.prefix[0] for f, t in zip(framed, turns, strict=True)] == [
        7 * m + 100 * b for m, b in expected
    ]


def test_framing_is_added_once_to_framed_estimators_only(tmp_path: Path) -> None:
    b = TranscriptBuilder(seed=3, version="2.1.39")
    b.user("Read the file.")
    message = b.assistant(b.text("Reading."), usage=placeholder(0), tool_follows=True)
    b.tool_call("Read", {"file_path": "/a.py"}, "x = 1\n", message_id=message.message_id)
    b.assistant(b.text("Done."), usage=placeholder(1))
    path = b.write(tmp_path / "s.jsonl")
    analysis = open_session(path, path.name, AUTO, command="tokens", per_code=1, limits=LIMITS)
    assert isinstance(analysis, Analysis)
    api = [line.line for line in split_records(analysis.index.record_lines(analysis.source.data)) if line.api]
    estimates = {line: (10, 10) for line in api}
    billed = {
        line.line: 100
        for line in split_records(analysis.index.record_lines(analysis.source.data))
        if line.billed_prompt
    }
    blocks = {
        line.line: 1
        for line in split_records(analysis.index.record_lines(analysis.source.data))
        if line.api and any(p.kind in (ContentClass.TOOL_USE, ContentClass.TOOL_RESULT) for p in line.pieces)
    }
    segments = usage_segments(analysis.index, analysis.graph, analysis.topology.chain)
    framing = Framing(message=3, tool_block=50)
    turns = collect_turns(
        analysis.index, segments, estimates, billed, 2, tool_blocks=blocks, framing=framing, framed=1
    )
    # Turn 1 sees the prompt; turn 2 the prompt, the assistant's text and tool_use, the result.
    assert [(t.messages, t.tool_blocks) for t in turns] == [(1, 0), (3, 2)]
    assert [t.prefix for t in turns] == [(10 + 3, 10), (40 + 3 * 3 + 50 * 2, 40)]


def test_job_reports_the_framing_it_used(tmp_path: Path) -> None:
    usage = usage_report(write_session(tmp_path / "s.jsonl", placeholder))
    assert usage["framing"] == {
        "message": calibration.FRAMING_MESSAGE,
        "tool_block": calibration.FRAMING_TOOL_BLOCK,
    }


def test_unframed_billing_does_not_fit_slope_one(tmp_path: Path) -> None:
    # Billed exactly as content alone: the job's framed prefix must then be off the line, which
    # it would not be if the framing were dropped (or equal the framed line if double-counted).
    content = prefixes(write_session(tmp_path / "draft.jsonl", placeholder), "calibrated", NO_FRAMING)
    session = write_session(tmp_path / "s.jsonl", billed_from(content))
    fit = usage_report(session)["fits"]["calibrated"]
    assert fit["slope"] < SLOPE - 0.05
