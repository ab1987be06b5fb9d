"""A mixed fleet (Claude Code sessions and Codex rollouts) through every command, as a user runs it:
validate, compress, tokens, on the process pool and on a local Dask cluster, then compress in place
and restore: one report per session, each in its own format, and the originals back byte for byte."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from pipeline.testing import TranscriptBuilder
from pipeline.testing.invoke import compaction
from tests.support.rollout_builder import RolloutBuilder

DAY = 86_400


def _claude_session(path: Path, seed: int) -> None:
    """A clean Claude Code session of fourteen turns with shell calls."""
    b = TranscriptBuilder(seed=seed)
    for turn in range(14):
        b.user(f"session {seed} turn {turn}: make the tests of module_{turn} pass")
        for step in range(3):
            b.tool_call("Bash", {"command": f"pytest tests/test_{turn}_{step}.py"}, "." * 2500 + "\n3 passed")
        b.assistant(b.text(f"Turn {turn} is done."))
    b.last_prompt(f"session {seed} turn 13: make the tests of module_13 pass")
    b.write(path)


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    """Two Claude Code sessions and two Codex rollouts, idle for two days."""
    root = tmp_path / "fleet"
    (root / "claude" / "-home-me-app").mkdir(parents=True)
    (root / "codex" / "2026" / "03" / "01").mkdir(parents=True)
    for number in range(2):
        _claude_session(root / "claude" / "-home-me-app" / f"session-{number}.jsonl", seed=number)
        b = RolloutBuilder(seed=40 + number)
        for turn in range(10):
            b.exchange(f"rollout {number} task {turn}: refactor module_{turn}.py", tools=3, output_bytes=2500)
        b.write(root / "codex" / "2026" / "03" / "01" / f"rollout-2026-03-01T12-00-0{number}-x.jsonl")
    old = time.time() - 2 * DAY
    for path in root.rglob("*.jsonl"):
        os.utime(path, (old, old))
    return root


def _reports(folder: Path) -> dict[str, dict[str, Any]]:
    found = [json.loads(p.read_text()) for p in folder.rglob("*.report.json")]
    return {report["session"]["label"]: report for report in found}


def _formats(reports: dict[str, dict[str, Any]]) -> dict[str, str]:
    return {label: report["session"]["format"] for label, report in reports.items()}


def _digests(root: Path) -> dict[Path, str]:
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*.jsonl"))}


@pytest.mark.parametrize("executor", [(), ("--cluster", "local:1")], ids=["pool", "dask"])
def test_validate_compress_and_tokens_report_every_session_in_its_format(
    fleet: Path, tmp_path: Path, executor: tuple[str, ...]
) -> None:
    out = tmp_path / "out"
    runs = {
        "validate": ("--report-dir", str(out / "validate")),
        "compress": ("--out", str(out / "compress"), "--min-tokens", "0", "--no-verify-resume"),
        "tokens": ("--out", str(out / "tokens")),
    }
    for command, extra in runs.items():
        done = compaction(command, str(fleet), "--quiet", *extra, *executor)
        assert done.returncode == 0, (command, done.stderr[-2000:])
        reports = _reports(out / command)
        assert len(reports) == 4, (command, sorted(reports))
        assert sorted(_formats(reports).values()) == [
            "claude-code",
            "claude-code",
            "codex-rollout",
            "codex-rollout",
        ]
        assert all(report["command"] == command for report in reports.values())
    compressed = _reports(out / "compress")
    assert {report["status"] for report in compressed.values()} == {"compressed"}
    for report in compressed.values():
        if report["session"]["format"] == "codex-rollout":
            assert report["tokens"]["target_met"] and report["output"]["ratio"] < 1
    tokens = _reports(out / "tokens")
    assert all("billed" in r["tokens"] for r in tokens.values() if r["session"]["format"] == "codex-rollout")


@pytest.mark.parametrize("executor", [(), ("--cluster", "local:1")], ids=["pool", "dask"])
def test_in_place_replaces_both_formats_and_restore_gives_back_the_originals(
    fleet: Path, tmp_path: Path, executor: tuple[str, ...]
) -> None:
    before = _digests(fleet)
    backups, state = tmp_path / "backups", tmp_path / "state"
    common = ("--backup-dir", str(backups), "--state-dir", str(state))
    done = compaction(
        "compress", str(fleet), "--in-place", "--min-tokens", "0", "--no-verify-resume",
        "--report-dir", str(tmp_path / "reports"), "--quiet", *common, *executor,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    reports = _reports(tmp_path / "reports")
    assert len(reports) == 4
    assert {(r["session"]["format"], r["in_place"]["disposition"]) for r in reports.values()} == {
        ("claude-code", "committed"), ("codex-rollout", "committed"),
    }  # fmt: skip
    after = _digests(fleet)
    assert all(after[path] != digest for path, digest in before.items())
    rollout = next(p for p in after if "codex" in p.parts)
    assert b'"type":"compacted"' in rollout.read_bytes()
    done = compaction("restore", "--all-since", "2020-01-01T00:00", str(fleet), "--quiet", *common)
    assert done.returncode == 0, done.stderr[-2000:]
    assert _digests(fleet) == before
