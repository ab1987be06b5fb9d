"""Real in-place runs over a generated fleet, killed with SIGKILL at random points, again and again.

A driver process (`tests.support.inplace_driver --serve`) forks one real run of the command
line (`compaction compress ROOT --in-place ...`, its own `main`) per request; the
test kills that run's process with SIGKILL after a random delay drawn over the length of a
whole run, then inspects the fleet exactly as the kill left it: every session file is present
and is either its original bytes or a structurally valid compaction of them with a backup that
decodes to the original; no backup seen earlier has disappeared and every backup decodes to its
session's original; and the state database never vouches (by fingerprint) for bytes the file
does not hold. Runs continue until one completes; a further run must then do no compression
work at all. Cycles alternate publish strategies and backup placements (the archive under the
state directory by default, a chosen directory, beside the session) and encodings.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pipeline.core.check.structure import structural_failures
from pipeline.core.topology.select import AUTO
from pipeline.publish.live.backups import parse_backup_name, read_backup
from pipeline.testing.settings import LIMITS
from pipeline.testing.synth import generate_fleet

KILLS = 210  # the acceptance asks for at least 200
BUDGET_SECONDS = (
    420.0  # a hard stop well above the ~15-160 s this takes on a shared machine, so a hang fails loudly
)
FLEET_BYTES = 600_000  # seven sessions, three of which compress: every run does real work
KILLS_PER_CYCLE = 8  # then one run goes unkilled, so every cycle completes its work
# (publish strategy, backup placement, backup compression) of each cycle, in turn.
VARIANTS = (
    ("exchange", "archive", "auto"),  # the defaults: the archive under the state directory, compressed
    ("exchange", "dir", "gzip"),
    ("link", "beside", "zstd"),
    ("exchange", "beside", "none"),
    ("link", "archive", "gzip"),
    ("link", "dir", "none"),
)


@dataclass
class Driver:
    """The forking driver process and its pipes."""

    process: subprocess.Popen[str]

    def start(self, run: tuple[list[str], dict[str, str]]) -> int:
        assert self.process.stdin is not None and self.process.stdout is not None
        argv, env = run
        self.process.stdin.write(f"run {json.dumps({'argv': argv, 'env': env})}\n")
        self.process.stdin.flush()
        word, pid = self.process.stdout.readline().split()
        assert word == "pid", word
        return int(pid)

    def finish(self) -> tuple[str, int]:
        """Reap the run (only now: until then its pid cannot be reused by another process)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("wait\n")
        self.process.stdin.flush()
        word, _, code = self.process.stdout.readline().split()
        return word, int(code)


@pytest.fixture
def driver() -> Iterator[Driver]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.inplace_driver", "--serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    yield Driver(process)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.close()
    process.wait(timeout=30)
    process.stdout.close()


@dataclass
class Cycle:
    """One fleet copy taken through killed runs until a run completes."""

    root: Path
    strategy: str
    placement: str
    compression: str
    originals: dict[Path, str] = field(default_factory=dict)  # session path -> original sha256
    backups_seen: set[Path] = field(default_factory=set)
    valid: dict[str, bool] = field(default_factory=dict)  # sha256 -> structurally valid
    recovered: int = 0  # intents of killed runs the completing run recovered
    completed: dict[str, object] = field(default_factory=dict)  # the completing run's summary

    @property
    def fleet(self) -> Path:
        return self.root / "fleet"

    def argv(self, reports: Path) -> tuple[list[str], dict[str, str]]:
        """The real command line (one job: no worker processes to outlive a kill) and its environment."""
        argv = [
            "compress",
            str(self.fleet / "projects"),
            "--in-place",
            "--state-dir",
            str(self.root / "state"),
        ]
        argv += ["--work-dir", str(self.root / "work"), "--idle-for", "0", "--min-tokens", "0"]
        argv += ["--min-recent-records", "8", "--backup-compression", self.compression]
        argv += ["--report-dir", str(reports), "--jobs", "1", "--quiet", "--no-verify-resume"]
        if self.placement == "dir":
            argv += ["--backup-dir", str(self.root / "backups")]
        if self.placement == "beside":
            argv += ["--backup-beside"]
        return argv, {"COMPACTION_IN_PLACE_PUBLISH_STRATEGY": self.strategy}

    def backups(self) -> list[Path]:
        elsewhere = {"dir": self.root / "backups", "archive": self.root / "state" / "archive"}
        places = [self.fleet] + ([elsewhere[self.placement]] if self.placement in elsewhere else [])
        return sorted(
            p
            for place in places
            if place.exists()
            for p in place.rglob("*")
            if parse_backup_name(p.name) and not p.name.startswith(".")
        )


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def new_cycle(template: Path, root: Path, variant: tuple[str, str, str]) -> Cycle:
    shutil.copytree(template, root / "fleet")
    cycle = Cycle(root, *variant)
    for path in sorted((root / "fleet").rglob("*.jsonl")):
        cycle.originals[path] = sha256(path.read_bytes())
    return cycle


def _is_compaction_of(cycle: Cycle, data: bytes, original_sha: str) -> bool:
    digest = sha256(data)
    if digest not in cycle.valid:
        cycle.valid[digest] = not structural_failures(data, AUTO, LIMITS)
    return cycle.valid[digest] and f'"sourceSha256":"{original_sha}"'.encode() in data


def _moved_aside(path: Path, original_sha: str) -> bool:
    """Link strategy only: between moving the original aside and linking the candidate in."""
    for leftover in path.parent.glob(f".{path.name}.compaction-*"):
        if leftover.suffix in (".capture", ".retired") and sha256(leftover.read_bytes()) == original_sha:
            return True
    return False


def check_sessions(cycle: Cycle, backed_up: set[str]) -> None:
    for path, original_sha in cycle.originals.items():
        if not path.exists():
            assert cycle.strategy == "link" and _moved_aside(path, original_sha), f"{path.name} is missing"
            continue
        data = path.read_bytes()
        if sha256(data) == original_sha:
            continue
        assert _is_compaction_of(cycle, data, original_sha), f"{path.name} is torn or foreign"
        assert original_sha in backed_up, f"{path.name} was replaced without a backup of its original"


def check_backups(cycle: Cycle) -> set[str]:
    backups = cycle.backups()
    lost = cycle.backups_seen - set(backups)
    assert not lost, f"backups disappeared: {sorted(p.name for p in lost)}"
    cycle.backups_seen |= set(backups)
    decoded = {sha256(read_backup(path)) for path in backups}
    assert decoded <= set(cycle.originals.values()), "a backup holds something other than an original"
    return decoded


def check_state(cycle: Cycle) -> None:
    """No row's fingerprint matches a file whose bytes differ from what the row recorded."""
    database = cycle.root / "state" / "state.sqlite3"
    if not database.exists():
        return
    with contextlib.closing(sqlite3.connect(database)) as db:
        if not db.execute("SELECT name FROM sqlite_master WHERE name = 'sessions'").fetchone():
            return  # killed before the schema was created
        rows = db.execute(
            "SELECT path, result, source_sha256, source_size, source_mtime_ns, source_ctime_ns, source_inode,"
            " output_sha256, output_size, output_mtime_ns, output_ctime_ns, output_inode FROM sessions"
        ).fetchall()
    for path, result, source_sha, *source_fp, output_sha, o_size, o_mtime, o_ctime, o_inode in rows:
        live = Path(path)
        if not live.exists():
            continue
        status = live.stat()
        now = [status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino]
        if result == "declined" and source_fp == now:
            assert sha256(live.read_bytes()) == source_sha, f"stale declined row for {live.name}"
        if output_sha is not None and [o_size, o_mtime, o_ctime, o_inode] == now:
            assert sha256(live.read_bytes()) == output_sha, f"stale output row for {live.name}"


def check_after_kill(cycle: Cycle) -> None:
    check_sessions(cycle, check_backups(cycle))
    check_state(cycle)


def finish_cycle(cycle: Cycle, driver: Driver) -> None:
    """The run after the last kill completed; one more must find nothing to do."""
    reports = cycle.root / "again"
    driver.start(cycle.argv(reports))
    assert driver.finish() == ("exit", 0)
    again = json.loads((reports / "summary.json").read_text())["in_place"]
    assert again["built"] == 0, json.dumps({"again": again, "completing": cycle.completed}, indent=1)
    assert set(again["by_disposition"]) <= {"skipped-unchanged-output", "skipped-unchanged-declined"}, again
    check_after_kill(cycle)
    assert all(path.exists() for path in cycle.originals)
    leftovers = [p.name for p in cycle.fleet.rglob(".*.compaction-*")]
    assert not leftovers, leftovers
    compacted = [p for p, sha in cycle.originals.items() if sha256(p.read_bytes()) != sha]
    assert compacted, "no session was compacted in this cycle"


def _timed_run(cycle: Cycle, driver: Driver, reports: Path) -> float:
    started = time.perf_counter()
    driver.start(cycle.argv(reports))
    assert driver.finish() == ("exit", 0)
    return time.perf_counter() - started


def measure_runs(template: Path, root: Path, driver: Driver) -> tuple[float, float]:
    """Median seconds of a complete run over a fresh copy and of a run with nothing left to do."""
    full, idle = [], []
    for attempt in range(3):
        cycle = new_cycle(template, root / str(attempt), VARIANTS[0])
        full.append(_timed_run(cycle, driver, root / f"full{attempt}"))
        idle.append(_timed_run(cycle, driver, root / f"idle{attempt}"))
    return sorted(full)[1], sorted(idle)[1]


def in_transaction(cycle: Cycle) -> bool:
    """Whether the kill left a replacement's names behind (it struck inside a transaction)."""
    return any(cycle.fleet.rglob(".*.compaction-*"))


def kill_cycle(
    cycle: Cycle, driver: Driver, rng: random.Random, windows: tuple[float, float], deadline: float
) -> tuple[int, int]:
    """Kill runs of one fleet copy until one completes: (kills, kills inside a transaction).

    The first delay is drawn over a whole run; each later one over about the work the killed
    run left (never less than a run with nothing to do), so a kill may strike start-up, the
    recovery of the previous kill, or any step of any session's transaction. After
    `KILLS_PER_CYCLE` kills one run goes unkilled and completes the work.
    """
    kills = inside = 0
    remaining, idle = windows
    for attempt in range(KILLS_PER_CYCLE + 1):
        assert time.monotonic() < deadline, f"out of time after {kills} kills in this cycle"
        pid = driver.start(cycle.argv(cycle.root / f"run{attempt}"))
        if attempt < KILLS_PER_CYCLE:
            delay = rng.uniform(0, remaining)
            time.sleep(delay)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            remaining = max(2 * idle, remaining - 0.4 * max(0.0, delay - idle))
        word, code = driver.finish()
        if word == "exit":
            assert code == 0, f"run {attempt} failed"
            check_after_kill(cycle)
            completed = json.loads((cycle.root / f"run{attempt}" / "summary.json").read_text())["in_place"]
            cycle.recovered, cycle.completed = len(completed["recovered"]), completed
            return kills, inside
        assert code == signal.SIGKILL
        kills += 1  # noqa: SIM113 - runs that complete early are not kills
        inside += in_transaction(cycle)
        check_after_kill(cycle)
    raise AssertionError("unreachable: the last run is never killed")


def test_sigkill_at_random_points_never_tears_loses_or_misleads(tmp_path: Path, driver: Driver) -> None:
    template = tmp_path / "template"
    generate_fleet(template, target_bytes=FLEET_BYTES, seed=3)
    full, idle = measure_runs(template, tmp_path / "measure", driver)
    windows = (full, idle)
    rng = random.Random(20251201)
    deadline = time.monotonic() + BUDGET_SECONDS
    kills = inside = cycles = recovered = 0
    # Where kills fall depends on the machine's pace (a loaded one spends them on start-up): go on
    # past KILLS until a tenth struck inside a transaction (enough to mean anything) and one left an
    # intent for recovery to finish; the budget's deadline fails a run that never gets there.
    while kills < KILLS or inside < KILLS // 10 or not recovered:
        cycle = new_cycle(template, tmp_path / f"cycle{cycles}", VARIANTS[cycles % len(VARIANTS)])
        done, struck = kill_cycle(cycle, driver, rng, windows, deadline)
        kills, inside = kills + done, inside + struck
        finish_cycle(cycle, driver)
        recovered += cycle.recovered
        cycles += 1
    print(
        f"{kills} SIGKILLs ({inside} inside a transaction, {recovered} intents recovered) over {cycles} "
        f"cycles; a whole run takes {full * 1000:.0f} ms"
    )
