"""`backups --move-to-archive` and `backups --prune --yes` killed with SIGKILL at random points.

A fleet is compacted with its backups beside the sessions, restored, and the restore undone, so
each compacted session has two backups: its original (the only copy of what its live compaction
summarized) and the compacted file the restore replaced. Real runs of the command line (forked
by `tests.support.inplace_driver`) then move them into the archive, and prune them with
`--keep last:0`: for each command, cycle after cycle, the starting point is put back, one run is
killed after a random delay within a whole run's length, the files are checked as the kill left
them, and a run completes. After every kill and every completion: every backup name holds a whole
backup that decodes to one of the expected files, and no original is without a backup (the
prune never removes an original's backup, the only copy of what its compaction summarized). At
the end no backup is left beside a session, only the originals' backups remain, no temporary is
left in the archive, and `restore --all-since` gives every original back byte for byte.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import shutil
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pipeline.publish.live.backups import parse_backup_name, read_backup
from pipeline.testing.synth import generate_fleet
from tests.publish.live.test_crash_safety import Driver, driver  # noqa: F401 - the driver fixture

CYCLES = 10  # per command: each puts the starting point back, kills one run, completes one
FLEET_BYTES = 600_000  # seven sessions, three of which compress
BUDGET_SECONDS = 240.0  # far above the ~15 s this takes, so a hang fails loudly


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def backups(root: Path) -> dict[Path, str]:
    """Every numbered backup beside the sessions or in the archive, with its decoded digest (a torn
    or undecodable backup fails here)."""
    places = (root / "fleet", root / "state" / "archive")
    found = [p for place in places if place.exists() for p in place.rglob("*") if parse_backup_name(p.name)]
    return {p: sha256(read_backup(p)) for p in found if not p.name.startswith(".")}


def command(root: Path, *args: str) -> list[str]:
    return [*args, "--state-dir", str(root / "state"), "--quiet"]


def night(root: Path, runner: Driver) -> None:
    argv = command(root, "compress", str(root / "fleet" / "projects"), "--in-place", "--backup-beside")
    argv += ["--idle-for", "0", "--min-tokens", "0", "--min-recent-records", "8", "--jobs", "1"]
    argv += ["--no-verify-resume", "--report-dir", str(root / f"night{time.monotonic_ns()}")]
    runner.start((argv, {}))
    assert runner.finish() == ("exit", 0)


def two_backups_each(root: Path, runner: Driver) -> tuple[dict[Path, str], set[str]]:
    """The originals' digests, and the digests the backups hold once a night, a restore and the undo
    of that restore went by (each compacted session: its original, and its compacted file)."""
    originals = {p: sha256(p.read_bytes()) for p in sorted((root / "fleet").rglob("*.jsonl"))}
    night(root, runner)
    compacted = {p: p.read_bytes() for p, sha in originals.items() if sha256(p.read_bytes()) != sha}
    assert compacted, "nothing was compacted"
    projects = str(root / "fleet" / "projects")
    runner.start((command(root, "restore", "--all-since", "2000-01-01", projects, "--backup-beside"), {}))
    assert runner.finish() == ("exit", 0)
    for path in compacted:  # the undo of the restore: the compaction is back, its original's backup reused
        [kept] = path.parent.glob(path.name + ".backup1*")
        runner.start((command(root, "restore", str(path), "--backup", str(kept), "--backup-beside"), {}))
        assert runner.finish() == ("exit", 0)
    assert all(path.read_bytes() == data for path, data in compacted.items())
    kept = set(backups(root).values())
    assert kept == {sha256(data) for data in compacted.values()} | {originals[path] for path in compacted}
    return originals, kept


def timed(runner: Driver, argv: list[str]) -> float:
    """Seconds of one complete run."""
    started = time.perf_counter()
    runner.start((argv, {}))
    assert runner.finish() == ("exit", 0)
    return time.perf_counter() - started


def put_back(snapshot: Path, root: Path) -> None:
    """The fleet, its backups and its state exactly as the snapshot holds them, at the same paths
    (the state database names them absolutely)."""
    shutil.rmtree(root)
    shutil.copytree(snapshot, root, symlinks=True)


@dataclass
class Phase:
    """One command killed once per cycle from the same starting point, then run to completion."""

    root: Path
    snapshot: Path  # the starting point, put back before each cycle
    argv: list[str]
    check: Callable[[], None]  # what must hold after a kill and after completion
    window: float = 0.0  # seconds of a complete run

    def cycles(self, runner: Driver, rng: random.Random, deadline: float) -> int:
        """Kill a run at a random point of its length, check, complete it, check; the kills made."""
        kills = 0
        for _ in range(CYCLES):
            assert time.monotonic() < deadline, f"out of time after {kills} kills"
            put_back(self.snapshot, self.root)
            pid = runner.start((self.argv, {}))
            time.sleep(rng.uniform(0, self.window))
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            word, code = runner.finish()
            assert word == "killed" or code == 0, f"a run failed with {code}"
            kills += word == "killed"
            self.check()
            runner.start((self.argv, {}))
            assert runner.finish() == ("exit", 0), "the run after a kill failed"
            self.check()
        return kills


def test_sigkill_while_archiving_or_pruning_loses_no_backup_it_must_keep(
    tmp_path: Path,
    driver: Driver,  # noqa: F811
) -> None:
    root = tmp_path / "live"
    generate_fleet(root / "fleet", target_bytes=FLEET_BYTES, seed=3)
    originals, expected = two_backups_each(root, driver)
    backed_up = {sha for sha in originals.values() if sha in expected}
    projects = str(root / "fleet" / "projects")

    def nothing_lost() -> None:
        held = set(backups(root).values())
        assert held <= expected, "a backup holds something unexpected"
        assert backed_up <= held, "an original lost its backup"

    move = Phase(
        root, tmp_path / "before-move", command(root, "backups", projects, "--move-to-archive"), nothing_lost
    )
    shutil.copytree(root, move.snapshot, symlinks=True)
    move.window = timed(driver, move.argv)
    assert set(backups(root).values()) == expected
    assert not [p for p in backups(root) if (root / "fleet") in p.parents], "a backup is still beside"
    prune = command(root, "backups", projects, "--prune", "--yes", "--keep", "last:0")
    pruning = Phase(root, tmp_path / "before-prune", prune, nothing_lost)
    shutil.copytree(root, pruning.snapshot, symlinks=True)
    pruning.window = timed(driver, prune)
    assert set(backups(root).values()) == backed_up  # only the originals' backups are left
    rng = random.Random(20261207)
    deadline = time.monotonic() + BUDGET_SECONDS
    moves = move.cycles(driver, rng, deadline)
    assert set(backups(root).values()) == expected and not list((root / "fleet").rglob("*.backup*"))
    prunes = pruning.cycles(driver, rng, deadline)
    assert set(backups(root).values()) == backed_up
    restore = command(root, "restore", "--all-since", "2000-01-01", projects)
    driver.start((restore, {}))
    assert driver.finish() == ("exit", 0)
    assert {p: sha256(p.read_bytes()) for p in originals} == originals
    leftovers = [p.name for p in (root / "state" / "archive").rglob(".*")]
    assert not leftovers, leftovers
    print(
        f"{moves} SIGKILLs while moving to the archive (a move takes {move.window * 1000:.0f} ms), "
        f"{prunes} while pruning (a prune takes {pruning.window * 1000:.0f} ms)"
    )
    # A kill drawn past a run's end strikes nothing: half of them striking is what the runs' jitter allows.
    assert moves + prunes >= CYCLES, "too few kills struck a run before it completed"
