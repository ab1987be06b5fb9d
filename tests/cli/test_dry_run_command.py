"""`compress --dry-run`: the model summaries a run would need, predicted without calling anyone
or writing any candidate, per session and for the fleet."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from pipeline.testing.invoke import compaction, reports
from pipeline.testing.provider_server import ProviderServer
from pipeline.testing.sessions import build_session
from tests.support.rollout_builder import RolloutBuilder


def _fleet(root: Path, sizes: tuple[int, ...]) -> dict[Path, bytes]:
    sources = {}
    for seed, turns in enumerate(sizes):
        path = root / "project" / f"s{seed}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        build_session(path, turns=turns, seed=seed)
        sources[path] = path.read_bytes()
    return sources


def _dry_run(root: Path, out: Path) -> tuple[subprocess.CompletedProcess[str], int]:
    """`compress --dry-run` of `root` with an OpenAI-compatible model, and the requests it served."""
    with ProviderServer() as server:
        done = compaction(
            "compress", str(root), "--out", str(out), "--min-tokens", "0",
            "--summarizer", "openai", "--base-url", server.base_url + "/v1", "--model", "local-model",
            "--dry-run", env={"OPENAI_API_KEY": ""},
        )  # fmt: skip
        return done, len(server.requests)


def test_a_dry_run_plans_every_session_and_totals_them_without_a_call(tmp_path: Path) -> None:
    sources = _fleet(tmp_path / "root", (4, 8, 16))
    out = tmp_path / "out"
    done, served = _dry_run(tmp_path / "root", out)
    assert done.returncode == 0, done.stderr[-2000:]
    assert served == 0  # a plan, not a run
    assert all(path.read_bytes() == data for path, data in sources.items())
    assert not list(out.rglob("*.jsonl"))  # no candidate written
    found = list(reports(out))
    assert [r["status"] for r in found] == ["planned"] * 3
    plans = [r["model_plan"] for r in found]
    assert all(p["calls"] >= 1 and p["model"] == "local-model" for p in plans)  # type: ignore[index]
    inputs = [p["estimated_input_tokens"] for p in plans]  # type: ignore[index]
    assert inputs == sorted(inputs) and inputs[0] < inputs[-1]  # longer sessions, bigger packs
    fleet = json.loads((out / "summary.json").read_text())["model_plan"]
    assert fleet["sessions"] == 3
    assert fleet["calls"] == sum(p["calls"] for p in plans)  # type: ignore[index]
    assert fleet["estimated_input_tokens"] == sum(inputs)
    total_row = next(line for line in done.stdout.splitlines() if line.lstrip().startswith("all "))
    assert "local-model" in done.stdout and str(sum(inputs)) in total_row  # the table


def test_a_dry_run_of_the_embedded_summarizer_is_a_usage_error(tmp_path: Path) -> None:
    _fleet(tmp_path / "root", (4,))
    done = compaction("compress", str(tmp_path / "root"), "--out", str(tmp_path / "out"), "--dry-run")
    assert done.returncode == 2
    assert "--dry-run plans model summaries" in done.stderr
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").rglob("*.json"))


def test_a_dry_run_of_the_mask_strategy_is_a_usage_error(tmp_path: Path) -> None:
    _fleet(tmp_path / "root", (4,))
    done = compaction(
        "compress", str(tmp_path / "root"), "--out", str(tmp_path / "out"), "--dry-run", "--strategy", "mask",
        "--summarizer", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "local-model",
        env={"OPENAI_API_KEY": ""},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    assert "--strategy mask writes none" in done.stderr and "Traceback" not in done.stderr


def test_a_dry_run_plans_codex_rollouts_beside_claude_code_sessions(tmp_path: Path) -> None:
    _fleet(tmp_path / "root", (8,))
    rollout = RolloutBuilder(seed=3)
    for number in range(12):
        rollout.exchange(f"task {number}: fix module_{number}.py", tools=3, output_bytes=3000)
    (tmp_path / "root" / "codex").mkdir()
    source = rollout.write(tmp_path / "root" / "codex" / "rollout-2026-03-01T12-00-00-x.jsonl")
    data = source.read_bytes()
    out = tmp_path / "out"
    done, served = _dry_run(tmp_path / "root", out)
    assert done.returncode == 0, done.stderr[-2000:]
    assert served == 0 and source.read_bytes() == data and not list(out.rglob("*.jsonl"))
    found = {r["session"]["format"]: r for r in reports(out)}
    planned = found["codex-rollout"]
    assert planned["status"] == "planned", planned
    assert planned["model_plan"]["calls"] >= 1 and planned["cut"]["summarized_items"] > 0
    assert planned["cut"]["kept_items"] > 0  # the tail stays verbatim, only the span before is planned
    fleet = json.loads((out / "summary.json").read_text())["model_plan"]
    assert fleet["sessions"] == 2
    assert fleet["estimated_input_tokens"] == sum(
        r["model_plan"]["estimated_input_tokens"] for r in found.values()
    )
