"""The archive and its retention from the command line: where nightly backups go by default, what
`backups --prune` would remove and does remove with `--yes`, what `restore` says of a pruned backup,
`last:1` over two nights, `backups --move-to-archive`, and the space a run reports."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from pipeline.publish.live.backups import read_backup
from pipeline.testing.invoke import compaction
from pipeline.testing.sessions import build_session
from tests.cli.conftest import DAY, backups_of, beside_backups, committed, in_place, originals, sha

REAL_SESSIONS = (
    "-Users-dain-workspace-claude-code-log-sample_07f2e15c-a38b-454b-9148-60edc06de401.jsonl",
    "-Users-dain-workspace-claude-code-log-sample_937c6e6b-27e7-4edd-86f1-ad28f9731841.jsonl",
    "-Users-dain-workspace-claude-code-log-sample_fe869ecb-c176-478f-9734-7e4b8ef12cff.jsonl",
    "-Users-dain-workspace-claude-code-log-sample_37f83ec9-f2ea-42a9-925e-0d5c105cb6e8.jsonl",
)


def run(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A live command with the state directory of `in_place` runs under `tmp`."""
    return compaction(*args, "--state-dir", str(tmp / "state"))


def archived(tmp: Path) -> dict[Path, bytes]:
    """Every backup file in the archive, with the original bytes it decodes to."""
    folder = tmp / "state" / "archive"
    return {p: read_backup(p) for p in sorted(folder.rglob("*.backup*")) if not p.name.startswith(".")}


def test_prune_lists_without_removing_unless_yes_and_restore_then_says_when(
    idle_fleet: Path, tmp_path: Path
) -> None:
    before = originals(idle_fleet)
    code, summary, output = in_place(idle_fleet, tmp_path, "--no-verify-resume")
    assert code == 0 and committed(summary) >= 3, output
    stored = archived(tmp_path)
    assert len(stored) == committed(summary) and beside_backups(idle_fleet) == []
    on_disk = sum(path.stat().st_size for path in stored)  # compressed
    assert summary["archive"]["backup_bytes_added"] == on_disk
    # Every backup is the only copy of what its session's summary replaced: kept, and said so.
    kept = run(tmp_path, "backups", str(idle_fleet), "--prune", "--keep", "last:0", "--yes")
    assert kept.returncode == 0, kept.stderr
    assert "only copy of the history" in kept.stdout and archived(tmp_path) == stored
    explicit = tmp_path / "explicit.toml"
    explicit.write_text("[in_place]\nprune_only_copies = true\n")
    how = ("--prune", "--keep", "last:0", "--config", str(explicit))
    dry = run(tmp_path, "backups", str(idle_fleet), *how)
    assert dry.returncode == 0, dry.stderr
    assert f"{len(stored)} of {len(stored)} backups would prune (dry run: add --yes" in dry.stdout
    assert archived(tmp_path) == stored  # a dry run removes nothing
    done = run(tmp_path, "backups", str(idle_fleet), *how, "--yes", "--json")
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["applied"] is True and report["pruned"] == report["prune"] == len(stored)
    assert report["pruned_bytes"] == on_disk
    assert archived(tmp_path) == {}
    compacted = next(path for path, data in before.items() if path.read_bytes() != data)
    undo = run(tmp_path, "restore", str(compacted))
    assert undo.returncode == 1 and "Traceback" not in undo.stderr
    assert "backup-pruned" in undo.stderr and f"was pruned on {time.strftime('%Y-%m-%d')}" in undo.stderr


def _night(root: Path, turns: int) -> None:
    """The sessions as the agent left them that night (they grew), last written two days ago."""
    for seed in range(3):
        path = root / "-repo" / f"s{seed}.jsonl"
        build_session(path, turns=turns, seed=seed)
        old = time.time() - 2 * DAY
        os.utime(path, (old, old))


def test_last_1_keeps_one_backup_per_session_after_a_second_night(tmp_path: Path) -> None:
    root = tmp_path / "home" / "projects"
    nights = []
    for night, turns in enumerate((10, 14), 1):
        _night(root, turns)
        grown = originals(root)
        code, summary, output = in_place(
            root, tmp_path, "--no-verify-resume", "--keep", "last:1", reports=f"n{night}"
        )
        assert code == 0 and committed(summary) == 3, output
        nights.append(summary["archive"])
        for path, data in grown.items():
            [backup] = backups_of(tmp_path, root, path)  # one per session, the newest
            assert read_backup(backup) == data
    first, second = nights
    assert first["backups_added"] == 3 and first["backups_pruned"] == 0
    assert second["backups_added"] == 3 and second["backups_pruned"] == 3
    assert second["backup_bytes_pruned"] == first["backup_bytes_added"]
    assert beside_backups(root) == []


def test_move_to_archive_takes_backups_out_of_the_session_folders_and_restore_still_works(
    idle_fleet: Path, tmp_path: Path
) -> None:
    before = originals(idle_fleet)
    code, summary, output = in_place(idle_fleet, tmp_path, "--no-verify-resume", "--backup-beside")
    assert code == 0, output
    beside = beside_backups(idle_fleet)
    assert len(beside) == committed(summary) >= 3 and summary["archive"]["placement"] == "beside"
    stray = beside[0].with_name("elsewhere.jsonl.backup")  # a backup no run recorded: moved too
    stray.write_bytes(b'{"type":"user"}\n')
    listed = run(tmp_path, "backups", str(idle_fleet), "--json")
    assert len(json.loads(listed.stdout)) == len(beside) + 1
    moved = run(tmp_path, "backups", str(idle_fleet), "--move-to-archive")
    assert moved.returncode == 0, moved.stderr
    assert beside_backups(idle_fleet) == []
    assert sorted(sha(data) for data in archived(tmp_path).values()) == sorted(
        [sha(b'{"type":"user"}\n')]
        + [sha(data) for path, data in before.items() if path.read_bytes() != data]
    )
    undo = run(tmp_path, "restore", "--all-since", "2000-01-01", str(idle_fleet), "--quiet")
    assert undo.returncode == 0, undo.stderr
    assert originals(idle_fleet) == before  # from the archive, byte for byte


def test_yes_without_prune_is_a_usage_error(idle_fleet: Path, tmp_path: Path) -> None:
    done = run(tmp_path, "backups", str(idle_fleet), "--yes")
    assert done.returncode == 2 and "--yes confirms --prune" in done.stderr
    bad = run(tmp_path, "backups", str(idle_fleet), "--prune", "--keep", "forever")
    assert bad.returncode == 2 and "not a retention" in bad.stderr and "Traceback" not in bad.stderr


def test_a_night_over_real_sessions_leaves_no_backup_in_the_agent_folders_and_gives_space_back(
    corpus_files: Path, tmp_path: Path
) -> None:
    """The default settings over real Claude Code sessions: live sessions plus the archive take at
    most 40% of the original bytes, and every original comes back byte for byte."""
    root = tmp_path / "home" / ".claude" / "projects"
    for session in REAL_SESSIONS:  # real Claude Code sessions that compact under the defaults
        source = corpus_files / f"iansherr__claude-code-log__test_test_data_real_projects_{session}"
        target = root / session.split("_", 1)[0] / session.split("_", 1)[1]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes())
    before = originals(root)
    old = time.time() - 2 * DAY
    for path in before:
        os.utime(path, (old, old))
    done = compaction(
        "compress", str(root), "--in-place", "--state-dir", str(tmp_path / "state"),
        "--report-dir", str(tmp_path / "r"), "--no-verify-resume", "--quiet",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    space = json.loads((tmp_path / "r" / "summary.json").read_text())["archive"]
    assert beside_backups(root) == [] and space["placement"] == "archive"
    archive_bytes = sum(p.stat().st_size for p in archived(tmp_path))
    original_bytes = sum(len(data) for data in before.values())
    assert space["live_bytes_before"] == original_bytes and space["backup_bytes_added"] == archive_bytes
    assert space["live_bytes_after"] + archive_bytes <= 0.40 * original_bytes, space
    undo = run(tmp_path, "restore", "--all-since", "2000-01-01", str(root), "--quiet")
    assert undo.returncode == 0, undo.stderr
    assert originals(root) == before
