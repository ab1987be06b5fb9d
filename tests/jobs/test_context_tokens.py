"""`tokens` of Codex rollouts: by content class and tool, in the file and in the resumed context,
by Codex's estimate and o200k, with the billed truth of Codex's own token_count events."""

from __future__ import annotations

from pathlib import Path

from pipeline.jobs.tokens.job import tokens_session
from pipeline.report.documents import Counted
from pipeline.testing import as_json
from pipeline.testing.settings import tokens_options
from tests.support.rollout_builder import RolloutBuilder


def _tokens(tmp_path: Path, b: RolloutBuilder) -> dict:  # type: ignore[type-arg]
    path = b.write(tmp_path / "rollout.jsonl")
    outcome = tokens_session(path, path.name, tokens_options())
    assert isinstance(outcome, Counted)
    return as_json(outcome)["tokens"]


def test_classes_by_tool_scopes_and_the_billed_truth(tmp_path: Path) -> None:
    b = RolloutBuilder(seed=31)
    b.item(b.message("developer", "<permissions instructions>never ask</permissions instructions>"))
    b.exchange("first task", tools=2, output_bytes=400)
    b.turn("second task")
    b.compacted("summary", [b.message("user", "second task")])
    b.tool("apply_patch", {"input": "*** Begin Patch"}, "Success")
    b.tokens(9000, cached=4000, output=300, reasoning=100)
    tokens = _tokens(tmp_path, b)
    assert tokens["estimators"] == ["codex-approx", "o200k"] and tokens["unavailable"] == {}
    classes = tokens["classes"]
    assert set(classes) == {"assistant", "context", "human", "reasoning", "tool_result", "tool_use"}
    assert classes["tool_use"]["names"]["exec_command"]["items"] == 2
    assert classes["tool_result"]["names"]["exec_command"]["context_items"] == 0  # summarized away
    assert classes["tool_result"]["names"]["apply_patch"]["context_items"] == 1
    assert classes["human"]["items"] == 3 and classes["human"]["context_items"] == 1
    for estimator in tokens["estimators"]:
        assert tokens["context"][estimator] < tokens["session"][estimator]
        assert tokens["session"][estimator] == sum(c["session"][estimator] for c in classes.values())
    billed = tokens["billed"]
    assert billed["events"] == 2 and billed["last_input"] == 9000
    assert (billed["input"], billed["cached_input"], billed["output"], billed["reasoning_output"]) == (
        9000,
        4000,
        300,
        100,
    )


def test_o200k_counts_text_not_encrypted_reasoning(tmp_path: Path) -> None:
    b = RolloutBuilder(seed=32)
    b.turn("hello")
    b.item(
        {"type": "reasoning", "summary": [], "content": None, "encrypted_content": "gAAAA" + "Zm9v" * 5000}
    )
    tokens = _tokens(tmp_path, b)
    reasoning = tokens["classes"]["reasoning"]["context"]
    assert reasoning["o200k"] == 0 and reasoning["codex-approx"] > 5000


def test_every_corpus_rollout_is_counted(codex_files: Path) -> None:
    for path in sorted(codex_files.glob("*.jsonl")):
        outcome = tokens_session(path, path.name, tokens_options())
        assert isinstance(outcome, Counted), path.name
        tokens = as_json(outcome)["tokens"]
        # A sent reasoning item gains the `content: null` Codex writes: a few tokens over the file.
        assert (
            tokens["session"]["o200k"] > 0
            and tokens["context"]["codex-approx"] <= tokens["session"]["codex-approx"] + 100
        )


def _growing(tmp_path: Path, per_token: float) -> dict:  # type: ignore[type-arg]
    """A rollout whose bills grow by `per_token` for each token of tool output sent before them."""
    b = RolloutBuilder(seed=33)
    sent = 0
    for step in range(6):
        b.turn(f"task {step}")
        call_id = b.call("exec_command", {"cmd": "cat log"})
        b.tokens(5000 + round(per_token * sent))
        b.output(call_id, " hello" * 3000)  # 3,000 o200k tokens
        sent += 3000
    return _tokens(tmp_path, b)


def test_the_real_tokenizer_is_held_to_the_bills_request_by_request(tmp_path: Path) -> None:
    for per_token in (1.0, 1.5):
        fitted = _growing(tmp_path, per_token)["billed_fit"]
        assert fitted["fit"]["estimator"] == "o200k" and fitted["fit"]["turns"] == 6
        assert fitted["epochs"] == 1 and fitted["steps"] == 0
        # the prompts, calls and framing the steps add besides the output are 2% of what they add
        assert abs(fitted["fit"]["slope"] - per_token) < 0.03 * per_token


def test_fewer_than_three_bills_give_no_fit(tmp_path: Path) -> None:
    b = RolloutBuilder(seed=34)
    b.exchange("only task", tools=1)
    assert "billed_fit" not in _tokens(tmp_path, b)


def test_the_corpus_rollouts_report_auto_within_five_percent_at_the_median(codex_files: Path) -> None:
    errors = []
    for path in sorted(codex_files.glob("*.jsonl")):
        tokens = as_json(tokens_session(path, path.name, tokens_options()))["tokens"]
        if "billed_fit" in tokens:
            errors.append(abs(tokens["billed_fit"]["fit"]["slope_error"]))
    assert len(errors) == 14  # all but the 0.2x layout, which no current Codex reads
    assert sorted(errors)[len(errors) // 2] <= 0.05
