"""`compress --in-place --summarizer openai|anthropic`: the nightly run with model summaries, real
HTTP to the local provider server, the same transaction, backups and state as the embedded run."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from pipeline.testing.invoke import compaction
from pipeline.testing.provider_server import Answer, Behavior, ProviderServer
from tests.cli.conftest import SMALL, committed, originals, sha

KEYS = {"ANTHROPIC_API_KEY": "local-key", "OPENAI_API_KEY": "local-key"}  # what the local server takes


def _model_night(
    fleet: Path, tmp: Path, server: ProviderServer, *extra: str, reports: str = "r1", provider: str = "openai"
) -> tuple[int, dict[str, Any], str]:
    config = tmp / "model.toml"
    config.write_text("[model_summary]\nbackoff_initial_seconds = 0.01\nmax_attempts = 2\n")
    base = server.base_url + ("/v1" if provider == "openai" else "")
    done = compaction(
        "compress", str(fleet), "--in-place", "--state-dir", str(tmp / "state"), "--report-dir",
        str(tmp / reports), "--jobs", "2", "--quiet", *SMALL, "--no-verify-resume", "--summarizer", provider,
        "--base-url", base, "--config", str(config), *extra, env=KEYS,
    )  # fmt: skip
    summary_path = tmp / reports / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    return done.returncode, summary, done.stderr + done.stdout


def _reports(directory: Path) -> dict[str, dict[str, Any]]:
    return {p.name: json.loads(p.read_text()) for p in sorted(directory.rglob("*.report.json"))}


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_nightly_run_replaces_sessions_with_grounded_model_summaries_and_restores_byte_exact(
    idle_fleet: Path, tmp_path: Path, provider: str
) -> None:
    started = datetime.now(UTC) - timedelta(seconds=2)
    before = originals(idle_fleet)
    with ProviderServer() as server:
        code, summary, output = _model_night(
            idle_fleet, tmp_path, server, "--model", "local-model", provider=provider
        )
        calls, bill = len(server.requests), server.bill()
    assert code == 0, output
    assert committed(summary) >= 3 and calls >= committed(summary), (calls, summary["in_place"])
    spend = summary["model_spend"]  # the night's model bill, equal to what the server billed
    assert (spend["calls"], spend["billed_input_tokens"], spend["billed_output_tokens"]) == (
        bill.requests,
        bill.input_tokens,
        bill.output_tokens,
    )
    assert (spend["cache_read_tokens"], spend["cache_write_tokens"]) == (
        bill.cache_read_tokens,
        bill.cache_write_tokens,
    )
    assert (spend["cache_write_tokens"] > 0) is (provider == "anthropic") and spend[
        "cost_usd"
    ] is None  # unpriced
    compressed = [r for r in _reports(tmp_path / "r1").values() if r["status"] == "compressed"]
    assert len(compressed) == committed(summary)
    for report in compressed:
        writer = report["summary"]["writer"]
        assert writer["provider"] == provider and writer["model"] == "local-model" and writer["calls"] >= 1
        assert report["in_place"]["disposition"] == "committed"
    replaced = [path for path, data in before.items() if path.read_bytes() != data]
    assert len(replaced) == committed(summary)
    done = compaction(
        "restore", "--all-since", started.isoformat(), str(idle_fleet), "--state-dir", str(tmp_path / "state"),
        "--quiet",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert {p: sha(d) for p, d in originals(idle_fleet).items()} == {p: sha(d) for p, d in before.items()}


def test_a_changed_model_rebuilds_the_declined_sessions_only(idle_fleet: Path, tmp_path: Path) -> None:
    def chooser(number: int) -> Answer | None:  # one build at a time: the first session's call and repair
        return Answer.of(Behavior.BROKEN_STRUCTURE) if number <= 2 else None

    with ProviderServer(chooser=chooser) as server:
        code, first, output = _model_night(idle_fleet, tmp_path, server, "--model", "model-a", "--jobs", "1")
    assert code in (0, 1), output
    declined = first["in_place"]["by_disposition"].get("declined", 0)
    refused = [r for r in _reports(tmp_path / "r1").values() if r["status"] == "refused"]
    assert refused and all(r["reasons"] == ["summary-grounding-failed"] for r in refused)
    with ProviderServer() as server:
        _, same, output = _model_night(idle_fleet, tmp_path, server, "--model", "model-a", reports="r2")
        assert same["in_place"]["built"] == 0 and not server.requests, same["in_place"]
        code, other, output = _model_night(idle_fleet, tmp_path, server, "--model", "model-b", reports="r3")
    assert code == 0, output
    totals = other["in_place"]
    assert totals["built"] == declined  # the committed ones stay as published, the declined are retried
    assert totals["by_disposition"]["skipped-unchanged-output"] == committed(first)
    assert committed(other) == len(refused)  # the refused ones now got a grounded summary


def test_a_provider_that_keeps_failing_declines_nothing_for_good(idle_fleet: Path, tmp_path: Path) -> None:
    before = originals(idle_fleet)
    with ProviderServer(chooser=lambda number: Answer.error(500)) as server:
        code, summary, output = _model_night(idle_fleet, tmp_path, server)
    assert code == 1, output
    assert originals(idle_fleet) == before and committed(summary) == 0
    failed = [r for r in _reports(tmp_path / "r1").values() if r["status"] == "refused"]
    assert failed and all(r["reasons"] == ["summary-provider-failure"] for r in failed)
    with ProviderServer() as server:
        code, again, output = _model_night(idle_fleet, tmp_path, server, reports="r2")
    assert code == 0, output
    assert committed(again) == len(failed)  # not recorded as final: the next night took them again


def test_the_run_token_budget_holds_across_the_in_place_builds(idle_fleet: Path, tmp_path: Path) -> None:
    limit = 24000  # a few sessions' calls, reserved at their worst case before each is sent
    with ProviderServer() as server:
        code, summary, output = _model_night(idle_fleet, tmp_path, server, "--max-run-tokens", str(limit))
        billed = sum(request.billed_tokens for request in server.requests)
    assert code == 0, output
    budget = [r for r in _reports(tmp_path / "r1").values() if r["status"] == "skipped-run-budget"]
    assert committed(summary) >= 1 and budget, summary["in_place"]["by_disposition"]
    assert billed <= limit and all(r["in_place"]["disposition"] == "declined" for r in budget)
    with ProviderServer() as server:
        code, again, output = _model_night(idle_fleet, tmp_path, server, reports="r2")
    assert code == 0 and committed(again) == len(budget), output  # the run's budget, not the session's


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("--summarizer", "openai", "--cluster", "local:2"), "leave out --cluster"),
        (("--summarizer", "anthropic"), "ANTHROPIC_API_KEY"),
    ],
)
def test_a_model_run_that_cannot_be_done_in_place_is_one_line_and_exit_2(
    idle_fleet: Path, tmp_path: Path, arguments: tuple[str, ...], message: str
) -> None:
    before = originals(idle_fleet)
    done = compaction(
        "compress", str(idle_fleet), "--in-place", "--state-dir", str(tmp_path / "state"), "--quiet",
        "--no-verify-resume", *arguments, env={"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "local"},
    )  # fmt: skip
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert originals(idle_fleet) == before
