"""`vacuum` and `repair` of the seam's formats through the real command line, on copies of the
real clients' files: in place with verified backups and `restore` giving back the original byte
for byte, the agent's real client (when installed) resuming original and rewrite and sending the
same; sessions of formats without the rewrite, subagents' sessions and checkpoints skipped with
the reason, exit 0; and every report valid against the schema it names."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any, Final

import pytest

from pipeline.agents.gemini_cli import GEMINI_CLI
from pipeline.agents.qwen_code import QWEN_CODE
from pipeline.formats.line_guard import LineLimits
from pipeline.proof.gemini_cli.gemini_run import find_gemini_cli
from pipeline.testing.invoke import compaction
from tests.conftest import CORPUS_FILES
from tests.jobs.test_report_schemas import problems
from tests.proof.qwen_code.test_resume_run import VARIANTS
from tests.support.gemini_files import FIXTURES as GEMINI_FIXTURES
from tests.support.qwen_model import installed_qwen_code

LIMITS: Final = LineLimits(64 << 20, 256)
CLAUDE_SESSION: Final = "marot__spotter__test_fixtures_transcripts_short.jsonl"
SUBAGENT: Final = "chats/4d074cff-2339-48fc-b146-d29901be3085/subagent-bbbd1f57.jsonl"


def _idle(root: Path) -> None:
    old = time.time() - 2 * 86_400  # older than any in-place idle threshold
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (old, old))


def _reports(folder: Path) -> dict[str, dict[str, Any]]:
    found = [json.loads(p.read_text()) for p in folder.rglob("*.report.json")]
    return {Path(report["session"]).name: report for report in found}


def _files(folder: Path) -> dict[Path, bytes]:
    return {path: path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def _valid(folder: Path) -> None:
    for path in folder.rglob("*.json"):
        document = json.loads(path.read_text())
        assert problems(document) is None, (path.name, problems(document))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A Gemini CLI project folder (one bloated chat, a subagent's, a checkpoint) beside a Qwen Code
    session and a Claude Code one, idle."""
    folder = tmp_path / ".gemini" / "tmp" / "0123abcd"
    places = {
        GEMINI_FIXTURES / "rewound.jsonl": folder / "chats" / "rewound.jsonl",
        GEMINI_FIXTURES / "subagent-subagent.jsonl": folder / SUBAGENT,
        GEMINI_FIXTURES / "checkpoint-fixture-tag.json": folder / "checkpoint-fixture-tag.json",
        CORPUS_FILES / CLAUDE_SESSION: folder / "claude.jsonl",
    }
    for source, copy in places.items():
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, copy)
    (folder / "qwen.jsonl").write_bytes(VARIANTS["interrupted-call"])
    _idle(folder)
    return folder


def _gemini_gate() -> dict[str, str]:
    script = find_gemini_cli()
    if script is None:  # the rest still holds; the report says the client was not found
        return {"COMPACTION_COMPRESS_VERIFY_RESUME": "auto"}
    return {
        "COMPACTION_COMPRESS_VERIFY_RESUME": "on",
        "COMPACTION_JUDGES_GEMINI_CLI": json.dumps(str(script)),
    }


def test_vacuum_in_place_shrinks_what_gemini_cli_loads_skips_the_rest_and_restore_undoes_it(
    project: Path, tmp_path: Path
) -> None:
    originals = _files(project)
    state = ("--state-dir", str(tmp_path / "state"))
    done = compaction("vacuum", str(project), "--in-place", *state, "--report-dir", str(tmp_path / "r"), "--quiet", env=_gemini_gate())  # fmt: skip
    assert done.returncode == 0, done.stderr
    chat = project / "chats" / "rewound.jsonl"
    assert {path for path, data in originals.items() if path.read_bytes() != data} == {chat}
    assert len(chat.read_bytes()) < len(originals[chat]) / 2
    before, after = (
        GEMINI_CLI.read(originals[chat], chat, LIMITS),
        GEMINI_CLI.read(chat.read_bytes(), chat, LIMITS),
    )
    assert [i.digest for i in after.sent()] == [i.digest for i in before.sent()] and after.findings == ()
    reports = _reports(tmp_path / "r")
    vacuumed = reports["rewound.jsonl"]
    assert (vacuumed["status"], vacuumed["disposition"], vacuumed["operation_state"]) == (
        "vacuumed",
        "committed",
        "committed",
    )
    assert (
        vacuumed["bytes_after"] == len(chat.read_bytes())
        and vacuumed["edits"][0]["change"] == "superseded-records-dropped"
    )
    check = vacuumed["resume_check"]
    assert check["verdict"] == ("match" if find_gemini_cli() else "error"), check
    skipped = {name: (r["status"], r["reasons"]) for name, r in reports.items() if name != "rewound.jsonl"}
    assert skipped == {
        "subagent-bbbd1f57.jsonl": ("skipped-subagent", ["subagent-transcript-is-not-resumed"]),
        "checkpoint-fixture-tag.json": ("skipped", ["not-resumed-by-its-client"]),
        "qwen.jsonl": ("skipped", ["no-vacuum-for-qwen-code"]),
        "claude.jsonl": ("skipped", ["no-vacuum-for-claude-code"]),
    }
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["by_status"] == {"skipped": 3, "skipped-subagent": 1, "vacuumed": 1}
    assert (summary["bytes_before"], summary["bytes_after"]) == (len(originals[chat]), len(chat.read_bytes()))
    _valid(tmp_path / "r")
    done = compaction("restore", str(chat), *state, "--report-dir", str(tmp_path / "back"), "--quiet")
    assert done.returncode == 0, done.stderr
    assert _files(project) == originals


def test_vacuum_without_a_mode_only_reports_and_with_out_writes_candidates_apart(
    project: Path, tmp_path: Path
) -> None:
    originals = _files(project)
    done = compaction(
        "vacuum", str(project), "--report-dir", str(tmp_path / "r"), "--quiet", "--no-verify-resume"
    )
    assert done.returncode == 0, done.stderr
    assert _reports(tmp_path / "r")["rewound.jsonl"]["status"] == "planned"
    done = compaction("vacuum", str(project), "--out", str(tmp_path / "out"), "--quiet", "--no-verify-resume")
    assert done.returncode == 0, done.stderr
    report = _reports(tmp_path / "out")["rewound.jsonl"]
    candidate = tmp_path / "out" / report["output"]
    assert report["status"] == "vacuumed" and len(candidate.read_bytes()) == report["bytes_after"]
    assert _files(project) == originals  # neither mode touches a session
    _valid(tmp_path / "out")


def test_repair_writes_qwen_codes_own_answer_to_an_interrupted_call_proven_by_qwen_code(
    project: Path, tmp_path: Path
) -> None:
    qwen = installed_qwen_code()
    if qwen is None:
        pytest.skip(
            "Qwen Code 0.24.4 could not be installed by scripts/install-qwen-code (no npm or registry)"
        )
    gate = {
        "COMPACTION_COMPRESS_VERIFY_RESUME": "on",
        "COMPACTION_JUDGES_QWEN_CODE": json.dumps(str(qwen.script)),
    }
    session = project / "qwen.jsonl"
    original = session.read_bytes()
    state = ("--state-dir", str(tmp_path / "state"))
    done = compaction("repair", str(session), "--in-place", *state, "--report-dir", str(tmp_path / "r"), "--quiet", env=gate)  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = _reports(tmp_path / "r")["qwen.jsonl"]
    assert (report["status"], report["disposition"], report["resume_check"]["verdict"]) == (
        "repaired",
        "committed",
        "match",
    )
    assert report["findings_before"] == {"tool-use-unanswered": 1} and report["findings_after"] == {}
    repaired = QWEN_CODE.read(session.read_bytes(), session, LIMITS)
    assert repaired.findings == () and session.read_bytes().startswith(original)
    assert [i.digest for i in repaired.sent()] == [
        i.digest for i in QWEN_CODE.read(original, session, LIMITS).sent()
    ]
    _valid(tmp_path / "r")
    done = compaction("restore", str(session), *state, "--report-dir", str(tmp_path / "back"), "--quiet")
    assert done.returncode == 0, done.stderr
    assert session.read_bytes() == original
