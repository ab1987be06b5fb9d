"""`compress --summarizer openai|anthropic` end to end: the real command line, real HTTP to the
local provider server, one limiter for the run, typed failures and the deterministic fallback."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
from pathlib import Path

import pytest

from pipeline.testing.invoke import compaction, compaction_command, reports
from pipeline.testing.provider_server import Answer, Behavior, ProviderServer
from pipeline.testing.sessions import build_session

SECRET = "sk-ant-api03-" + "Q" * 80 + "-AAAAAAAA"  # a planted key the pack must never send


def _fleet(root: Path, count: int) -> None:
    for seed in range(count):
        path = root / "project" / f"s{seed}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        build_session(path, turns=6, seed=seed)
        data = path.read_bytes().replace(
            b"pytest tests/test_step_0_0.py -q", f"export KEY={SECRET}".encode(), 1
        )
        path.write_bytes(data)


def _compress(
    root: Path, out: Path, server: ProviderServer, *extra: str, config_text: str = ""
) -> tuple[int, list[dict[str, object]]]:
    config = out.parent / f"{out.name}.toml"
    config.write_text(
        "[limits]\nrequests_per_minute = 20\nwindow_seconds = 2.0\n[model_summary]\nbackoff_initial_seconds = 0.01\n"
        + config_text
    )
    done = compaction(
        "compress", str(root), "--out", str(out), "--min-tokens", "0",
        "--summarizer", "openai", "--base-url", server.base_url + "/v1", "--model", "local-model",
        "--config", str(config), "--jobs", "4", "--quiet", *extra,
        env={"OPENAI_API_KEY": ""},
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-2000:]
    return done.returncode, [r for r in reports(out)]


def test_a_fleet_is_summarized_by_the_model_under_one_limiter(tmp_path: Path) -> None:
    _fleet(tmp_path / "root", 6)
    with ProviderServer(chooser=lambda n: Answer.rate_limited(0.05) if n % 3 == 0 else None) as server:
        code, found = _compress(tmp_path / "root", tmp_path / "out", server)
        peak = server.peak(2.0)
        leaked = server.bodies_containing(SECRET)
        limited = sum(request.status == 429 for request in server.requests)
    assert code == 0 and [r["status"] for r in found] == ["compressed"] * 6
    assert peak.requests <= 20  # the run's one limiter held every window, 429s and all
    assert leaked == 0
    for report in found:
        writer = report["summary"]["writer"]  # type: ignore[index]
        assert writer["provider"] == "openai" and writer["model"] == "local-model" and writer["calls"] >= 1
        assert "fallback_from" not in writer
    secrets = sum(r["summary"]["writer"]["redactions"].get("anthropic-key", 0) for r in found)  # type: ignore[index]
    assert secrets >= 1
    # every 429 is a retry and a pause of the run's calls: counted per report and for the run
    writers = [r["summary"]["writer"] for r in found]  # type: ignore[index]
    assert sum(w["rate_limit_pauses"] for w in writers) == limited == sum(w["retries"] for w in writers) > 0
    assert all(w["retry_wait_seconds"] >= 0.05 * w["rate_limit_pauses"] for w in writers)  # retry-after held
    spend = json.loads((tmp_path / "out" / "summary.json").read_bytes())["model_spend"]
    assert (spend["rate_limit_pauses"], spend["retries"], spend["sessions"]) == (limited, limited, 6)


@pytest.mark.parametrize("fallback", [False, True])
def test_a_failed_model_summary_refuses_or_falls_back_and_says_so(tmp_path: Path, fallback: bool) -> None:
    _fleet(tmp_path / "root", 1)
    source = (tmp_path / "root" / "project" / "s0.jsonl").read_bytes()
    extra = ("--on-summary-failure", "deterministic") if fallback else ()
    with ProviderServer(chooser=lambda n: Answer.of(Behavior.BROKEN_STRUCTURE)) as server:
        code, found = _compress(tmp_path / "root", tmp_path / "out", server, *extra)
    (report,) = found
    assert (tmp_path / "root" / "project" / "s0.jsonl").read_bytes() == source  # never touched
    if fallback:
        assert code == 0 and report["status"] == "compressed"
        assert report["summary"]["writer"]["fallback_from"] == "grounding-failed"  # type: ignore[index]
    else:
        assert code == 1 and report["status"] == "refused"
        assert report["reasons"] == ["summary-grounding-failed"]
        assert report["reason_figures"]["summary-grounding-failed"]["defects"] >= 1  # type: ignore[index]
        assert not (tmp_path / "out" / "root" / "project" / "s0.jsonl").exists()
    # either way the report says which defects sank the model's summary, and what it cost
    writer = report["summary"]["writer"] if fallback else report["model_failure"]  # type: ignore[index]
    grounding = writer["grounding"]
    assert grounding["repair"] == "still-defective" and grounding["repaired_defects"] >= 1
    assert {"code": "structure", "detail": "missing-heading", "section": "Goal"} in [
        {key: entry[key] for key in ("code", "detail", "section") if key in entry}
        for entry in grounding["repaired_listed"]
    ]
    assert writer["calls"] == 2 and writer["billed_input_tokens"] > 0
    assert "it went well" not in json.dumps(report)  # codes and anchors, never the answer's text


def test_a_missing_key_stops_before_any_work(tmp_path: Path) -> None:
    _fleet(tmp_path / "root", 1)
    done = compaction(
        "compress", str(tmp_path / "root"), "--out", str(tmp_path / "out"), "--summarizer", "anthropic",
        "--quiet", env={"ANTHROPIC_API_KEY": ""},
    )  # fmt: skip
    assert done.returncode == 2 and "ANTHROPIC_API_KEY" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()
    assert json.dumps(done.stderr).count("\\n") <= 2  # one line


@pytest.mark.claude_code
def test_model_written_summaries_pass_the_resume_gate_and_the_contract(
    tmp_path: Path, claude_code: Path
) -> None:
    _fleet(tmp_path / "root", 2)
    with ProviderServer() as server:
        code, found = _compress(
            tmp_path / "root", tmp_path / "out", server, "--verify-resume", "--claude", str(claude_code)
        )
    assert code == 0 and [r["status"] for r in found] == ["compressed", "compressed"]
    for report in found:
        assert report["resume_check"]["verdict"] == "match", report["resume_check"]  # type: ignore[index]
        assert report["checks"]["violations"] == []  # type: ignore[index]


@pytest.mark.parametrize("jobs", ["1", "4"])
def test_the_run_token_budget_is_never_overspent_however_many_sessions_call_at_once(
    tmp_path: Path, jobs: str
) -> None:
    _fleet(tmp_path / "root", 8)
    limit = 20000  # a call reserves its input estimate and its 1000-token output bound first
    with ProviderServer(chooser=lambda n: Answer.of(Behavior.BROKEN_STRUCTURE) if n == 1 else None) as server:
        code, found = _compress(
            tmp_path / "root", tmp_path / "out", server, "--max-run-tokens", str(limit), "--jobs", jobs,
            "--model-max-output", "1000",
        )  # fmt: skip
        billed = sum(request.billed_tokens for request in server.requests)
    statuses = sorted(r["status"] for r in found)
    assert code == 0 and "compressed" in statuses and "skipped-run-budget" in statuses, statuses
    assert billed <= limit  # exact: no call was sent whose worst case did not fit what was left
    skipped = [r for r in found if r["status"] == "skipped-run-budget"]
    assert all(r["reasons"] == ["run-token-budget-reached"] for r in skipped)
    spent = sum(r["summary"]["writer"]["billed_input_tokens"] + r["summary"]["writer"]["billed_output_tokens"]
                for r in found if r["status"] == "compressed")  # fmt: skip
    assert spent <= billed  # the broken first answer was billed too, and counted against the run


def test_a_budget_smaller_than_one_call_sends_nothing(tmp_path: Path) -> None:
    _fleet(tmp_path / "root", 2)
    with ProviderServer() as server:
        code, found = _compress(tmp_path / "root", tmp_path / "out", server, "--max-run-tokens", "1")
        calls = len(server.requests)
    assert code == 0 and calls == 0
    assert [r["status"] for r in found] == ["skipped-run-budget", "skipped-run-budget"]


def test_reported_cost_and_cached_tokens_are_what_the_server_billed(tmp_path: Path) -> None:
    _fleet(tmp_path / "root", 3)
    priced = 'cache_read_price_share = 0.25\n[prices]\n"local-model" = [0.4, 1.6]\n'  # under [model_summary]
    # each session's first answer is ungrounded: its repair call repeats the cached prefix
    with ProviderServer(
        chooser=lambda n: Answer.of(Behavior.UNSUPPORTED_CLAIMS) if n % 2 and n <= 5 else None
    ) as server:
        code, found = _compress(
            tmp_path / "root", tmp_path / "out", server, "--jobs", "1", config_text=priced
        )
        bill = server.bill()
    assert code == 0 and [r["status"] for r in found] == ["compressed"] * 3
    spend = json.loads((tmp_path / "out" / "summary.json").read_bytes())["model_spend"]
    assert (spend["sessions"], spend["calls"], spend["repairs"]) == (3, bill.requests, 3)
    assert (spend["billed_input_tokens"], spend["billed_output_tokens"]) == (
        bill.input_tokens,
        bill.output_tokens,
    )
    assert spend["cache_read_tokens"] == bill.cache_read_tokens > 0 and spend["cache_write_tokens"] == 0
    assert spend["cost_usd"] == pytest.approx(bill.cost(0.4, 1.6, 0.25, 1.25), abs=1e-6)
    per_report = [r["summary"]["writer"] for r in found]  # type: ignore[index]
    assert sum(w["cache_read_tokens"] for w in per_report) == spend["cache_read_tokens"]
    assert sum(w["cost_usd"] for w in per_report) == pytest.approx(spend["cost_usd"], abs=1e-6)


def test_the_progress_line_shows_retries_and_rate_limit_pauses_and_the_table_the_bill(tmp_path: Path) -> None:
    _fleet(tmp_path / "root", 3)
    config = tmp_path / "c.toml"
    config.write_text("[model_summary]\nbackoff_initial_seconds = 0.01\n")
    leader, follower = pty.openpty()  # an interactive stderr: the live bar is drawn
    with ProviderServer(chooser=lambda n: Answer.rate_limited(0.05) if n == 1 else None) as server:
        command = [
            *compaction_command(), "compress", str(tmp_path / "root"), "--out", str(tmp_path / "out"),
            "--min-tokens", "0", "--summarizer", "openai", "--base-url", server.base_url + "/v1",
            "--model", "local-model", "--config", str(config), "--jobs", "1",
        ]  # fmt: skip
        env = {**os.environ, "OPENAI_API_KEY": "", "TERM": "xterm", "COLUMNS": "200"}
        done = subprocess.run(
            command, stderr=follower, stdout=subprocess.PIPE, env=env, timeout=300, check=False
        )
    os.close(follower)
    drawn = b""
    while select.select([leader], [], [], 0.2)[0]:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        drawn += chunk
    os.close(leader)
    assert done.returncode == 0
    assert b"1 retries, 1 rate-limit pauses" in drawn
    table = " ".join(done.stdout.decode().split())  # the console wraps at its width
    assert "model: 3 calls for 3 sessions (1 retries, 1 rate-limit pauses" in table, table
    assert "cache read" in table and "cost not priced" in table


def test_a_summary_written_but_not_worth_using_is_still_billed_in_its_report(tmp_path: Path) -> None:
    _fleet(tmp_path / "root", 1)
    with ProviderServer() as server:
        code, found = _compress(
            tmp_path / "root", tmp_path / "out", server, config_text="[compress]\nmin_gain = 0.99\n"
        )
        bill = server.bill()
    assert code == 0 and [r["status"] for r in found] == ["skipped-low-gain"] and bill.requests >= 1
    writer = found[0]["summary"]["writer"]  # type: ignore[index]
    assert (writer["calls"], writer["billed_input_tokens"]) == (bill.requests, bill.input_tokens)
    spend = json.loads((tmp_path / "out" / "summary.json").read_bytes())["model_spend"]
    assert spend["calls"] == bill.requests and spend["billed_output_tokens"] == bill.output_tokens
