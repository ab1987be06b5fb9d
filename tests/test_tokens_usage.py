"""Billed usage as ground truth: the per-session fit recovers a known constant and slope."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pipeline.analysis import Analysis, analyze
from pipeline.testing import TranscriptBuilder
from pipeline.tokens.classes import split_lines
from pipeline.tokens.estimators import EstimatorName
from pipeline.tokens.job import SEED_RECORD, TokensOptions, piece_counter, tokens_session
from pipeline.tokens.usage import MIN_TURNS, TurnSample, collect_turns, fit_line, fit_usage, usage_segments

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
    outcome = tokens_session(path, path.name, TokensOptions(estimators=estimators))
    return outcome.report["tokens"]["usage"]


def prefixes(path: Path, estimator: str) -> list[int]:
    """Each turn's prefix estimate, as the job computes it (content estimates do not see usage)."""
    analysis = analyze(path, path.name, TokensOptions().topology(), command="tokens")
    assert isinstance(analysis, Analysis)
    counts = piece_counter((EstimatorName(estimator),))
    estimates: dict[int, tuple[int, ...]] = {}
    billed: dict[int, int] = {}
    for line in split_lines(analysis.source.data, analysis.index):
        if line.api:
            estimates[line.line] = (sum(counts(p)[0] for p in line.pieces),)
        if line.billed_prompt:
            billed[line.line] = line.billed_prompt
    segments = usage_segments(analysis.index, analysis.graph, analysis.topology.chain)
    turns = collect_turns(analysis.index, segments, estimates, billed, 1)
    return [turn.prefix[0] for turn in turns]


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
    assert fits["b"].to_report()["constant"] == pytest.approx(1000)
