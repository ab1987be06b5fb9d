"""pi sessions through the real command line, as a user runs it, on a copy of the pi-written
fixtures laid out as pi keeps them: validate, tokens, compress --out proven by the real pi (when
installed; unproven otherwise), compress --in-place, then restore giving back every original byte
for byte, also after a SIGKILL mid-run; and a tree mixing Claude Code, Codex, pi and an OpenClaw
agent (with its index) where each report names its own format, on the process pool and on a local
Dask cluster."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from pipeline.proof.pi.pi_process import find_pi
from pipeline.testing.invoke import compaction, compaction_command
from tests.conftest import CORPUS, CORPUS_FILES
from tests.support.openclaw_stores import live_store, store_path
from tests.support.pi_files import FIXTURES, ended_mid_tool, lost_result
from tests.support.rollout_builder import RolloutBuilder

TWO_DAYS = 2 * 86_400
# The fixtures are small: branched.jsonl's context (about 300 pi-approx tokens) fits this target,
# tools.jsonl's (about 430) and compacted.jsonl's (about 2,760) are compacted to it.
SMALL = ("--min-tokens", "0", "--target-estimated-tokens", "400")
CLAUDE_CODE_FILE = CORPUS_FILES / "marot__spotter__test_fixtures_transcripts_short.jsonl"
PI = "pi-session"
OPENCLAW_ID = "849098c8-229a-4d8f-b188-8c67455ddaf7"
OPENCLAW_FILE = (
    CORPUS / "pi" / "files" / f"CourtReinland__blueos__.openclaw_agents_main_sessions_{OPENCLAW_ID}.jsonl"
)
CLUSTER = ("--cluster", "local:1")
SUBAGENT_ID = "5e0c8a1f-6d2b-4c1e-9a7d-3b8f2e4d6c10"  # a run the main session spawned
STORED_ID = "7a3f0d2e-1b4c-4e8a-b5d6-9c0e2f4a6b81"  # a session in the agent's SQLite store


def _judge() -> tuple[str, ...]:
    """The real pi as the judge when installed (scripts/install-pi), else no proof (the suite
    turns the gate off by default: tests/conftest.py)."""
    found = find_pi()
    return ("--verify-resume", "--judge", f"{PI}={found.launcher}") if found else ("--no-verify-resume",)


def _idle_copy(files: list[Path], folder: Path) -> list[Path]:
    """Copies of `files` in `folder`, last written two days ago (idle for --in-place)."""
    folder.mkdir(parents=True, exist_ok=True)
    copies = [Path(shutil.copyfile(path, folder / path.name)) for path in files]
    old = time.time() - TWO_DAYS
    for path in copies:
        os.utime(path, (old, old))
    return copies


@pytest.fixture
def pi_tree(tmp_path: Path) -> Path:
    """The pi-written fixtures where pi keeps sessions: `agent/sessions/--<cwd>--/`."""
    root = tmp_path / "pi" / "agent" / "sessions"
    _idle_copy(sorted(FIXTURES.glob("*.jsonl")), root / "--home-me-notes--")
    return root


def _reports(folder: Path) -> dict[str, dict[str, Any]]:
    found = [json.loads(path.read_text()) for path in folder.rglob("*.report.json")]
    return {Path(report["session"]["label"]).name: report for report in found}


def _digests(root: Path) -> dict[Path, str]:
    return {path: hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(root.rglob("*.jsonl"))}


def _run(*args: str) -> dict[str, dict[str, Any]]:
    """Run a command that must exit 0; the reports it wrote (under --out or --report-dir)."""
    done = compaction(*args, "--quiet")
    assert done.returncode == 0, (args[0], done.stderr[-2000:])
    where = args[args.index("--out" if "--out" in args else "--report-dir") + 1]
    return _reports(Path(where))


def test_validate_tokens_and_compress_read_pi_sessions_as_pi_and_pi_resumes_the_candidates(
    pi_tree: Path, tmp_path: Path
) -> None:
    names = sorted(path.name for path in pi_tree.rglob("*.jsonl"))
    validated = _run("validate", str(pi_tree), "--report-dir", str(tmp_path / "validate"))
    assert sorted(validated) == names
    assert {(r["status"], r["session"]["format"]) for r in validated.values()} == {("valid", PI)}
    counted = _run("tokens", str(pi_tree), "--out", str(tmp_path / "tokens"))
    assert sorted(counted) == names
    for report in counted.values():  # billed truth from every assistant message's usage
        assert report["session"]["format"] == PI and report["tokens"]["billed"]["events"] > 0
    out = tmp_path / "out"
    compressed = _run("compress", str(pi_tree), "--out", str(out), *SMALL, *_judge())
    statuses = {name: report["status"] for name, report in compressed.items()}
    assert statuses == {
        "branched.jsonl": "skipped-fits",
        "compacted.jsonl": "compressed",
        "tools.jsonl": "compressed",
    }
    for name in ("compacted.jsonl", "tools.jsonl"):
        report, original = compressed[name], (pi_tree / "--home-me-notes--" / name).read_bytes()
        candidate = next(out.rglob(name)).read_bytes()
        assert candidate.startswith(original) and candidate.count(b"\n") == original.count(b"\n") + 1
        assert b'"type":"compaction"' in candidate.splitlines()[-1]  # pi's own compaction, appended
        assert report["tokens"]["target_met"]
        if find_pi() is not None:
            assert report["resume_check"]["verdict"] == "match"


def test_in_place_replaces_pi_sessions_and_restore_gives_back_the_originals(
    pi_tree: Path, tmp_path: Path
) -> None:
    before = _digests(pi_tree)
    common = ("--backup-dir", str(tmp_path / "backups"), "--state-dir", str(tmp_path / "state"))
    reports = _run(
        "compress", str(pi_tree), "--in-place", *SMALL, *_judge(),
        "--report-dir", str(tmp_path / "reports"), *common,
    )  # fmt: skip
    dispositions = {name: r.get("in_place", {}).get("disposition") for name, r in reports.items()}
    assert dispositions["compacted.jsonl"] == dispositions["tools.jsonl"] == "committed", dispositions
    after = _digests(pi_tree)
    changed = {path.name for path, digest in before.items() if after[path] != digest}
    assert changed == {"compacted.jsonl", "tools.jsonl"}
    for name in changed:  # in place, the archival form: the verified backup keeps the history
        live = (pi_tree / "--home-me-notes--" / name).read_bytes()
        assert len(live) < (FIXTURES / name).stat().st_size
        assert b'"type":"compaction"' in live.splitlines()[1]  # right after the header
        assert reports[name]["output"]["compacted_line"] == 2
    done = compaction("restore", "--all-since", "2020-01-01T00:00", str(pi_tree), "--quiet", *common)
    assert done.returncode == 0, done.stderr[-2000:]
    assert _digests(pi_tree) == before


def test_repair_writes_pis_answer_to_unanswered_calls_proven_by_pi_and_restore_undoes_it(
    tmp_path: Path,
) -> None:
    """`repair --in-place` writes the "No result provided" pi makes up on every load where pi puts
    it, the real pi sending the same context from both files; `restore` gives the damaged bytes back."""
    folder = tmp_path / "sessions" / "--home-me-notes--"
    folder.mkdir(parents=True)
    tools = (FIXTURES / "tools.jsonl").read_bytes()
    (folder / "mid.jsonl").write_bytes(ended_mid_tool(tools, 12))  # a call cut off by a crash
    (folder / "lost.jsonl").write_bytes(lost_result(tools, 16))  # a result line lost
    old = time.time() - TWO_DAYS
    for path in folder.iterdir():
        os.utime(path, (old, old))
    before = _digests(folder)
    common = ("--backup-dir", str(tmp_path / "b"), "--state-dir", str(tmp_path / "s"))
    done = compaction(  # the gate on (the suite turns it off): the real pi judges when installed
        "repair", str(folder.parent), "--in-place", "--report-dir", str(tmp_path / "r"), *common, "--quiet",
        unset=("COMPACTION_COMPRESS_VERIFY_RESUME",),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    found = [json.loads(path.read_text()) for path in (tmp_path / "r").rglob("*.report.json")]
    reports = {Path(report["session"]).name: report for report in found}  # a rewrite report names its file
    assert set(reports) == {"mid.jsonl", "lost.jsonl"}
    for name, report in reports.items():
        assert (report["status"], report["format"], report["disposition"]) == ("repaired", PI, "committed")
        edits = [(edit["code"], edit["change"]) for edit in report["edits"]]
        assert edits == [("tool-use-unanswered", "synthesized-result")] and report["findings_after"] == {}
        if find_pi() is not None:
            assert report["resume_check"]["verdict"] == "match"
        assert b'"No result provided"' in (folder / name).read_bytes()
    done = compaction("restore", "--all-since", "2020-01-01T00:00", str(folder.parent), "--quiet", *common)
    assert done.returncode == 0, done.stderr[-2000:]
    assert _digests(folder) == before


def test_a_kill_during_in_place_loses_nothing(pi_tree: Path, tmp_path: Path) -> None:
    """SIGKILL as the first backup lands: each session is whole (its original, or the original with
    pi's compaction appended), a second run finishes, and restore gives every original back."""
    before = {path: path.read_bytes() for path in sorted(pi_tree.rglob("*.jsonl"))}
    backups, common = tmp_path / "backups", ("--state-dir", str(tmp_path / "state"))
    run = [*compaction_command(), "compress", str(pi_tree), "--in-place", *SMALL, "--no-verify-resume"]
    run += ["--quiet", "--report-dir", str(tmp_path / "r1"), "--backup-dir", str(backups), *common]
    started = subprocess.Popen(
        run, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 300
    while started.poll() is None and not any(backups.rglob("*")) and time.monotonic() < deadline:
        time.sleep(0.01)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(started.pid, signal.SIGKILL)
    exit_code = started.wait()
    assert exit_code == -signal.SIGKILL  # the kill landed while the run was replacing
    killed = {path: path.read_bytes() for path in before}
    again = [
        word if word != str(tmp_path / "r1") else str(tmp_path / "r2")
        for word in run[len(compaction_command()) :]
    ]
    _run(*again)
    # Whole: each file as it was, or (replaced before the kill, on a loaded machine) exactly the
    # compaction the finished run left, pi's compaction record in it; never anything between.
    for path, original in before.items():
        assert killed[path] == original or (
            killed[path] == path.read_bytes() and b'"type":"compaction"' in killed[path]
        ), path.name
    done = compaction(
        "restore",
        "--all-since",
        "2020-01-01T00:00",
        str(pi_tree),
        "--quiet",
        "--backup-dir",
        str(backups),
        *common,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert {path: path.read_bytes() for path in before} == before


def _fleet(root: Path) -> dict[str, str]:
    """Claude Code, Codex, pi and an OpenClaw agent (a JSONL session with its index, a subagent run
    it spawned, and its SQLite store) under one root, idle; each session file's expected format."""
    _idle_copy([CLAUDE_CODE_FILE], root / "claude" / "-home-me-app")
    rollout = RolloutBuilder(seed=7)
    for turn in range(4):
        rollout.exchange(f"task {turn}: refactor module_{turn}.py", tools=2, output_bytes=1500)
    (root / "codex").mkdir()
    rollout.write(root / "codex" / "rollout-2026-03-01T12-00-00-x.jsonl")
    _idle_copy([FIXTURES / "tools.jsonl"], root / "pi" / "--home-me-notes--")
    openclaw = root / "openclaw" / "agents" / "main" / "sessions"  # a session OpenClaw wrote, its index
    _idle_copy([OPENCLAW_FILE, FIXTURES / "compacted.jsonl"], openclaw)
    (openclaw / OPENCLAW_FILE.name).rename(openclaw / f"{OPENCLAW_ID}.jsonl")
    (openclaw / "compacted.jsonl").rename(openclaw / f"{SUBAGENT_ID}.jsonl")  # a subagent's own session
    index = {
        "agent:main:main": {"sessionId": OPENCLAW_ID},
        f"agent:main:subagent:{SUBAGENT_ID}": {"sessionId": SUBAGENT_ID, "spawnedBy": "agent:main:main"},
    }
    (openclaw / "sessions.json").write_text(json.dumps(index))
    os.utime(root / "codex" / "rollout-2026-03-01T12-00-00-x.jsonl", (time.time() - TWO_DAYS,) * 2)
    expected = {CLAUDE_CODE_FILE.name: "claude-code", "rollout-2026-03-01T12-00-00-x.jsonl": "codex-rollout"}
    return expected | {"tools.jsonl": PI, f"{OPENCLAW_ID}.jsonl": PI, f"{SUBAGENT_ID}.jsonl": PI}


def test_a_tree_of_claude_code_codex_pi_and_openclaw_reports_each_session_in_its_own_format(
    tmp_path: Path,
) -> None:
    """validate, tokens, compress (on a local Dask cluster too), --in-place and restore over one
    mixed tree: one report per session (each stored session too), each in its own format; in place
    the JSONL files change and restore gives them back, the store never changes."""
    root = tmp_path / "fleet"
    expected = _fleet(root)
    store = store_path(root / "openclaw")
    with live_store(store, {STORED_ID: (FIXTURES / "tools.jsonl").read_bytes()}, logged=3):
        expected[f"{store.name}#{STORED_ID}.jsonl"] = PI
        runs = {  # compress on a local Dask cluster: the workers read pi's sessions as the pool does
            "validate": ("--report-dir", str(tmp_path / "validate")),
            "tokens": ("--out", str(tmp_path / "tokens")),
            "compress": (
                "--out",
                str(tmp_path / "compress"),
                "--min-tokens",
                "0",
                "--no-verify-resume",
                *CLUSTER,
            ),
        }
        for command, flags in runs.items():
            reports = _run(command, str(root), *flags)
            index = reports.pop("sessions.json")  # OpenClaw's index is no session: named, never failed
            assert index["status"] == "not-a-transcript"
            assert {name: report["session"]["format"] for name, report in reports.items()} == expected
            assert all(report["command"] == command for report in reports.values())
        before, stored = _digests(root), store.read_bytes()
        common = ("--backup-dir", str(tmp_path / "b"), "--state-dir", str(tmp_path / "s"))
        live = _run(
            "compress", str(root), "--in-place", *SMALL, "--no-verify-resume",
            "--report-dir", str(tmp_path / "r"), *common,
        )  # fmt: skip
        assert set(live) == {name for name in expected if "#" not in name}  # no store, no index
        changed = {path.name for path, digest in _digests(root).items() if before[path] != digest}
        assert "tools.jsonl" in changed and f"{SUBAGENT_ID}.jsonl" in changed  # pi resumes a subagent's too
        done = compaction("restore", "--all-since", "2020-01-01T00:00", str(root), "--quiet", *common)
        assert done.returncode == 0, done.stderr[-2000:]
        assert _digests(root) == before and store.read_bytes() == stored


def test_a_session_whose_last_line_pi_skips_compresses_without_it_and_pi_resumes_the_same_context(
    tmp_path: Path,
) -> None:
    """pi-mono's compact.jsonl ends in two records run together, a line pi skips on load: no cut
    can leave it in the summarized span, so the archival form, which carries only the branch's
    entries, drops it; the session is compressed (the line stays in the original) where it used to
    be refused, and pi sends the summary then the original's context from the cut."""
    source = CORPUS / "pi" / "files" / "badlogic__pi-mono__compact.jsonl"
    folder = tmp_path / "sessions"
    _idle_copy([source], folder)
    out = tmp_path / "out"
    report = _run("compress", str(folder), "--out", str(out), *_judge())[source.name]
    assert report["status"] == "compressed" and report["tokens"]["target_met"]
    assert [f["code"] for f in report["findings"]] == ["line-records-joined"]
    joined = source.read_bytes().splitlines()[-1]
    candidate = next(out.rglob(source.name)).read_bytes()
    assert joined not in candidate.splitlines() and len(candidate) < source.stat().st_size // 5
    if find_pi() is not None:
        assert report["resume_check"]["verdict"] == "match"
