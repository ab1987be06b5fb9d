"""`compaction repair` from the command line, on real files: report only, candidates, in place, undo.

Without Claude Code asked (`--no-verify-resume`) the reports say the repairs are unproven; the
proof itself is `tests/proof/claude_code/test_claude_code_repair.py`.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pipeline.testing.fuzz import Mutation, plant, result_lines
from pipeline.testing.invoke import compaction, reports
from pipeline.testing.sessions import build_session
from tests.cli.conftest import backups_of, beside_backups, make_idle, originals
from tests.publish.live.test_read_pages_repair import PAGES, session


@pytest.fixture
def damaged(tmp_path: Path) -> Path:
    """A project of three sessions: torn (the builder's malformed line), a result behind text, sound."""
    project = tmp_path / "projects" / "-repo"
    project.mkdir(parents=True)
    build_session(project / "torn.jsonl", turns=3, seed=1)
    build_session(project / "sound.jsonl", turns=3, seed=2)
    sound = (project / "sound.jsonl").read_bytes().split(b"\n")
    sound = [line for line in sound if b"CANARY" not in line or b'"uuid"' in line]
    data = b"\n".join(sound)
    (project / "sound.jsonl").write_bytes(data)
    (project / "moved.jsonl").write_bytes(plant(data, Mutation.RESULT_NOT_FIRST, result_lines(data)[2]))
    make_idle(tmp_path / "projects")
    return tmp_path / "projects"


def run(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return compaction("repair", *args, "--state-dir", str(tmp / "state"), "--no-verify-resume", "--quiet")


def by_name(report_dir: Path) -> dict[str, dict[str, Any]]:
    return {Path(r["session"]).name: r for r in reports(report_dir)}


def test_report_only_names_each_edit_by_line_and_code_and_writes_nothing(
    damaged: Path, tmp_path: Path
) -> None:
    before = originals(damaged)
    done = run(tmp_path, str(damaged), "--report-dir", str(tmp_path / "r"))
    assert done.returncode == 0, done.stderr
    assert originals(damaged) == before
    found = by_name(tmp_path / "r")
    assert found["sound.jsonl"]["status"] == "nothing-to-repair" and found["sound.jsonl"]["edits"] == []
    torn = found["torn.jsonl"]
    assert torn["status"] == "repaired" and torn["mode"] == "report"
    assert [(e["code"], e["action"]) for e in torn["edits"]] == [("line-truncated", "drop-line")]
    moved = found["moved.jsonl"]["edits"]
    assert [(e["code"], e["action"]) for e in moved] == [("tool-result-not-first", "move-results-first")]
    assert all(e["line"] > 0 and e["bytes_before"] > 0 for e in moved)
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["by_status"] == {"nothing-to-repair": 1, "repaired": 2}
    assert "Output follows." not in (tmp_path / "r" / "summary.json").read_text() + json.dumps(
        list(found.values())
    )


def test_out_writes_checked_candidates_and_says_they_are_unproven(damaged: Path, tmp_path: Path) -> None:
    before = originals(damaged)
    out = tmp_path / "out"
    done = run(tmp_path, str(damaged), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert originals(damaged) == before
    found = by_name(out)
    moved = found["moved.jsonl"]
    assert (
        moved["status"] == "repaired" and moved["failures"] == [] and moved["proof"]["verdict"] == "unproven"
    )
    candidate = Path(moved["output"]).read_bytes()
    source = before[damaged / "-repo" / "moved.jsonl"]
    changed = [
        n
        for n, (a, b) in enumerate(zip(source.split(b"\n"), candidate.split(b"\n"), strict=True), 1)
        if a != b
    ]
    assert changed == [moved["edits"][0]["line"]]


def test_in_place_repairs_with_a_backup_finds_nothing_the_second_time_and_restores(
    damaged: Path, tmp_path: Path
) -> None:
    before = originals(damaged)
    done = run(tmp_path, str(damaged), "--in-place", "--report-dir", str(tmp_path / "r1"))
    assert done.returncode == 0, done.stderr
    changed = [path for path, data in before.items() if path.read_bytes() != data]
    assert sorted(p.name for p in changed) == ["moved.jsonl", "torn.jsonl"]
    assert all(backups_of(tmp_path, damaged, path) for path in changed)
    assert beside_backups(damaged) == []
    found = by_name(tmp_path / "r1")
    assert found["torn.jsonl"]["operation_state"] == "committed"
    assert found["torn.jsonl"]["receipt"]["backup"]["path"]
    space = json.loads((tmp_path / "r1" / "summary.json").read_text())["archive"]
    stored = sum(p.stat().st_size for path in changed for p in backups_of(tmp_path, damaged, path))
    assert (space["placement"], space["backups_added"], space["backup_bytes_added"]) == ("archive", 2, stored)
    assert space["live_bytes_before"] == sum(len(data) for data in before.values())
    again = run(tmp_path, str(damaged), "--in-place", "--report-dir", str(tmp_path / "r2"))
    assert again.returncode == 0, again.stderr
    summary = json.loads((tmp_path / "r2" / "summary.json").read_text())
    assert set(summary["by_disposition"]) <= {"skipped-unchanged-output", "skipped-unchanged-declined"}
    undo = compaction("restore", *map(str, changed), "--state-dir", str(tmp_path / "state"), "--quiet")
    assert undo.returncode == 0, undo.stderr
    assert originals(damaged) == before


def test_in_place_and_out_exclude_each_other(damaged: Path, tmp_path: Path) -> None:
    done = run(tmp_path, str(damaged), "--in-place", "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert "not allowed with argument" in done.stderr


def test_read_pages_makes_the_repair_repair_read_pages_makes_only_when_asked(tmp_path: Path) -> None:
    project = tmp_path / "projects" / "-repo"
    project.mkdir(parents=True)
    data = session().to_bytes()
    (project / "pages.jsonl").write_bytes(data)
    make_idle(tmp_path / "projects")
    plain = run(tmp_path, str(tmp_path / "projects"), "--report-dir", str(tmp_path / "r0"))
    assert plain.returncode == 0, plain.stderr
    assert by_name(tmp_path / "r0")["pages.jsonl"]["status"] == "nothing-to-repair"
    out = tmp_path / "out"
    asked = run(tmp_path, str(tmp_path / "projects"), "--read-pages", "--out", str(out))
    assert asked.returncode == 0, asked.stderr
    report = by_name(out)["pages.jsonl"]
    assert [(e["code"], e["action"]) for e in report["edits"]] == [("read-pages-member", "drop-read-pages")]
    assert Path(report["output"]).read_bytes() == data.replace(PAGES.encode(), b"", 1)
