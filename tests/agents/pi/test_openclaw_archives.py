"""OpenClaw's archives of reset and deleted sessions (`<id>.jsonl.reset.<ts>`,
`<id>.jsonl.deleted.<ts>`) through the real command line: validated and counted as pi sessions
beside the live one, never replaced by an in-place run (no client resumes them), while the live
session beside them is."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from pipeline.testing.invoke import compaction
from tests.support.pi_files import FIXTURES

TWO_DAYS = 2 * 86_400
LIVE = "0b1c.jsonl"
RESET = "0b1c.jsonl.reset.2026-06-15T10-00-00.000Z"
DELETED = "9f2e.jsonl.deleted.1781000000000"
SMALL = ("--min-tokens", "0", "--target-estimated-tokens", "400")


def _openclaw_agent(root: Path) -> Path:
    """An OpenClaw agent's sessions folder: a live session, its reset archive, a deleted session's
    archive and the index, all idle for two days."""
    sessions = root / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    for source, name in (("tools.jsonl", LIVE), ("compacted.jsonl", RESET), ("tools.jsonl", DELETED)):
        shutil.copyfile(FIXTURES / source, sessions / name)
    (sessions / "sessions.json").write_text(json.dumps({"agent:main:main": {"sessionId": "0b1c"}}))
    old = time.time() - TWO_DAYS
    for path in sessions.iterdir():
        os.utime(path, (old, old))
    return sessions


def _reports(folder: Path) -> dict[str, dict[str, Any]]:
    found = [json.loads(path.read_text()) for path in folder.rglob("*.report.json")]
    return {Path(report["session"]["label"]).name: report for report in found}


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_openclaws_archives_are_validated_and_counted_as_pi_sessions(tmp_path: Path) -> None:
    sessions = _openclaw_agent(tmp_path / "openclaw")
    done = compaction("validate", str(tmp_path / "openclaw"), "--report-dir", str(tmp_path / "v"), "--quiet")
    assert done.returncode == 0, done.stderr[-2000:]
    validated = _reports(tmp_path / "v")
    assert validated.pop("sessions.json")["status"] == "not-a-transcript"
    assert {name: (r["status"], r["session"]["format"]) for name, r in validated.items()} == {
        name: ("valid", "pi-session") for name in (LIVE, RESET, DELETED)
    }
    resumable = {name: report["context"]["resumable"] for name, report in validated.items()}
    assert resumable == {LIVE: True, RESET: False, DELETED: False}  # no client resumes an archive
    done = compaction("tokens", str(sessions), "--out", str(tmp_path / "t"), "--quiet")
    assert done.returncode == 0, done.stderr[-2000:]
    counted = _reports(tmp_path / "t")
    billed = {
        name: report["tokens"]["billed"]["events"]
        for name, report in counted.items()
        if name != "sessions.json"
    }
    assert set(billed) == {LIVE, RESET, DELETED} and min(billed.values()) > 0
    assert billed[DELETED] == billed[LIVE]  # the same bytes count the same, archived or not


def test_in_place_replaces_the_live_session_and_never_an_archive(tmp_path: Path) -> None:
    sessions = _openclaw_agent(tmp_path / "openclaw")
    before = {path.name: _digest(path) for path in sessions.iterdir()}
    done = compaction(
        "compress", str(sessions), "--in-place", *SMALL, "--no-verify-resume",
        "--report-dir", str(tmp_path / "r"), "--backup-dir", str(tmp_path / "b"),
        "--state-dir", str(tmp_path / "s"), "--quiet",
    )  # fmt: skip
    reports = _reports(tmp_path / "r")
    assert reports[LIVE]["in_place"]["disposition"] == "committed", done.stderr[-2000:]
    for name in (RESET, DELETED):
        assert reports[name]["status"] != "compressed"
        assert reports[name]["in_place"]["disposition"] == "declined"
    after = {path.name: _digest(path) for path in sessions.iterdir()}
    assert {name for name in before if after[name] != before[name]} == {LIVE}
