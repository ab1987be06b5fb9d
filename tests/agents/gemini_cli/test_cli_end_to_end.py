"""Gemini CLI sessions through the real command line, as a user runs it, on copies of the real
client's files: validate, tokens, compress (`--out` and `--in-place`, proven by the real Gemini
CLI when it is installed), repair (in place, proven by the real Gemini CLI), restore; and a mixed
tree of three agents through validate, tokens, compress on a Dask cluster and in place, and
restore, each session in its own format."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from pipeline.agents.gemini_cli import GEMINI_CLI
from pipeline.formats.line_guard import LineLimits
from pipeline.proof.gemini_cli.gemini_run import find_gemini_cli
from pipeline.testing.invoke import compaction, reports
from tests.conftest import CODEX_FILES, CORPUS_FILES
from tests.support.gemini_files import (
    FIXTURES,
    LEGACY_CORPUS,
    fixture,
    gemini_cli,
    long_task,
    with_open_calls,
)

LIMITS = LineLimits(64 << 20, 256)
SMALL = ("--min-tokens", "0", "--target-estimated-tokens", "600")  # the fixtures are a few k tokens
PROJECT = Path(".gemini") / "tmp" / "0123abcd"  # a project's folder, as Gemini CLI names it
LONG = "session-2026-12-07T07-14-long.jsonl"
CODEX_ROLLOUT = (
    "EdofEngland__code_butler__.codex_sessions_2025_11_24_rollout-2025-11-24T13-38-49-"
    "019ab760-3d78-7fd0-9ea1-4c39e889b87b.jsonl"
)
ROLLOUT = "rollout-2025-11-24T13-38-49-019ab760-3d78-7fd0-9ea1-4c39e889b87b.jsonl"
CLAUDE_SESSION = "codemie-ai__codemie-code__tests_integration_session_fixtures_session-196820da.jsonl"


def _gate() -> tuple[str, ...]:
    """The resume proof by the real Gemini CLI when it is installed, else none (said in the name)."""
    script = find_gemini_cli()
    if script is None:
        return ("--no-verify-resume",)
    return ("--verify-resume", "--judge", f"gemini-cli={script}")


# Each fixture where Gemini CLI keeps it: chats in `chats/`, a subagent's under its parent
# session's folder, a `/chat save` checkpoint in the project's folder.
PLACES = {
    "long.jsonl": f"chats/{LONG}",
    "subagent-subagent.jsonl": "chats/4d074cff-2339-48fc-b146-d29901be3085/subagent-bbbd1f57.jsonl",
    "checkpoint-fixture-tag.json": "checkpoint-fixture-tag.json",
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A Gemini CLI project folder holding a copy of every recorded fixture, last written two days ago."""
    folder = tmp_path / "home" / PROJECT
    old = time.time() - 2 * 86400
    for source in sorted(FIXTURES.iterdir()):
        if source.suffix in (".jsonl", ".json"):
            copy = folder / PLACES.get(source.name, f"chats/{source.name}")
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, copy)
            os.utime(copy, (old, old))
    return folder


def _by_name(folder: Path) -> dict[str, dict[str, Any]]:
    return {Path(str(report["session"]["label"])).name: report for report in reports(folder)}


def _files(folder: Path) -> dict[Path, bytes]:
    return {path: path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def test_validate_and_tokens_read_every_recorded_file_as_gemini_cli(project: Path, tmp_path: Path) -> None:
    done = compaction("validate", str(project), "--report-dir", str(tmp_path / "v"), "--quiet")
    assert done.returncode == 0, done.stderr
    validated = _by_name(tmp_path / "v")
    assert len(validated) == len(_files(project))
    assert {(r["status"], r["session"]["format"]) for r in validated.values()} == {("valid", "gemini-cli")}
    kinds = {name: report["session"]["kind"] for name, report in validated.items()}
    assert kinds["subagent-bbbd1f57.jsonl"] == "subagent" and kinds[LONG] == "main"
    assert validated[LONG]["context"]["resumable"] and validated[LONG]["tokens"]["active_chain"] > 600
    done = compaction("tokens", str(project), "--report-dir", str(tmp_path / "t"), "--quiet")
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "t" / "summary.json").read_text())
    assert list(summary["by_format"]) == ["gemini-cli"]
    assert summary["by_format"]["gemini-cli"]["sessions"] == len(validated)
    counted = _by_name(tmp_path / "t")[LONG]["tokens"]
    assert counted["context"] == {"gemini-cli-estimate": validated[LONG]["tokens"]["active_chain"]}
    assert counted["classes"]["tool_use"]["names"]["read_file"]["context_items"] > 0
    assert counted["billed"]["events"] > 0  # the replies' own `tokens` records


def test_compress_out_writes_a_candidate_gemini_cli_resumes_as_summary_and_suffix(
    project: Path, tmp_path: Path
) -> None:
    source = project / "chats" / LONG
    before = source.read_bytes()
    done = compaction("compress", str(source), "--out", str(tmp_path / "out"), "--quiet", *SMALL, *_gate())
    assert done.returncode == 0, done.stderr
    (report,) = reports(tmp_path / "out")
    assert report["status"] == "compressed" and report["session"]["format"] == "gemini-cli"
    if find_gemini_cli() is not None:
        assert report["resume_check"]["verdict"] == "match", report["resume_check"]
    candidate = Path(report["output"]["path"])
    candidate = candidate if candidate.is_absolute() else tmp_path / "out" / candidate
    original = GEMINI_CLI.read(before, source, LIMITS)
    compacted = GEMINI_CLI.read(candidate.read_bytes(), None, LIMITS)
    kept = [item.digest for item in compacted.sent()[1:]]
    assert kept and kept == [item.digest for item in original.sent()[-len(kept) :]]
    assert compacted.findings == () and len(candidate.read_bytes()) < len(before)
    assert source.read_bytes() == before  # --out never touches the source
    script = find_gemini_cli()
    if script is not None:  # verify-resume judges a Gemini CLI pair with Gemini CLI
        done = compaction(
            "verify-resume", str(source), str(candidate), "--judge", f"gemini-cli={script}", "--json"
        )
        verified = json.loads(done.stdout)
        assert done.returncode == 0 and verified["verdict"] == "match", done.stderr[-2000:]
        assert verified["gemini_cli"]["version"] == "0.61.0" and verified["summary_blocks"] == 2


def test_compress_in_place_then_restore_gives_back_the_original_byte_for_byte(
    project: Path, tmp_path: Path
) -> None:
    # The main chats only: the generic job refuses (`topology`) what Gemini CLI never resumes, a
    # subagent's session or a checkpoint, where a Claude Code subagent is `skipped-subagent`.
    chats = project / "chats"
    shutil.rmtree(chats / "4d074cff-2339-48fc-b146-d29901be3085")
    originals = _files(chats)
    state = ("--state-dir", str(tmp_path / "state"))
    done = compaction(
        "compress", str(chats), "--in-place", *state, "--report-dir", str(tmp_path / "r"), "--quiet",
        *SMALL, *_gate(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert {path for path, data in originals.items() if path.read_bytes() != data} == {chats / LONG}
    report = _by_name(tmp_path / "r")[LONG]
    assert report["in_place"]["disposition"] == "committed"
    replaced = GEMINI_CLI.read((chats / LONG).read_bytes(), chats / LONG, LIMITS)
    assert replaced.resumable and replaced.context_section(0).compactions == 1
    done = compaction("restore", str(chats / LONG), *state, "--report-dir", str(tmp_path / "back"), "--quiet")
    assert done.returncode == 0, done.stderr
    assert _files(chats) == originals


def test_a_legacy_json_session_compressed_in_place_is_the_jsonl_form_gemini_cli_resumes(
    tmp_path: Path,
) -> None:
    """The corpus's legacy one-document chat, compressed in place: the file keeps its name and
    holds the JSONL form Gemini CLI migrates such chats to, which it resumes (the proof, when
    installed), and restore gives the document back byte for byte."""
    if not LEGACY_CORPUS.is_file():
        pytest.skip(f"the shared corpus is not here: {LEGACY_CORPUS}")
    chats = tmp_path / PROJECT / "chats"
    chats.mkdir(parents=True)
    legacy = chats / "session-2025-12-01T21-45-5b959dae.json"
    shutil.copyfile(LEGACY_CORPUS, legacy)
    old = time.time() - 2 * 86400
    os.utime(legacy, (old, old))
    original = legacy.read_bytes()
    state = ("--state-dir", str(tmp_path / "state"))
    done = compaction(
        "compress", str(chats), "--in-place", *state, "--report-dir", str(tmp_path / "r"), "--quiet",
        "--min-tokens", "0", *_gate(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (report,) = reports(tmp_path / "r")
    assert report["in_place"]["disposition"] == "committed"
    if find_gemini_cli() is not None:
        assert report["resume_check"]["verdict"] == "match", report["resume_check"]
    replaced = GEMINI_CLI.read(legacy.read_bytes(), legacy, LIMITS)
    assert replaced.resumable and replaced.findings == () and legacy.read_bytes().count(b"\n") > 1
    assert replaced.context_section(0).compactions == 1  # one document no more: Gemini CLI's JSONL
    done = compaction("restore", str(legacy), *state, "--report-dir", str(tmp_path / "back"), "--quiet")
    assert done.returncode == 0, done.stderr
    assert legacy.read_bytes() == original


def test_a_mixed_tree_runs_through_every_command_each_session_in_its_own_format(
    project: Path, tmp_path: Path
) -> None:
    """A Claude Code session, a Codex rollout and Gemini CLI's chats in one tree: validate, tokens,
    compress --out on a local Dask cluster, compress --in-place, then restore giving back every
    original byte for byte."""
    root = tmp_path / "fleet"
    chats = root / "gemini" / "0123abcd" / "chats"
    for folder in (chats, root / "codex", root / "claude"):
        folder.mkdir(parents=True)
    for name in (LONG, "tools.jsonl"):
        shutil.copyfile(project / "chats" / name, chats / name)
    shutil.copyfile(CORPUS_FILES / CLAUDE_SESSION, root / "claude" / "claude.jsonl")
    shutil.copyfile(CODEX_FILES / CODEX_ROLLOUT, root / "codex" / ROLLOUT)
    old = time.time() - 2 * 86400
    for path in root.rglob("*.jsonl"):
        os.utime(path, (old, old))
    before = _files(root)
    expected = {"claude.jsonl": "claude-code", ROLLOUT: "codex-rollout"}
    expected |= {LONG: "gemini-cli", "tools.jsonl": "gemini-cli"}
    common = ("--backup-dir", str(tmp_path / "backups"), "--state-dir", str(tmp_path / "state"))
    runs = {
        "validate": ("--report-dir", str(tmp_path / "validate")),
        "tokens": ("--report-dir", str(tmp_path / "tokens")),
        "compress-out": ("--out", str(tmp_path / "compress-out"), "--cluster", "local:1"),
        "compress-in-place": ("--in-place", "--report-dir", str(tmp_path / "compress-in-place"), *common),
    }
    for run, flags in runs.items():
        command = run.split("-")[0]
        extra = ("--min-tokens", "0", "--no-verify-resume") if command == "compress" else ()
        done = compaction(command, str(root), "--quiet", *flags, *extra)
        assert done.returncode == 0, (run, done.stderr[-2000:])
        found = _by_name(tmp_path / run)
        assert {name: report["session"]["format"] for name, report in found.items()} == expected, run
    assert {r["status"] for r in _by_name(tmp_path / "validate").values()} == {"valid"}
    tokens = json.loads((tmp_path / "tokens" / "summary.json").read_text())
    assert set(tokens["by_format"]) == set(expected.values())
    assert _by_name(tmp_path / "compress-out")[LONG]["status"] == "compressed"
    placed = _by_name(tmp_path / "compress-in-place")[LONG]
    assert placed["in_place"]["disposition"] == "committed"
    assert (chats / LONG).read_bytes() != before[chats / LONG]
    done = compaction("restore", "--all-since", "2020-01-01T00:00", str(root), "--quiet", *common)
    assert done.returncode == 0, done.stderr[-2000:]
    assert _files(root) == before


def test_a_long_session_compresses_to_its_target_and_gemini_cli_resumes_it(tmp_path: Path) -> None:
    """Over the token floor and long enough that Gemini CLI masks old tool outputs in its request,
    the kept tail among them (its tool outputs over the 50k tokens Gemini CLI protects): the target
    is met and the real client resumes the candidate as summary and suffix."""
    script = gemini_cli()
    source = tmp_path / "chats" / "session-2026-12-07T08-00-longtask.jsonl"
    source.parent.mkdir()
    source.write_bytes(long_task(tasks=20, reads=3, output_bytes=3000))
    gate = ("--verify-resume", "--judge", f"gemini-cli={script}")
    target = ("--target-estimated-tokens", "70000")
    done = compaction("compress", str(source), "--out", str(tmp_path / "out"), "--quiet", *target, *gate)
    assert done.returncode == 0, done.stderr
    (report,) = reports(tmp_path / "out")
    assert report["status"] == "compressed" and report["tokens"]["target_met"], report.get("reasons")
    assert report["tokens"]["active_chain"] > 20_000  # compress.min_tokens, the floor
    check = report["resume_check"]
    assert check["verdict"] == "match", check["differences"]
    assert check["notes"] and "masked" in check["notes"][0]  # Gemini CLI masked the original's old outputs


def test_repair_answers_a_killed_runs_open_call_proven_by_gemini_cli_and_restore_undoes_it(
    tmp_path: Path,
) -> None:
    """The killed run's session with its reply's calls recorded as they started (the read done, the
    command still running): report only, then in place, Gemini CLI resuming both files and sending
    the original's history with the one declared results turn; a second run finds nothing to do,
    an intact chat beside it is left alone, and restore gives the original back byte for byte."""
    script = gemini_cli()
    gate = {
        "COMPACTION_COMPRESS_VERIFY_RESUME": "on",
        "COMPACTION_JUDGES_GEMINI_CLI": json.dumps(str(script)),
    }
    chats = tmp_path / PROJECT / "chats"
    chats.mkdir(parents=True)
    killed = chats / "session-2026-12-07T15-14-97c4599f.jsonl"
    killed.write_bytes(with_open_calls(fixture("killed.jsonl")))
    shutil.copyfile(fixture("tools.jsonl"), chats / "session-2026-12-07T06-35-tools.jsonl")
    old = time.time() - 2 * 86400
    for path in chats.iterdir():
        os.utime(path, (old, old))
    originals = _files(chats)
    done = compaction("repair", str(chats), "--report-dir", str(tmp_path / "plan"), "--quiet", env=gate)
    assert done.returncode == 0, done.stderr[-2000:]
    planned = {Path(r["session"]).name: r["status"] for r in reports(tmp_path / "plan")}
    assert planned == {killed.name: "planned", "session-2026-12-07T06-35-tools.jsonl": "unchanged"}
    assert _files(chats) == originals
    state = ("--state-dir", str(tmp_path / "state"), "--backup-dir", str(tmp_path / "backups"))
    done = compaction("repair", str(chats), "--in-place", *state, "--report-dir", str(tmp_path / "r"), "--quiet", env=gate)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    report = next(r for r in reports(tmp_path / "r") if Path(r["session"]).name == killed.name)
    assert (report["status"], report["disposition"]) == ("repaired", "committed")
    check = report["resume_check"]
    assert check["verdict"] == "match", check["differences"]
    assert report["findings_before"] == {"tool-use-unanswered": 1, "turn-unfinished": 1}
    assert report["findings_after"] == {}
    assert {e["change"] for e in report["edits"]} == {"cancelled-response-added", "call-status-cancelled"}
    assert {path for path, data in originals.items() if path.read_bytes() != data} == {killed}
    assert killed.read_bytes().startswith(originals[killed])  # one line appended, nothing rewritten
    backup = report["receipt"]["backup"]  # verified: the original's digest, under the backup dir
    assert backup["sha256"] == hashlib.sha256(originals[killed]).hexdigest()
    assert Path(backup["path"]).is_file() and Path(backup["path"]).is_relative_to(tmp_path / "backups")
    repaired_bytes = killed.read_bytes()
    repaired = GEMINI_CLI.read(repaired_bytes, killed, LIMITS)
    assert repaired.findings == () and len(repaired.sent()) == len(
        GEMINI_CLI.read(originals[killed], killed, LIMITS).sent()
    )
    done = compaction("repair", str(chats), "--in-place", *state, "--report-dir", str(tmp_path / "again"), "--quiet", env=gate)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    again = json.loads((tmp_path / "again" / "summary.json").read_text())
    assert again["archive"]["backups_added"] == 0 and killed.read_bytes() == repaired_bytes
    done = compaction("restore", str(killed), *state, "--report-dir", str(tmp_path / "back"), "--quiet")
    assert done.returncode == 0, done.stderr[-2000:]
    assert _files(chats) == originals
