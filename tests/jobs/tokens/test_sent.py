"""`auto`'s fit over what was sent: epochs between steps, messages as Claude Code sends them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pipeline.core.topology.select import AUTO
from pipeline.estimate import family_calibration
from pipeline.estimate.families import ModelFamily
from pipeline.jobs.front import Analysis, open_session
from pipeline.jobs.tokens.job import sent_turns, tokens_session
from pipeline.jobs.tokens.sent import (
    STEP_TOKENS,
    SentTurn,
    UsageConvention,
    family_framing,
    fit_sent,
    prompt_of,
    usage_convention,
)
from pipeline.jobs.tokens.usage import fit_line
from pipeline.proof.claude_code.expected import NO_RESPONSE, expected_context
from pipeline.testing import TranscriptBuilder, as_json
from pipeline.testing.settings import LIMITS, tokens_options

CONSTANT = 15_000  # the system prompt and tools the file does not hold
SLOPE = 1.15
CLEARED = 30_000  # tokens of old tool results Claude Code stopped sending
SONNET, DEEPSEEK = "claude-sonnet-4-5-20250929", "deepseek-chat"


def turns(estimates: list[int], billed: list[int], starts: tuple[int, ...] = (0,)) -> list[SentTurn]:
    return [
        SentTurn(n, y, ModelFamily.CLAUDE, x, 0, 0, n in starts)
        for n, (x, y) in enumerate(zip(estimates, billed, strict=True))
    ]


def test_a_clearing_drop_is_a_step_and_the_slope_survives_it() -> None:
    estimates = [2_000 + 3_000 * n for n in range(12)]
    billed = [round(CONSTANT + SLOPE * (x - (CLEARED if n >= 7 else 0))) for n, x in enumerate(estimates)]
    fitted = fit_sent(turns(estimates, billed), "auto")
    assert fitted is not None
    assert (fitted.epochs, fitted.steps) == (2, 1)
    assert fitted.usage.fit.slope == pytest.approx(SLOPE, abs=1e-3)
    assert fitted.usage.fit.constant == pytest.approx(CONSTANT, abs=2)
    plain = fit_line([float(x) for x in estimates], [float(y) for y in billed])
    assert plain is not None and abs(plain.slope - SLOPE) > 0.3  # the raw chain's fit is misled


def test_wobbles_below_the_step_bound_stay_in_one_epoch() -> None:
    estimates = [2_000 + 3_000 * n for n in range(10)]
    wobble = STEP_TOKENS // 10
    billed = [round(CONSTANT + SLOPE * x) + (wobble if n % 2 else -wobble) for n, x in enumerate(estimates)]
    fitted = fit_sent(turns(estimates, billed), "auto")
    assert fitted is not None and (fitted.epochs, fitted.steps) == (1, 0)


def test_a_new_segment_or_family_starts_an_epoch_without_a_step() -> None:
    estimates = [1_000 * n for n in range(8)]
    billed = [CONSTANT + x if n < 4 else 2 * CONSTANT + x for n, x in enumerate(estimates)]
    fitted = fit_sent(turns(estimates, billed, starts=(0, 4)), "auto")
    assert fitted is not None and (fitted.epochs, fitted.steps) == (2, 0)
    assert fitted.usage.fit.slope == pytest.approx(1.0)


def test_epochs_of_one_turn_leave_too_few_points() -> None:
    estimates = [1_000, 50_000, 100_000, 150_000]
    billed = [CONSTANT, 200_000, 10_000, 300_000]  # every turn a step
    assert fit_sent(turns(estimates, billed), "auto") is None


def test_families_without_a_fit_take_the_fallback_framing() -> None:
    fallback = family_calibration.FAMILY_FRAMING[family_calibration.FALLBACK_FAMILY]
    assert family_framing(ModelFamily.GLM) == fallback
    assert family_framing(ModelFamily.CLAUDE) == family_calibration.FAMILY_FRAMING["claude"]


def parallel_session(
    path: Path, usage_for: Callable[[int], dict[str, Any]], models: list[str], *, lines: int = 40
) -> Path:
    """Rounds of one streamed message whose two calls are written call, result, call, result."""
    b = TranscriptBuilder(seed=21, version="2.1.39")
    b.user("The importer drops rows with unicode names; find where and fix it.")
    for turn, model in enumerate(models):
        message = b.assistant(
            b.text(f"Looking at step {turn}."), model=model, usage=usage_for(turn), tool_follows=True
        )
        for name in ("Read", "Grep"):  # every fragment names the model, as Claude Code writes them
            call = b.tool_use(name, {"file_path": f"/src/import_{turn}.py"})
            b.assistant(call, message_id=message.message_id, model=model, tool_follows=True)
            b.tool_result(call["id"], f"{turn}: row = decode(name)\n" * lines)
        b.user(f"Also check the {turn}th fixture.")
    b.assistant(b.text("Fixed: names are decoded once."), model=models[-1], usage=usage_for(len(models)))
    return b.write(path)


def placeholder(turn: int) -> dict[str, Any]:
    return {"input_tokens": 1, "output_tokens": 1}


def analysis_of(path: Path) -> Analysis:
    analysis = open_session(path, path.name, AUTO, command="tokens", per_code=1, limits=LIMITS)
    assert isinstance(analysis, Analysis)
    return analysis


def test_messages_are_counted_as_claude_code_sends_them(tmp_path: Path) -> None:
    path = parallel_session(tmp_path / "s.jsonl", placeholder, [SONNET] * 3)
    analysis = analysis_of(path)
    last = sent_turns(analysis)[-1]
    chain = analysis.topology.chain
    before = tuple(line for line in chain if line < last.line)
    blocks = [
        b for b in expected_context(analysis.source.data, analysis.index, before) if b.text != NO_RESPONSE
    ]
    runs = sum(1 for i, block in enumerate(blocks) if i == 0 or blocks[i - 1].role != block.role)
    assert last.messages == runs
    assert last.messages < sum(
        1 for line in before if analysis.index.entry(line).type in ("user", "assistant")
    )


def usage_report(path: Path, estimators: str) -> dict[str, Any]:
    tokens: dict[str, Any] = as_json(tokens_session(path, path.name, tokens_options(estimators=estimators)))[
        "tokens"
    ]
    return tokens


def billed_after(
    draft: Path, drop_from: int | None = None, *, inclusive: bool = False
) -> Callable[[int], dict[str, Any]]:
    estimates = [turn.estimate for turn in sent_turns(analysis_of(draft))]

    # Claude Code clears old results: half of what was sent when the drop comes, from then on.
    cleared_tokens = estimates[drop_from] // 2 if drop_from is not None else 0
    assert cleared_tokens > 2 * STEP_TOKENS or drop_from is None

    def usage(turn: int) -> dict[str, Any]:
        cleared = cleared_tokens if drop_from is not None and turn >= drop_from else 0
        billed = round(CONSTANT + SLOPE * (estimates[turn] - cleared))
        if inclusive:  # an endpoint that counts the cached part in the input too
            return {"input_tokens": billed, "cache_read_input_tokens": billed * 9 // 10, "output_tokens": 5}
        return {"input_tokens": 3, "cache_read_input_tokens": billed - 3, "output_tokens": 5}

    return usage


@pytest.mark.parametrize("drop_from", [None, 5])
def test_auto_recovers_the_billed_slope_over_what_was_sent(tmp_path: Path, drop_from: int | None) -> None:
    models = [SONNET] * 8
    draft = parallel_session(tmp_path / "draft.jsonl", placeholder, models, lines=400)
    session = parallel_session(tmp_path / "s.jsonl", billed_after(draft, drop_from), models, lines=400)
    tokens = usage_report(session, "claude-legacy,auto")
    fit, sent = tokens["usage"]["fits"]["auto"], tokens["usage"]["sent"]
    assert fit["slope"] == pytest.approx(SLOPE, abs=2e-3)
    assert sent["steps"] == (1 if drop_from is not None else 0)
    assert sent["family_calibration_version"] == family_calibration.FAMILY_CALIBRATION_VERSION
    assert tokens["models"]["family"] == "claude" and tokens["models"]["switches"] == 0
    if drop_from is not None:  # the raw chain's fit cannot see what was cleared
        assert abs(tokens["usage"]["fits"]["claude-legacy"]["slope"] - SLOPE) > 0.1


def test_a_model_switch_is_a_family_change_counted_with_the_new_tokenizer(tmp_path: Path) -> None:
    models = [SONNET] * 3 + [DEEPSEEK] * 5
    draft = parallel_session(tmp_path / "draft.jsonl", placeholder, models)
    session = parallel_session(tmp_path / "s.jsonl", billed_after(draft), models)
    tokens = usage_report(session, "claude-legacy,deepseek,auto")
    models_section = tokens["models"]
    assert models_section["family"] == "deepseek"  # most billed turns
    assert models_section["families"] == {"claude": 3, "deepseek": 6}
    assert models_section["switches"] == 1
    assert set(tokens["usage"]["sent"]["framing"]) == {"claude", "deepseek"}
    assert tokens["usage"]["fits"]["auto"]["slope"] == pytest.approx(SLOPE, abs=2e-3)
    whole = tokens["session"]
    assert (
        min(whole["claude-legacy"], whole["deepseek"])
        < whole["auto"]
        < max(whole["claude-legacy"], whole["deepseek"])
    )


def test_without_auto_the_report_gains_only_the_family(tmp_path: Path) -> None:
    path = parallel_session(
        tmp_path / "s.jsonl", lambda turn: {"input_tokens": 900 * (turn + 10)}, [SONNET] * 4
    )
    tokens = usage_report(path, "seed,calibrated")
    assert "sent" not in tokens["usage"] and "auto" not in tokens["usage"]["fits"]
    assert tokens["models"]["family"] == "claude"
    assert tokens["models"]["models"] == {SONNET: 5}


def test_billed_turns_without_a_model_name_the_unknown_family(tmp_path: Path) -> None:
    b = TranscriptBuilder(seed=4, version="2.1.39")
    b.user("hi")
    for turn in range(4):
        b.assistant(b.text(f"step {turn}"), usage={"input_tokens": 1000 + 10 * turn})
        b.user(f"next {turn}")
    path = b.write(tmp_path / "s.jsonl")
    text = path.read_text()
    path.write_text(text.replace('"model":"claude-', '"modelX":"claude-'))
    tokens = usage_report(path, "calibrated,auto")
    assert tokens["usage"]["turns"] == 4
    assert tokens["models"]["family"] == "unknown"


@pytest.mark.parametrize(
    ("parts", "convention"),
    [
        ([(3, 0, 20_000), (5, 900, 20_100), (2, 0, 21_000)], UsageConvention.ANTHROPIC),
        ([(20_000, 0, 18_000), (21_000, 0, 20_000), (22_500, 0, 21_000)], UsageConvention.INCLUSIVE),
        ([(20_000, 0, 18_000), (21_000, 0, 20_000)], UsageConvention.ANTHROPIC),  # too few to tell
        ([(30_000, 0, 0), (31_000, 0, 0), (32_000, 0, 0)], UsageConvention.ANTHROPIC),  # no cache read
    ],
)
def test_the_usage_convention_is_read_from_the_turns(
    parts: list[tuple[int, int, int]], convention: UsageConvention
) -> None:
    assert usage_convention(parts) is convention


def test_an_inclusive_input_is_not_counted_twice() -> None:
    assert prompt_of((20_000, 0, 18_000), UsageConvention.INCLUSIVE) == 20_000
    assert prompt_of((3, 100, 18_000), UsageConvention.ANTHROPIC) == 18_103


def test_auto_reads_an_inclusive_endpoint_s_bills_once(tmp_path: Path) -> None:
    models = [DEEPSEEK] * 8
    draft = parallel_session(tmp_path / "draft.jsonl", placeholder, models)
    session = parallel_session(tmp_path / "s.jsonl", billed_after(draft, inclusive=True), models)
    tokens = usage_report(session, "deepseek,auto")
    assert tokens["usage"]["sent"]["usage_convention"] == {"deepseek": "inclusive"}
    assert tokens["usage"]["fits"]["auto"]["slope"] == pytest.approx(SLOPE, abs=2e-3)
    assert tokens["usage"]["fits"]["deepseek"]["slope"] > 1.5 * SLOPE  # the raw sum counts the cache twice


def plan_mode_session(path: Path, version: str) -> Path:
    """A prompt in plan mode, three Reads and a plan file written, then an approved exit."""
    b = TranscriptBuilder(seed=9, version=version)
    b.user("Plan the tar support first.")
    for n in range(3):
        b.tool_call("Read", {"file_path": f"/src/m{n}.py"}, "     1→import zipfile")
    b.tool_call("Write", {"file_path": "/home/dev/.claude/plans/p.md", "content": "# Plan"}, "File created")
    b.tool_call("ExitPlanMode", {}, "User has approved your plan. You can now start coding.")
    b.tool_call("Read", {"file_path": "/src/main.py"}, "     1→import tarfile")
    path.write_bytes(b.to_bytes())
    return path


def test_plan_mode_reminders_no_line_records_join_the_sent_context_and_stay(tmp_path: Path) -> None:
    def estimates(version: str) -> list[int]:
        path = plan_mode_session(tmp_path / f"{version}.jsonl", version)
        analysis = open_session(path, path.name, AUTO, command="tokens", per_code=1, limits=LIMITS)
        assert isinstance(analysis, Analysis)
        return [turn.estimate for turn in sent_turns(analysis)]

    recorded, unrecorded = estimates("2.0.20"), estimates("2.0.55")  # no reminder read before 2.0.26
    added = [b - a for a, b in zip(recorded, unrecorded, strict=True)]
    assert added[0] > 500  # the reminder sent with the first request
    assert added == [added[0] * min(n + 1, 5) for n in range(len(added))]  # five requests in plan mode
