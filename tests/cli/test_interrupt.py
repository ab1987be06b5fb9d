"""Ctrl-C and SIGTERM stop an in-place run cleanly, at any moment (real processes, real signals):
no torn file, every replaced file with its verified backup, a summary.json, 130 or 143, and the
next run resumes where the stop left off."""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline.publish.live.backups import read_backup
from pipeline.testing.invoke import compaction_command
from pipeline.testing.synth import generate_fleet
from tests.cli.conftest import SMALL, backups_of, make_idle, originals

TRIALS = 6  # moments per run: the check phase, and builds and replacements in flight


@pytest.fixture(scope="module")
def big_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("big")
    generate_fleet(root, target_bytes=4_000_000, seed=4)
    return root / "projects"


def _start(fleet: Path, tmp: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            *compaction_command(),
            "compress",
            str(fleet),
            "--in-place",
            "--state-dir",
            str(tmp / "state"),
            "--report-dir",
            str(tmp / "r"),
            "--quiet",
            "--no-verify-resume",
            *SMALL,
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(predicate: Callable[[], bool], process: subprocess.Popen[str], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not predicate() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)


def _has_report(directory: Path) -> Callable[[], bool]:
    """Whether a report is out yet (the run makes the directories as we look: a race is a no)."""

    def look() -> bool:
        try:
            return any(directory.rglob("*.report.json"))
        except OSError:
            return False

    return look


def _assert_safe(fleet: Path, before: dict[Path, bytes]) -> int:
    """No torn file: each session is its original, or a whole JSONL output with a verified backup."""
    replaced = 0
    for path, original in before.items():
        now = path.read_bytes()
        if now == original:
            continue
        replaced += 1
        assert all(json.loads(line) is not None for line in now.splitlines())
        backups = [read_backup(p) for p in backups_of(fleet.parents[1], fleet, path)]  # in the archive
        assert original in backups, f"{path} was replaced without a backup of its original"
    return replaced


@pytest.mark.parametrize("trial", range(TRIALS))
def test_a_signal_at_a_random_moment_of_an_in_place_run_stops_it_cleanly(
    big_template: Path, tmp_path: Path, trial: int
) -> None:
    moments = random.Random(trial)
    fleet = tmp_path / "home" / "projects"
    shutil.copytree(big_template, fleet)
    make_idle(fleet)
    before = originals(fleet)
    number = (signal.SIGINT, signal.SIGTERM)[trial % 2]
    jobs = ("--jobs", "2" if trial < TRIALS - 2 else "1")  # worker builds, and builds in a thread
    process = _start(fleet, tmp_path, *jobs)
    if trial % 3 == 0:  # the check phase: the lock is held, nothing built yet
        _wait_for((tmp_path / "state").exists, process)
    else:  # mid-run: once the first report is out, builds and replacements are in flight
        _wait_for(_has_report(tmp_path / "r"), process)
    time.sleep(moments.uniform(0, 0.3))
    process.send_signal(number)
    _, stderr = process.communicate(timeout=300)
    assert "Traceback" not in stderr
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    dispositions = summary["in_place"]["by_disposition"]
    assert sum(dispositions.values()) == len(before)
    replaced = _assert_safe(fleet, before)
    assert replaced == dispositions.get("committed", 0)
    if process.returncode in (0, -number):  # the run ended before the signal came (or, its handlers
        # restored, the signal's default action ended the process after its summary was written)
        assert "not-started-interrupted" not in dispositions
    else:
        assert process.returncode == 128 + number, stderr
        [line] = [text for text in stderr.splitlines() if text.startswith("compaction: stopped by")]
        assert signal.Signals(number).name in line and "run the same command again" in line
    rerun = _start(fleet, tmp_path)
    _, stderr = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, stderr
    _assert_safe(fleet, before)
    resumed = json.loads((tmp_path / "r" / "summary.json").read_text())["in_place"]["by_disposition"]
    assert "not-started-interrupted" not in resumed


@pytest.mark.parametrize("command", ["validate", "compress", "tokens", "validate --cluster local:1"])
def test_a_signal_stops_a_fleet_command_with_a_summary_of_what_was_not_done(
    big_template: Path, tmp_path: Path, command: str
) -> None:
    command, *executor = command.split()  # the Dask executor stops as the local one does
    out = ("--out", str(tmp_path / "o"), "--no-verify-resume", *SMALL) if command == "compress" else ()
    reports = tmp_path / "o" if command == "compress" else tmp_path / "r"
    where = () if command == "compress" else ("--report-dir", str(reports))
    process = subprocess.Popen(
        [
            *compaction_command(),
            command,
            str(big_template),
            *where,
            *out,
            "--jobs",
            "1",
            "--quiet",
            *executor,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_for(_has_report(reports), process)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=300)
    assert "Traceback" not in stderr
    if process.returncode in (0, -signal.SIGINT):  # it finished first (see above): nothing was left
        return
    assert process.returncode == 130, stderr
    summary = json.loads((reports / "summary.json").read_text())
    left = summary["interrupted"]["not_done"]
    assert summary["interrupted"]["signal"] == "SIGINT"
    done = len(summary["sessions"]) if command == "tokens" else summary["sessions"]  # tokens: its rows
    assert done + len(left) == len(list(big_template.rglob("*.jsonl")))
    assert any(line.startswith("compaction: stopped by SIGINT") for line in stderr.splitlines())
