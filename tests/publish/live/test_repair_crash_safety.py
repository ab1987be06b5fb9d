"""Real `compaction repair --in-place` runs over damaged sessions, killed with SIGKILL at random points.

The forking driver of the compress crash test (`tests.support.inplace_driver`) runs the command
line's own `main`; each run is killed after a random delay drawn over a whole run, then the files
are inspected exactly as the kill left them: each session holds its original bytes or exactly its
planned repair, never anything else, and a repaired one has a backup that decodes to its original.
Runs continue until one completes; a further run finds nothing to do; `restore` then gives every
original back byte for byte.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import shutil
import signal
import time
from pathlib import Path

from pipeline.core.session_repair import SessionRepairOptions, plan_session_repair
from pipeline.core.topology.select import AUTO
from pipeline.publish.live.backups import parse_backup_name, read_backup
from pipeline.testing.fuzz import PAIRING, plant, result_lines
from pipeline.testing.invoke import compaction
from pipeline.testing.sessions import build_session
from pipeline.testing.settings import LIMITS
from tests.publish.live.test_crash_safety import Driver, driver  # noqa: F401 - the driver fixture

KILLS = 40
KILLS_PER_CYCLE = 8  # then one run goes unkilled, so every cycle completes its work
BUDGET_SECONDS = 400.0  # a hard stop far above the minute or two this takes, so a hang fails loudly
STRATEGIES = ("exchange", "link")
OPTIONS = SessionRepairOptions(AUTO, LIMITS, relink=False, max_rounds=500, read_pages=False)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def damaged_fleet(root: Path) -> dict[Path, tuple[bytes, bytes]]:
    """Six builder sessions, each with its torn line and one pairing defect: (original, repaired)."""
    project = root / "projects" / "-repo"
    project.mkdir(parents=True)
    expected: dict[Path, tuple[bytes, bytes]] = {}
    for seed in range(6):
        path = project / f"s{seed}.jsonl"
        build_session(path, turns=4, seed=seed)
        data = path.read_bytes()
        sites = result_lines(data)
        damaged = plant(data, PAIRING[seed % len(PAIRING)], sites[(seed * 7) % len(sites)])
        path.write_bytes(damaged)
        repaired = plan_session_repair(damaged, OPTIONS).repaired
        assert repaired is not None
        expected[path] = (damaged, repaired)
    old = time.time() - 2 * 86400
    for path in expected:
        os.utime(path, (old, old))
    return expected


def argv(root: Path, reports: Path) -> list[str]:
    return [
        "repair", str(root / "projects"), "--in-place", "--no-verify-resume", "--quiet",
        "--state-dir", str(root / "state"), "--work-dir", str(root / "work"),
        "--idle-for", "0", "--report-dir", str(reports),
    ]  # fmt: skip


def check(expected: dict[Path, tuple[bytes, bytes]]) -> int:
    """Every file whole (original or repaired); every repaired one backed up; the repaired count."""
    root = next(iter(expected)).parents[2]  # root/projects/-repo/s0.jsonl
    places = (root / "projects", root / "state" / "archive")  # none beside by default, but look there too
    backups = {
        sha256(read_backup(p))
        for place in places
        if place.exists()
        for p in place.rglob("*")
        if parse_backup_name(p.name) and not p.name.startswith(".")
    }
    assert backups <= {sha256(original) for original, _ in expected.values()}, "a foreign backup"
    repaired = 0
    for path, (original, fixed) in expected.items():
        if not path.exists():
            leftovers = list(path.parent.glob(f".{path.name}.compaction-*"))
            assert any(sha256(p.read_bytes()) == sha256(original) for p in leftovers), f"{path.name} lost"
            continue
        data = path.read_bytes()
        assert data in (original, fixed), f"{path.name} is torn"
        if data == fixed:
            repaired += 1
            assert sha256(original) in backups, f"{path.name} replaced without a backup"
    return repaired


def measure_run(root: Path, driver: Driver) -> float:  # noqa: F811
    """Median seconds of a whole run over a fresh damaged fleet.

    One run alone is the first the driver forks, several times slower than the rest: delays drawn
    over it mostly struck after the run had ended, so a cycle made few kills and the test took
    well over a hundred cycles (six minutes) to make its forty.
    """
    seconds = []
    for attempt in range(3):
        fleet = root / str(attempt)
        damaged_fleet(fleet)
        started = time.perf_counter()
        driver.start((argv(fleet, fleet / "r"), {}))
        assert driver.finish() == ("exit", 0)
        seconds.append(time.perf_counter() - started)
    shutil.rmtree(root)
    return sorted(seconds)[1]


def kill_cycle(root: Path, driver: Driver, rng: random.Random, window: float, strategy: str) -> int:  # noqa: F811
    """Kill runs until one completes; the kills made."""
    expected = damaged_fleet(root)
    env = {"COMPACTION_IN_PLACE_PUBLISH_STRATEGY": strategy}
    kills = 0
    for attempt in range(KILLS_PER_CYCLE + 1):
        pid = driver.start((argv(root, root / f"run{attempt}"), env))
        if attempt < KILLS_PER_CYCLE:
            time.sleep(rng.uniform(0, window))
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        word, code = driver.finish()
        if word == "exit":
            assert code == 0, f"run {attempt} failed"
            break
        assert code == signal.SIGKILL
        kills += 1
        check(expected)
    assert check(expected) == len(expected)
    driver.start((argv(root, root / "again"), env))
    assert driver.finish() == ("exit", 0)
    again = json.loads((root / "again" / "summary.json").read_text())
    assert set(again["by_disposition"]) <= {"skipped-unchanged-output", "skipped-unchanged-declined"}, again
    undo = compaction("restore", *map(str, expected), "--state-dir", str(root / "state"), "--quiet")
    assert undo.returncode == 0, undo.stderr
    assert all(path.read_bytes() == original for path, (original, _) in expected.items())
    return kills


def test_sigkill_during_repair_never_tears_a_session_and_restore_gives_the_originals_back(
    tmp_path: Path,
    driver: Driver,  # noqa: F811
) -> None:
    window = measure_run(tmp_path / "measure", driver)
    rng = random.Random(20261203)
    deadline = time.monotonic() + BUDGET_SECONDS
    kills = cycles = 0
    while kills < KILLS:
        assert time.monotonic() < deadline, f"out of time after {kills} kills"
        kills += kill_cycle(
            tmp_path / f"cycle{cycles}", driver, rng, window, STRATEGIES[cycles % len(STRATEGIES)]
        )
        cycles += 1
    assert kills >= KILLS
