"""OpenClaw's SQLite store through the real command line: `validate`, `tokens` and `compress --out`
give one report per stored session (`<store>#<session-id>.jsonl`), read with the rows a running
OpenClaw still holds in the write-ahead log, and compress writes each candidate as JSONL, byte for
byte the candidate of the same session kept as a file (which the real pi resumes:
test_cli_end_to_end.py); the in-place commands leave the store as it is and say so; a store that
cannot be read is one unreadable report, the sessions beside it go on."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from pipeline.formats.detect import detect_format
from pipeline.testing.invoke import compaction
from pipeline.vocabulary import SourceFormat
from tests.support.openclaw_stores import live_store, store_path
from tests.support.pi_files import FIXTURES

PI = "pi-session"
SMALL = ("--min-tokens", "0", "--target-estimated-tokens", "400")
STORED = {"0b1c-tools": "tools.jsonl", "5d7e-compacted": "compacted.jsonl", "9f2e-branched": "branched.jsonl"}
BESIDE = "4a4a.jsonl"  # a session OpenClaw wrote before it moved to SQLite, beside the store


def _openclaw(root: Path, beside: str = "tools.jsonl") -> tuple[Path, dict[str, bytes]]:
    """An OpenClaw home: one agent's store (its sessions' last lines in the log) and an older
    JSONL session, idle for two days."""
    sessions = root / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    shutil.copyfile(FIXTURES / beside, sessions / BESIDE)
    old = time.time() - 2 * 86_400
    os.utime(sessions / BESIDE, (old, old))
    return store_path(root), {sid: (FIXTURES / name).read_bytes() for sid, name in STORED.items()}


def _reports(folder: Path) -> dict[str, dict[str, Any]]:
    found = [json.loads(path.read_text()) for path in folder.rglob("*.report.json")]
    return {Path(report["session"]["label"]).name: report for report in found}


def _run(*args: str) -> dict[str, dict[str, Any]]:
    done = compaction(*args, "--quiet")
    assert done.returncode == 0, (args[0], done.stderr[-2000:])
    return _reports(Path(args[args.index("--out" if "--out" in args else "--report-dir") + 1]))


def _store_files(store: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in store.parent.glob(f"{store.name}*")}


def test_each_stored_session_is_validated_counted_and_compressed_as_its_own_session(tmp_path: Path) -> None:
    root = tmp_path / "openclaw"
    store, originals = _openclaw(root)
    labels = {f"{store.name}#{sid}.jsonl": data for sid, data in originals.items()}
    with live_store(store, originals, logged=3):
        untouched = _store_files(store)
        validated = _run("validate", str(root), "--report-dir", str(tmp_path / "v"))
        assert set(validated) == {*labels, BESIDE}
        for label, data in labels.items():  # every row, those still in the log too
            session = validated[label]["session"]
            assert (validated[label]["status"], session["format"]) == ("valid", PI)
            assert session["sha256"] == hashlib.sha256(data).hexdigest()
            assert session["label"] == f"agents/main/agent/{label}"
        counted = _run("tokens", str(root), "--out", str(tmp_path / "t"))
        stored_tools = counted[f"{store.name}#0b1c-tools.jsonl"]["tokens"]
        assert stored_tools == counted[BESIDE]["tokens"]  # the same transcript counts the same
        out = tmp_path / "c"
        compressed = _run("compress", str(root), "--out", str(out), *SMALL, "--no-verify-resume")
        assert _store_files(store) == untouched  # read, never written
    assert {label: compressed[label]["status"] for label in labels} == {
        f"{store.name}#0b1c-tools.jsonl": "compressed",
        f"{store.name}#5d7e-compacted.jsonl": "compressed",
        f"{store.name}#9f2e-branched.jsonl": "skipped-fits",
    }
    agent = out / "openclaw" / "agents" / "main"
    made = ("0b1c-tools", "5d7e-compacted")
    candidates = {sid: (agent / "agent" / f"{store.name}#{sid}.jsonl").read_bytes() for sid in made}
    for sid in made:
        assert candidates[sid].startswith(originals[sid])  # pi's appended compaction, as JSONL
        assert detect_format(candidates[sid]) is SourceFormat.PI
    assert candidates["0b1c-tools"] == (agent / "sessions" / BESIDE).read_bytes()  # as from the file


def test_in_place_commands_leave_a_store_as_it_is_and_say_so(tmp_path: Path) -> None:
    root = tmp_path / "openclaw"
    store, originals = _openclaw(root)
    state = ("--backup-dir", str(tmp_path / "b"), "--state-dir", str(tmp_path / "s"))
    with live_store(store, originals, logged=3):
        untouched = _store_files(store)
        done = compaction(
            "compress", str(root), "--in-place", *SMALL, "--no-verify-resume",
            "--report-dir", str(tmp_path / "r"), *state, "--quiet",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        assert f"{store} holds several sessions: its rows are never replaced in place" in done.stderr
        reports = _reports(tmp_path / "r")
        assert set(reports) == {BESIDE} and reports[BESIDE]["in_place"]["disposition"] == "committed"
        alone = compaction("compress", str(store), "--in-place", "--no-verify-resume", *state, "--quiet")
        assert alone.returncode == 2
        assert "a store of sessions is never replaced in place" in alone.stderr
        assert _store_files(store) == untouched


def test_a_store_that_cannot_be_read_is_one_unreadable_report(tmp_path: Path) -> None:
    root = tmp_path / "openclaw"
    store, _ = _openclaw(root)
    store.parent.mkdir(parents=True)
    store.write_bytes(b"SQLite format 3\x00" + b"\x07" * 4000)  # a damaged header, no tables
    done = compaction("validate", str(root), "--report-dir", str(tmp_path / "v"), "--quiet")
    assert done.returncode == 1
    reports = _reports(tmp_path / "v")
    assert reports[BESIDE]["status"] == "valid"
    broken = reports[store.name]
    assert broken["status"] == "unreadable" and broken["session"] == {
        "label": f"agents/main/agent/{store.name}"
    }
    assert [(f["code"], f["ids"]) for f in broken["findings"]] == [
        ("unreadable", ["unreadable SQLite database (DatabaseError)"])
    ]
