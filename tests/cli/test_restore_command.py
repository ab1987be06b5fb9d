"""The undo and the other live commands from the command line: `restore PATH`, `restore
--all-since DATE`, `backups [--json]` and `repair-read-pages --in-place`, on real files."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from pipeline.publish.live.backups import read_backup
from pipeline.testing.invoke import compaction
from tests.cli.conftest import backups_of, beside_backups, committed, in_place, make_idle, originals, sha
from tests.publish.live.test_read_pages_repair import PAGES, session


def run(tmp: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """A live command with the state directory of `in_place` runs under `tmp`."""
    return compaction(*args, "--state-dir", str(tmp / "state"), cwd=cwd)


def compacted(fleet: Path, tmp: Path) -> tuple[dict[Path, bytes], dict[Path, bytes]]:
    """One in-place night: every original, and the replaced ones' originals."""
    before = originals(fleet)
    code, summary, output = in_place(fleet, tmp, "--no-verify-resume")
    assert code == 0 and committed(summary) >= 3, output
    return before, {path: data for path, data in before.items() if path.read_bytes() != data}


def test_restore_path_gives_back_the_original_byte_for_byte_and_keeps_the_compacted_file(
    idle_fleet: Path, tmp_path: Path
) -> None:
    _, replaced = compacted(idle_fleet, tmp_path)
    path, original = next(iter(replaced.items()))
    compact = path.read_bytes()
    done = run(tmp_path, "restore", str(path), "--report-dir", str(tmp_path / "undo"))
    assert done.returncode == 0, done.stderr
    assert sha(path.read_bytes()) == sha(original)
    assert f"restored {path}" in done.stdout
    assert read_backup(backups_of(tmp_path, idle_fleet, path)[1]) == compact  # the undo is undoable too
    assert beside_backups(idle_fleet) == []  # in the archive, not in the agent's folder
    [report] = (tmp_path / "undo").rglob("*.restore.json")
    assert path.name in report.name
    untouched = {p: p.read_bytes() for p in replaced if p != path}
    assert all(data != replaced[p] for p, data in untouched.items())  # only the one named


def test_restore_all_since_gives_back_every_original_and_a_later_date_restores_nothing(
    idle_fleet: Path, tmp_path: Path
) -> None:
    started = datetime.now(UTC) - timedelta(seconds=2)
    before, replaced = compacted(idle_fleet, tmp_path)
    after = originals(idle_fleet)
    later = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    done = run(tmp_path, "restore", "--all-since", later, str(idle_fleet), "--quiet")
    assert done.returncode == 0, done.stderr
    assert originals(idle_fleet) == after  # nothing was backed up since then
    done = run(tmp_path, "restore", "--all-since", started.isoformat(), str(idle_fleet))
    assert done.returncode == 0, done.stderr
    assert sum(line.startswith("restored /") for line in done.stdout.splitlines()) == len(replaced)
    assert {p: sha(d) for p, d in originals(idle_fleet).items()} == {p: sha(d) for p, d in before.items()}


def test_restore_refuses_a_file_that_is_not_our_output_unless_forced(
    idle_fleet: Path, tmp_path: Path
) -> None:
    _, replaced = compacted(idle_fleet, tmp_path)
    path, original = next(iter(replaced.items()))
    with path.open("ab") as handle:  # the user went on working in the compacted session
        handle.write(b'{"type":"user","note":"new work"}\n')
    worked_on = path.read_bytes()
    refused = run(tmp_path, "restore", str(path))
    assert refused.returncode == 1
    assert "not-our-output" in refused.stderr and "Traceback" not in refused.stderr
    assert path.read_bytes() == worked_on
    forced = run(tmp_path, "restore", str(path), "--force")
    assert forced.returncode == 0, forced.stderr
    assert path.read_bytes() == original
    kept = [read_backup(p) for p in backups_of(tmp_path, idle_fleet, path)]
    assert worked_on in kept  # the work done after the night is not lost either


def test_restore_never_puts_another_sessions_backup_into_a_session_even_forced(
    idle_fleet: Path, tmp_path: Path
) -> None:
    _, replaced = compacted(idle_fleet, tmp_path)
    (a, _), (b, _) = list(replaced.items())[:2]
    b_now = b.read_bytes()
    a_backup = backups_of(tmp_path, idle_fleet, a)[0]
    b_folder = backups_of(tmp_path, idle_fleet, b)[0].parent
    renamed = b_folder / (
        b.name + ".backup7" + a_backup.suffix
    )  # a's backup under b's name: caught by digest
    renamed.write_bytes(a_backup.read_bytes())
    for backup in (a_backup, renamed):
        for force in ((), ("--force",)):
            done = run(tmp_path, "restore", str(b), "--backup", str(backup), *force)
            assert done.returncode == 1 and "Traceback" not in done.stderr
            assert "backup-of-another-session" in done.stderr and len(done.stderr.splitlines()) == 1
            assert b.read_bytes() == b_now


def test_restore_twice_is_a_no_op_and_undoing_a_restore_needs_no_force(
    idle_fleet: Path, tmp_path: Path
) -> None:
    _, replaced = compacted(idle_fleet, tmp_path)
    path, original = next(iter(replaced.items()))
    compact = path.read_bytes()
    assert run(tmp_path, "restore", str(path)).returncode == 0
    again = run(tmp_path, "restore", str(path))
    assert again.returncode == 0, again.stderr
    assert "already restored" in again.stdout and path.read_bytes() == original
    undo = run(tmp_path, "restore", str(path), "--backup", str(backups_of(tmp_path, idle_fleet, path)[1]))
    assert undo.returncode == 0, undo.stderr
    assert path.read_bytes() == compact  # the compacted file is back, without --force
    redo = run(tmp_path, "restore", str(path))
    assert redo.returncode == 0, redo.stderr
    assert path.read_bytes() == original  # and a plain restore brings the original back again


def test_restore_says_what_is_wrong_with_a_session_never_compacted_or_a_directory(
    idle_fleet: Path, tmp_path: Path
) -> None:
    never = next(idle_fleet.rglob("*.jsonl"))
    done = run(tmp_path, "restore", str(never))
    assert done.returncode == 1 and "no backup of this session" in done.stderr
    directory = run(tmp_path, "restore", str(idle_fleet))
    assert directory.returncode == 2 and len(directory.stderr.splitlines()) == 1
    assert "restore takes session files, or --all-since DATE with roots" in directory.stderr
    empty = run(tmp_path, "restore", "--all-since", "", str(idle_fleet))
    assert empty.returncode == 2 and empty.stderr.startswith("compaction: error: --all-since")


def test_a_usage_error_of_restore_is_one_line_and_exit_2(idle_fleet: Path, tmp_path: Path) -> None:
    for args in (("restore",), ("restore", "--all-since", "last tuesday", str(idle_fleet))):
        done = run(tmp_path, *args)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert done.stderr.startswith("compaction: error:") and len(done.stderr.splitlines()) == 1


def test_backups_lists_each_backup_once_with_its_size_digest_and_session(
    idle_fleet: Path, tmp_path: Path
) -> None:
    _, replaced = compacted(idle_fleet, tmp_path)
    relative = idle_fleet.relative_to(tmp_path)  # as a user types it: a recorded backup is listed once
    done = run(tmp_path, "backups", str(relative), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    listing: list[dict[str, Any]] = json.loads(done.stdout)
    assert len(listing) == len(replaced)
    by_session = {Path(entry["session"]): entry for entry in listing}
    assert set(by_session) == {path.resolve() for path in replaced}
    for path, original in replaced.items():
        entry = by_session[path.resolve()]
        assert entry["recorded"] is True and entry["sha256"] == sha(original)
        assert entry["original_bytes"] == len(original) > entry["stored_bytes"]  # compressed in the archive
        assert [Path(entry["path"])] == backups_of(tmp_path, idle_fleet, path)
        assert datetime.fromisoformat(entry["created"]) > datetime.now(UTC) - timedelta(minutes=10)
    table = run(tmp_path, "backups", str(idle_fleet))
    assert table.returncode == 0 and f"{len(replaced)} backups" in table.stdout


@pytest.fixture
def pages_root(tmp_path: Path) -> Path:
    """A session that read a document by pages (answered) and asks for another (pending)."""
    builder = session(pending=True)
    builder.last_prompt()  # the strict leaf policy's pointer, as Claude Code writes it
    builder.write(tmp_path / "home" / "projects" / "p" / "s.jsonl")
    make_idle(tmp_path / "home" / "projects")
    return tmp_path / "home" / "projects"


def repair(tmp: Path, root: Path, *extra: str, reports: str) -> tuple[int, dict[str, Any]]:
    done = run(tmp, "repair-read-pages", str(root), "--report-dir", str(tmp / reports), "--quiet", *extra)
    assert "Traceback" not in done.stderr
    return done.returncode, json.loads((tmp / reports / "summary.json").read_text())


def test_repair_read_pages_in_place_deletes_the_member_once_and_a_second_pass_finds_nothing(
    pages_root: Path, tmp_path: Path
) -> None:
    live = pages_root / "p" / "s.jsonl"
    original = live.read_bytes()
    code, first = repair(tmp_path, pages_root, "--in-place", reports="r1")
    assert code == 0 and first["by_disposition"] == {"committed": 1}
    assert first["patches"] == 1 and first["by_verdict"] == {"pending": 1, "repairable": 1}
    assert live.read_bytes() == original.replace(PAGES.encode(), b"", 1)  # that member's bytes only
    [backup] = backups_of(tmp_path, pages_root, live)
    assert read_backup(backup) == original
    repaired = live.read_bytes()
    code, second = repair(tmp_path, pages_root, "--in-place", reports="r2")
    assert code == 0 and second["by_disposition"] == {"skipped-unchanged-output": 1}
    code, rescanned = repair(tmp_path, pages_root, reports="r3")  # report mode: the rules again
    assert code == 0 and rescanned["patches"] == 0 and rescanned["by_verdict"] == {"pending": 1}
    assert live.read_bytes() == repaired and backups_of(tmp_path, pages_root, live) == [backup]
    undo = run(tmp_path, "restore", str(live), "--quiet")
    assert undo.returncode == 0, undo.stderr
    assert live.read_bytes() == original


@pytest.mark.parametrize(
    ("command", "explains"),
    [
        (
            "compress",
            ("--in-place", "--idle-for", "--confirm-sessions-closed", "--backup-dir", "exit codes: 0"),
        ),
        (
            "restore",
            ("--all-since", "--force", "Only over the output an in-place run published", "exit codes"),
        ),
        ("backups", ("--json", "sizes and dates")),
        ("repair-read-pages", ("--in-place", "--out", "pending calls are only reported", "exit codes")),
    ],
)
def test_the_help_of_each_live_command_explains_it(command: str, explains: tuple[str, ...]) -> None:
    done = compaction(command, "--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())  # as wrapped for any terminal width
    assert [phrase for phrase in explains if phrase not in text] == []


def test_repair_read_pages_follows_the_auto_leaf_policy_and_reports_under_the_state_directory(
    tmp_path: Path,
) -> None:
    """A session whose pointer carries no leaf (most real ones) is repaired by default, and a
    report-only run writes its reports under the state directory, as its help says."""
    builder = session()
    builder.last_prompt(with_leaf=False)  # text only, as many Claude Code versions write it
    root = tmp_path / "home" / "projects"
    builder.write(root / "p" / "s.jsonl")
    make_idle(root)
    code, planned = repair(tmp_path, root, reports="r1")
    assert code == 0 and planned["patches"] == 1
    done = run(tmp_path, "repair-read-pages", str(root), "--quiet")
    assert done.returncode == 0, done.stderr
    [summary] = (tmp_path / "state").rglob("summary.json")
    assert json.loads(summary.read_text())["patches"] == 1
