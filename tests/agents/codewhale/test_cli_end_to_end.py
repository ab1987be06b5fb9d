"""CodeWhale sessions through the real command line, as a user runs it: validate, tokens,
compress to a directory and in place, restore byte for byte; and a directory mixing Claude Code,
Codex and CodeWhale sessions where each report names its own format.

The sessions are written in CodeWhale's serde form (`tests/support/codewhale_sessions.py`). The
resume gate runs the real CodeWhale when `scripts/install-codewhale` built it, and is switched
off (`--no-verify-resume`) otherwise, so the jobs' path is tested either way.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pipeline.formats.codewhale.whale_analysis import analyze_session
from pipeline.formats.codewhale.whale_markers import is_wire_checkpoint
from pipeline.formats.line_guard import LineLimits
from pipeline.proof.codewhale.whale_client import find_codewhale
from pipeline.testing.invoke import compaction
from pipeline.vocabulary import SourceFormat
from tests.conftest import CORPUS_FILES
from tests.support.codewhale_sessions import SessionBuilder, call, result, text
from tests.support.codex_rollouts import conversation, write_rollout

FORMAT = SourceFormat.CODEWHALE.value
SESSION_ID = "11111111-2222-4333-8444-555555555555"
CLAUDE_CODE_FILE = "marot__spotter__test_fixtures_transcripts_short.jsonl"
LIMITS = LineLimits(max_line_bytes=1 << 26, max_json_depth=200)


def _session() -> bytes:
    """Four rounds of prompts, shell calls (one failing) and answers: well over the token floor."""
    session = SessionBuilder(session_id=SESSION_ID)
    for turn in range(4):
        session.extend(
            [
                text("user", f"step {turn}: explain the build " + "and why it links " * 150),
                call(f"call_{turn}", say=f"running step {turn}", arguments={"command": f"make step{turn}"}),
                result(f"call_{turn}", f"step {turn} output line\n" * 1500, error=turn == 1),
                text("assistant", f"step {turn} done: " + "the target links " * 20),
            ]
        )
    return session.bytes()


def _gate() -> list[str]:
    executable = find_codewhale()
    return [f"--judge={FORMAT}={executable}"] if executable else ["--no-verify-resume"]


def _report(folder: Path, name: str) -> dict[str, Any]:
    [path] = folder.rglob(f"{name}.report.json")
    data: dict[str, Any] = json.loads(path.read_text())
    return data


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    folder = tmp_path / "home" / ".codewhale" / "sessions"
    folder.mkdir(parents=True)
    (folder / f"{SESSION_ID}.json").write_bytes(_session())
    return folder


def test_validate_and_tokens_name_the_format_and_count_what_codewhale_sends(
    sessions: Path, tmp_path: Path
) -> None:
    done = compaction("validate", str(sessions), "--report-dir", str(tmp_path / "v"), "--quiet")
    assert done.returncode == 0, done.stderr
    report = _report(tmp_path / "v", f"{SESSION_ID}.json")
    assert (report["status"], report["session"]["format"]) == ("valid", FORMAT)
    assert report["context"]["resumable"] and report["context"]["items"] == 16

    done = compaction("tokens", str(sessions), "--report-dir", str(tmp_path / "t"), "--quiet")
    assert done.returncode == 0, done.stderr
    tokens = _report(tmp_path / "t", f"{SESSION_ID}.json")["tokens"]
    expected = sum(i.tokens for i in analyze_session(_session(), LIMITS).sent)
    assert tokens["context"]["codewhale-approx"] == expected
    assert tokens["classes"]["tool_result"]["names"]["exec_shell"]["items"] == 4
    assert tokens["billed"]["input"] == 1234  # metadata.total_tokens, as CodeWhale recorded it


def test_compress_out_writes_a_checkpointed_candidate_that_resumes_as_the_original_suffix(
    sessions: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    done = compaction("compress", str(sessions), "--out", str(out), *_gate(), "--quiet")
    assert done.returncode == 0, done.stderr
    report = _report(out, f"{SESSION_ID}.json")
    assert (report["status"], report["session"]["format"]) == ("compressed", FORMAT)
    [candidate_path] = [p for p in out.rglob(f"{SESSION_ID}.json")]
    original = analyze_session(_session(), LIMITS)
    candidate = analyze_session(candidate_path.read_bytes(), LIMITS)
    assert candidate.findings == () and candidate.resumable
    assert candidate.rebuilt is not None
    assert is_wire_checkpoint(candidate.rebuilt.messages[0].message)
    kept = [item.digest for item in candidate.sent[1:]]
    assert kept and kept == [item.digest for item in original.sent[-len(kept) :]]
    assert sum(i.tokens for i in candidate.sent) < sum(i.tokens for i in original.sent) / 2
    assert (sessions / f"{SESSION_ID}.json").read_bytes() == _session()  # --out never touches the source


def test_in_place_then_restore_gives_back_the_original_byte_for_byte(sessions: Path, tmp_path: Path) -> None:
    live = sessions / f"{SESSION_ID}.json"
    state = ["--state-dir", str(tmp_path / "state")]
    done = compaction(
        "compress", str(sessions), "--in-place", "--confirm-sessions-closed", *state, *_gate(), "--quiet"
    )
    assert done.returncode == 0, done.stderr
    compacted = live.read_bytes()
    assert compacted != _session()
    assert analyze_session(compacted, LIMITS).resumable

    done = compaction("restore", str(live), *state, "--quiet")
    assert done.returncode == 0, done.stderr
    assert live.read_bytes() == _session()


def test_a_mixed_directory_reports_each_session_in_its_own_format(sessions: Path, tmp_path: Path) -> None:
    mixed = tmp_path / "mixed"
    shutil.copytree(sessions, mixed / "codewhale")
    (mixed / "claude").mkdir()
    shutil.copyfile(CORPUS_FILES / CLAUDE_CODE_FILE, mixed / "claude" / CLAUDE_CODE_FILE)
    rollout = write_rollout(mixed / "codex", conversation())
    done = compaction("validate", str(mixed), "--report-dir", str(tmp_path / "r"), "--quiet")
    assert done.returncode == 0, done.stderr
    formats = {
        name: _report(tmp_path / "r", name)["session"]["format"]
        for name in (f"{SESSION_ID}.json", CLAUDE_CODE_FILE, rollout.name)
    }
    assert formats == {
        f"{SESSION_ID}.json": FORMAT,
        CLAUDE_CODE_FILE: SourceFormat.CLAUDE_CODE.value,
        rollout.name: SourceFormat.CODEX.value,
    }
