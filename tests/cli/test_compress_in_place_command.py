"""`compaction compress ROOTS --in-place` as a cron job runs it: what is replaced, what is left
alone and why, the backups it keeps, and how it exits."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
import zstandard

from pipeline.core.check.structure import structural_failures
from pipeline.core.topology.select import AUTO
from pipeline.live_vocabulary import StateSync
from pipeline.publish.live.backups import read_backup
from pipeline.publish.live.state_db import StateOptions, open_state
from pipeline.testing.invoke import compaction
from pipeline.testing.settings import LIMITS
from tests.cli.conftest import (
    DAY,
    SMALL,
    backups_of,
    beside_backups,
    committed,
    in_place,
    make_idle,
    originals,
    sha,
)
from tests.conftest import RESUME_GATE_ENV
from tests.support.rollout_builder import RolloutBuilder


def test_idle_sessions_are_compacted_in_place_with_a_verified_backup_and_recent_ones_left_alone(
    idle_fleet: Path, tmp_path: Path
) -> None:
    before = originals(idle_fleet)
    recent = sorted(before)[0]
    os.utime(recent, None)  # written to just now
    code, summary, output = in_place(idle_fleet, tmp_path, "--idle-for", "12h", "--no-verify-resume")
    assert code == 0, output
    totals = summary["in_place"]
    assert totals["by_disposition"]["skipped-recently-modified"] == 1
    assert committed(summary) >= 3
    assert [e["session"] for e in totals["not_built"]] == [f"projects/{recent.relative_to(idle_fleet)}"]
    assert recent.read_bytes() == before[recent]
    replaced = 0
    for path, original in before.items():
        now = path.read_bytes()
        if now == original:
            assert not backups_of(tmp_path, idle_fleet, path)  # nothing replaced, nothing kept
            continue
        replaced += 1
        assert len(now) < len(original) and not structural_failures(now, AUTO, LIMITS)
        [backup] = backups_of(tmp_path, idle_fleet, path)
        assert read_backup(backup) == original  # byte for byte, in the archive, compressed
        assert backup.stat().st_size < len(original)
        report = json.loads(
            (tmp_path / "r1" / f"projects/{path.relative_to(idle_fleet)}.report.json").read_text()
        )
        receipt = report["in_place"]["receipt"]
        assert report["status"] == "compressed" and report["in_place"]["disposition"] == "committed"
        assert receipt["operation_state"] == "committed" and receipt["backup"]["sha256"] == sha(original)
        assert receipt["hashes"] == {"frozen": sha(original), "candidate": sha(now), "published": sha(now)}
        assert os.stat(path).st_mtime == pytest.approx(time.time() - 2 * DAY, abs=60)  # times kept
    assert replaced == committed(summary)
    assert beside_backups(idle_fleet) == []  # nothing inside the agent's folders


def test_confirm_sessions_closed_replaces_the_idle_rule(idle_fleet: Path, tmp_path: Path) -> None:
    for path in idle_fleet.rglob("*.jsonl"):
        os.utime(path, None)  # every session written to just now
    code, waiting, output = in_place(idle_fleet, tmp_path, "--idle-for", "12h", "--no-verify-resume")
    assert code == 0, output
    assert set(waiting["in_place"]["by_disposition"]) == {"skipped-recently-modified"}
    code, summary, output = in_place(
        idle_fleet,
        tmp_path,
        "--idle-for",
        "12h",
        "--confirm-sessions-closed",
        "--no-verify-resume",
        reports="r2",
    )
    assert code == 0, output
    assert "skipped-recently-modified" not in summary["in_place"]["by_disposition"]
    assert committed(summary) >= 3


def test_the_second_night_does_no_work_writes_no_session_report_and_says_why(
    idle_fleet: Path, tmp_path: Path
) -> None:
    code, first, output = in_place(idle_fleet, tmp_path, "--no-verify-resume")
    assert code == 0, output
    assert first["in_place"]["built"] > 0
    after_first = originals(idle_fleet)
    code, second, output = in_place(idle_fleet, tmp_path, "--no-verify-resume", reports="r2", quiet=False)
    assert code == 0, output
    totals = second["in_place"]
    assert totals["built"] == 0 and totals["hashed"] == 0
    assert totals["by_disposition"] == {
        "skipped-unchanged-output": committed(first),
        "skipped-unchanged-declined": first["in_place"]["by_disposition"]["declined"],
    }
    assert "skipped-unchanged-output" in output and "skipped-unchanged-declined" in output  # the table
    assert originals(idle_fleet) == after_first
    assert not list((tmp_path / "r2").rglob("*.report.json"))
    assert totals["work_dir"] is None  # nothing to build: no work directory was even made


def test_a_session_written_to_after_a_night_is_taken_again(idle_fleet: Path, tmp_path: Path) -> None:
    code, _, output = in_place(idle_fleet, tmp_path, "--no-verify-resume", "--idle-for", "1h")
    assert code == 0, output
    target = sorted(idle_fleet.rglob("*.jsonl"))[1]
    with target.open("ab") as handle:
        handle.write(b"\n")
    old = time.time() - DAY
    os.utime(target, (old, old))
    code, summary, output = in_place(
        idle_fleet, tmp_path, "--no-verify-resume", "--idle-for", "1h", reports="r2"
    )
    assert code == 0, output
    assert summary["in_place"]["built"] == 1
    assert [entry["session"] for entry in summary["reports"]] == [
        f"projects/{target.relative_to(idle_fleet)}"
    ]


def fake_claude(tmp_path: Path) -> Path:
    """A "Claude Code" that finds no conversation to resume: nothing it resumes is ever proven."""
    script = tmp_path / "claude"
    script.write_text("#!/bin/sh\necho 'No conversation found with session ID: x' >&2\nexit 1\n")
    script.chmod(0o755)
    return script


def test_a_candidate_claude_code_did_not_prove_never_replaces_a_session(
    idle_fleet: Path, tmp_path: Path
) -> None:
    before = originals(idle_fleet)
    code, summary, output = in_place(
        idle_fleet, tmp_path, "--verify-resume", "--claude", str(fake_claude(tmp_path))
    )
    assert code == 1, output
    dispositions = summary["in_place"]["by_disposition"]
    assert dispositions["refused-unproven"] >= 3 and "committed" not in dispositions
    assert originals(idle_fleet) == before
    assert not list(idle_fleet.rglob("*.backup*"))
    refused = [
        report["in_place"]
        for report in map(json.loads, map(Path.read_text, (tmp_path / "r1").rglob("*.report.json")))
        if report["in_place"]["disposition"] == "refused-unproven"
    ]
    assert len(refused) == dispositions["refused-unproven"]
    assert all(section["reasons"] == ["resume-proof-missing"] for section in refused)


def test_without_claude_code_the_run_stops_before_any_session_unless_the_gate_is_off(
    idle_fleet: Path, tmp_path: Path
) -> None:
    before = originals(idle_fleet)
    code, _, output = in_place(idle_fleet, tmp_path, "--verify-resume", "--claude", str(tmp_path / "nowhere"))
    assert code == 2
    assert "--no-verify-resume" in output and "Traceback" not in output
    assert not (tmp_path / "state").exists() or not list((tmp_path / "state").glob("*.sqlite3"))
    assert originals(idle_fleet) == before


def test_a_second_run_on_the_same_state_directory_is_refused_with_exit_2(
    idle_fleet: Path, tmp_path: Path
) -> None:
    before = originals(idle_fleet)
    with open_state(StateOptions(tmp_path / "state", 5.0, StateSync.NORMAL)):  # a run holding the lock
        code, _, output = in_place(idle_fleet, tmp_path, "--no-verify-resume")
    assert code == 2
    assert "another compaction run is using the state directory" in output and "Traceback" not in output
    assert originals(idle_fleet) == before and not list(idle_fleet.rglob("*.backup*"))
    code, summary, output = in_place(idle_fleet, tmp_path, "--no-verify-resume")  # the lock is gone
    assert code == 0 and committed(summary) >= 3, output


def receipts_of(output: str) -> list[dict[str, object]]:
    """The JSON lines a run printed (its receipts), among its other lines."""
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def test_a_summary_that_cannot_be_written_after_the_commits_exits_3_with_every_receipt(
    idle_fleet: Path, tmp_path: Path
) -> None:
    blocker = tmp_path / "reports" / "summary.json" / "in-the-way"
    blocker.mkdir(parents=True)  # the summary cannot take its name: a directory holds it
    done = compaction(
        "compress", str(idle_fleet), "--in-place", "--state-dir", str(tmp_path / "state"), "--report-dir",
        str(tmp_path / "reports"), "--no-verify-resume", "--quiet", "--jobs", "1", *SMALL,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    receipts = receipts_of(done.stdout)
    assert len(receipts) >= 3 and {r["operation_state"] for r in receipts} == {"committed"}  # reports written
    assert "committed-report-failed" in done.stderr and "Traceback" not in done.stderr
    for receipt in receipts:  # the committed files are valid and keep their backups
        live = Path(str(receipt["path"]))
        hashes, backup = receipt["hashes"], receipt["backup"]
        assert isinstance(hashes, dict) and isinstance(backup, dict)
        assert sha(live.read_bytes()) == hashes["published"]
        assert sha(read_backup(Path(backup["path"]))) == hashes["frozen"]


def test_one_report_that_cannot_be_written_exits_3_with_that_receipt_only(
    idle_fleet: Path, tmp_path: Path
) -> None:
    biggest = max(idle_fleet.rglob("*.jsonl"), key=lambda path: path.stat().st_size)
    original = biggest.read_bytes()
    in_the_way = tmp_path / "r1" / f"projects/{biggest.relative_to(idle_fleet)}.report.json"
    in_the_way.mkdir(parents=True)  # a directory where its report goes: the rename onto it fails
    code, summary, output = in_place(idle_fleet, tmp_path, "--no-verify-resume")
    assert code == 3, output
    [receipt] = receipts_of(output)
    assert receipt["operation_state"] == "committed-report-failed" and receipt["path"] == str(biggest)
    assert receipt["hashes"] == {"frozen": sha(original), "candidate": sha(biggest.read_bytes()),
                                 "published": sha(biggest.read_bytes())}  # fmt: skip
    assert [r["path"] for r in summary["in_place"]["committed_report_failed"]] == [str(biggest)]
    assert committed(summary) >= 3  # the others were reported as usual
    written = [path for path in (tmp_path / "r1").rglob("*.report.json") if path.is_file()]
    assert len(written) == len(originals(idle_fleet)) - 1


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("--out", "somewhere"), "--in-place and --out exclude each other"),
        (("--idle-for", "soon"), "argument --idle-for: not a duration"),
        (("--backup-compression", "xz"), "invalid choice"),
        (("--work-dir", "{home}/.claude/work"), "outside any .claude directory"),
        (("--max-run-tokens", "5"), "--max-run-tokens bounds a model summarizer's billed tokens"),
        (("--dry-run",), "--dry-run plans a compress --out run's model calls"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    idle_fleet: Path, tmp_path: Path, arguments: tuple[str, ...], message: str
) -> None:
    before = originals(idle_fleet)
    given = [a.replace("{home}", str(tmp_path)) for a in arguments]
    code, _, output = in_place(idle_fleet, tmp_path, "--no-verify-resume", *given)
    assert code == 2
    assert message in output and "Traceback" not in output
    assert originals(idle_fleet) == before


def test_backups_can_go_to_a_backup_directory_compressed(idle_fleet: Path, tmp_path: Path) -> None:
    before = originals(idle_fleet)
    backups = tmp_path / "archive"
    code, summary, output = in_place(
        idle_fleet,
        tmp_path,
        "--no-verify-resume",
        "--backup-dir",
        str(backups),
        "--backup-compression",
        "gzip",
    )
    assert code == 0, output
    assert summary["in_place"]["backup_dir"] == str(backups.resolve())
    replaced = {path: data for path, data in before.items() if path.read_bytes() != data}
    stored = sorted(backups.rglob("*.backup.gz"))
    assert len(stored) == len(replaced) == committed(summary)
    assert sorted(sha(read_backup(p)) for p in stored) == sorted(sha(data) for data in replaced.values())
    assert all(p.read_bytes()[:2] == b"\x1f\x8b" for p in stored)  # gzip on disk, the original decoded
    assert not list(idle_fleet.rglob("*.backup*"))


def _in_place_reports(directory: Path) -> dict[str, tuple[str, str]]:
    found = {}
    for path in sorted(directory.rglob("*.report.json")):
        report = json.loads(path.read_text())
        found[path.relative_to(directory).as_posix()] = (report["status"], report["in_place"]["disposition"])
    return found


def test_in_place_on_a_local_dask_cluster_does_what_the_process_pool_does(
    idle_fleet: Path, tmp_path: Path
) -> None:
    pytest.importorskip("distributed")
    twin = tmp_path / "twin" / "home" / "projects"
    shutil.copytree(idle_fleet, twin, symlinks=True)
    before = originals(twin)
    code, local, output = in_place(idle_fleet, tmp_path, "--no-verify-resume")
    assert code == 0, output
    on_dask = tmp_path / "twin"
    code, dask, output = in_place(twin, on_dask, "--no-verify-resume", "--cluster", "local:2")
    assert code == 0, output
    assert dask["in_place"]["by_disposition"] == local["in_place"]["by_disposition"]
    assert committed(dask) >= 3
    assert _in_place_reports(on_dask / "r1") == _in_place_reports(tmp_path / "r1")
    for path, original in before.items():
        if path.read_bytes() != original:
            assert read_backup(backups_of(on_dask, twin, path)[0]) == original
    code, _, output = in_place(twin, on_dask, "--cluster", "tcp://127.0.0.1:1", reports="r2")
    assert code == 2 and "--cluster local:N at most" in output and "Traceback" not in output


def test_in_place_repairs_damage_in_the_kept_tail_first_and_keeps_the_damaged_original(
    tmp_path: Path,
) -> None:
    from pipeline.testing.fuzz import Mutation, plant, result_lines
    from pipeline.testing.sessions import build_session

    root = tmp_path / "home" / "projects"
    clean = tmp_path / "clean.jsonl"
    build_session(clean, turns=8)
    data = clean.read_bytes()
    session = root / "p" / "damaged.jsonl"
    session.parent.mkdir(parents=True)
    damaged = plant(data, Mutation.ORPHAN_RESULT, result_lines(data)[-1])  # the protected round's
    session.write_bytes(damaged)
    make_idle(root)
    code, _, output = in_place(root, tmp_path, "--no-verify-resume")
    assert code == 0, output
    report = json.loads((tmp_path / "r1" / "projects" / "p" / "damaged.jsonl.report.json").read_text())
    assert report["status"] == "compressed" and report["in_place"]["disposition"] == "committed"
    assert report["source_repair"]["status"] == "repaired"
    assert "tool-result-mismatch" in {e["code"] for e in report["source_repair"]["edits"]}
    receipt = report["in_place"]["receipt"]
    assert receipt["hashes"]["frozen"] == sha(damaged)  # the backup is of the damaged original
    assert read_backup(Path(receipt["backup"]["path"])) == damaged
    assert len(session.read_bytes()) < len(damaged)
    assert not structural_failures(session.read_bytes(), AUTO, LIMITS)
    # --no-repair leaves it as it was, refused, naming the fix.
    session.write_bytes(damaged)
    make_idle(root)
    code, _, output = in_place(root, tmp_path, "--no-verify-resume", "--no-repair", reports="r2")
    assert code == 1, output
    report = json.loads((tmp_path / "r2" / "projects" / "p" / "damaged.jsonl.report.json").read_text())
    assert report["status"] == "refused" and report["source_repair"]["status"] == "off"
    assert session.read_bytes() == damaged


def _idle_rollout(folder: Path) -> Path:
    """A long Codex rollout in Codex's own tree, last written two days ago."""
    b = RolloutBuilder(seed=41)
    b.context()
    for number in range(12):
        b.exchange(f"task number {number}: fix the parser in module_{number}.py", tools=3, output_bytes=3000)
    folder.mkdir(parents=True)
    path = b.write(folder / f"rollout-2026-03-01T12-00-00-{b.session_id}.jsonl")
    os.utime(path, (time.time() - 2 * DAY,) * 2)
    return path


def _in_place_without_claude_code(
    roots: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, list[dict[str, Any]]]:
    """`compress --in-place` in this process with the default gate and no Claude Code anywhere
    (this checkout holds the pinned build, so where it is looked for is the one patched part)."""
    from pipeline import installed
    from pipeline.cli.main import main

    monkeypatch.setattr(installed, "_search_places", lambda root: [tmp_path / "no-claude-here"])
    monkeypatch.delenv(RESUME_GATE_ENV)
    code = main([
        "compress", *map(str, roots), "--in-place", "--state-dir", str(tmp_path / "state"),
        "--report-dir", str(tmp_path / "reports"), "--jobs", "1", "--quiet", *SMALL,
    ])  # fmt: skip
    return code, [json.loads(p.read_text()) for p in sorted((tmp_path / "reports").rglob("*.report.json"))]


@pytest.mark.codex
def test_a_codex_only_tree_runs_in_place_with_no_claude_code_installed(
    codex: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rollout = _idle_rollout(tmp_path / ".codex" / "sessions" / "2026" / "03" / "01")
    before = rollout.read_bytes()
    code, reports = _in_place_without_claude_code([tmp_path / ".codex" / "sessions"], tmp_path, monkeypatch)
    assert code == 0, reports
    (report,) = reports
    assert report["in_place"]["disposition"] == "committed" and report["resume_check"]["verdict"] == "match"
    backup = Path(report["in_place"]["receipt"]["backup"]["path"])  # in the archive, not beside it
    assert rollout.read_bytes() != before and read_backup(backup) == before
    assert not beside_backups(tmp_path / ".codex")
    summary = json.loads((tmp_path / "reports" / "summary.json").read_text())
    assert summary["options"]["verify_resume"] and summary["options"]["claude"] is None  # Codex judged


@pytest.mark.codex
def test_a_mixed_tree_without_claude_code_leaves_only_the_claude_code_sessions_as_they_are(
    codex: Path, idle_fleet: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rollout = _idle_rollout(tmp_path / "home" / ".codex" / "sessions" / "2026" / "03" / "01")
    claude_sessions = originals(idle_fleet)
    code, reports = _in_place_without_claude_code(
        [idle_fleet, tmp_path / "home" / ".codex" / "sessions"], tmp_path, monkeypatch
    )
    assert code == 1  # sessions were refused: the run says so, and nothing of theirs changed
    by_format = {(r["session"]["format"], r["in_place"]["disposition"]) for r in reports}
    assert ("codex-rollout", "committed") in by_format
    assert {d for f, d in by_format if f == "claude-code"} <= {"refused-unproven", "declined"}
    assert ("claude-code", "refused-unproven") in by_format
    assert originals(idle_fleet) == claude_sessions and b'"type":"compacted"' in rollout.read_bytes()


@pytest.mark.codex
def test_a_cold_rollout_is_replaced_in_place_compressed_as_it_was(
    codex: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = _idle_rollout(tmp_path / ".codex" / "sessions" / "2026" / "03" / "01")
    cold = plain.with_name(plain.name + ".zst")
    cold.write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    plain.unlink()
    os.utime(cold, (time.time() - 2 * DAY,) * 2)
    before = cold.read_bytes()
    code, reports = _in_place_without_claude_code([tmp_path / ".codex" / "sessions"], tmp_path, monkeypatch)
    assert code == 0, reports
    (report,) = reports
    assert report["in_place"]["disposition"] == "committed" and report["resume_check"]["verdict"] == "match"
    replaced = zstandard.ZstdDecompressor().stream_reader(cold.read_bytes()).read()  # still zstd
    assert b'"type":"compacted"' in replaced and not plain.exists()
    assert read_backup(Path(report["in_place"]["receipt"]["backup"]["path"])) == before
