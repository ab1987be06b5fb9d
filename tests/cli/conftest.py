"""What the tests of the in-place commands share: an idle generated fleet, and one run of
`compaction compress --in-place` over it, as a cron job would run it."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from pipeline.publish.live.backups import parse_backup_name
from pipeline.testing.invoke import compaction
from pipeline.testing.synth import generate_fleet

DAY = 86400
SMALL = ("--min-tokens", "0", "--min-recent-records", "8")  # so the small generated sessions compress


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_idle(root: Path, age: float = 2 * DAY) -> None:
    """Every session under `root` last written `age` seconds ago."""
    old = time.time() - age
    for path in root.rglob("*.jsonl"):
        os.utime(path, (old, old))


@pytest.fixture(scope="session")
def fleet_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("template")
    generate_fleet(root, target_bytes=600_000, seed=3)
    return root / "projects"


@pytest.fixture
def idle_fleet(fleet_template: Path, tmp_path: Path) -> Path:
    """A copy of the generated fleet whose sessions were last written two days ago."""
    root = tmp_path / "home" / "projects"
    shutil.copytree(fleet_template, root, symlinks=True)
    make_idle(root)
    return root


def backups_of(tmp: Path, root: Path, path: Path) -> list[Path]:
    """A session's backups in the archive under the state directory of `in_place` runs (where they go
    by default, mirroring the session's place under its root), by number."""
    folder = (tmp / "state").resolve() / "archive" / root.name / path.parent.relative_to(root)
    found = [p for p in folder.glob(path.name + ".backup*") if parse_backup_name(p.name)]
    return sorted(found, key=lambda p: parse_backup_name(p.name)[1])  # type: ignore[index]


def beside_backups(root: Path) -> list[Path]:
    """Backup files inside the session folders (the default puts none there)."""
    return sorted(p for p in root.rglob("*") if parse_backup_name(p.name))


def originals(root: Path) -> dict[Path, bytes]:
    return {path: path.read_bytes() for path in sorted(root.rglob("*.jsonl"))}


def in_place(
    fleet: Path, tmp: Path, *extra: str, reports: str = "r1", quiet: bool = True
) -> tuple[int, dict[str, Any], str]:
    """`compress FLEET --in-place` with its state and reports under `tmp`: the exit code, the
    summary (empty when none was written) and everything the run printed."""
    done = compaction(
        "compress", str(fleet), "--in-place", "--state-dir", str(tmp / "state"),
        "--report-dir", str(tmp / reports), "--jobs", "2", *(["--quiet"] if quiet else []), *SMALL, *extra,
    )  # fmt: skip
    summary_path = tmp / reports / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    return done.returncode, summary, done.stderr + done.stdout


def committed(summary: dict[str, Any]) -> int:
    return int(summary["in_place"]["by_disposition"].get("committed", 0))
