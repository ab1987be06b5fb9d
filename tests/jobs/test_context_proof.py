"""The resume gate for Codex rollouts: `compress` resumes the original and the candidate in the real
Codex CLI (marker `codex`) before publishing, refuses a candidate Codex does not resume as the
summary and the original's tail, and says so when there is no Codex to run."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from pipeline.agents.codex import CODEX
from pipeline.jobs.compress.context_proof import not_run_note
from pipeline.jobs.compress.job import compress_session
from pipeline.jobs.compress.writers import DeterministicWriter, Written
from pipeline.reasons import Reason
from pipeline.report.documents import Compressed, Refused
from pipeline.summarize.evidence.items import EvidenceItem
from pipeline.testing import as_json
from pipeline.testing.invoke import compaction
from pipeline.testing.settings import compress_options
from tests.conftest import RESUME_GATE_ENV as GATE  # the tests' "off": this one runs the default
from tests.support.rollout_builder import RolloutBuilder

HALF = 0.5  # the bound on the candidate's resume context against the original's
ROLLED_BACK = "ROLLED-BACK-PROMPT: drop the production database and start from an empty schema"
NAME = "rollout-2026-03-01T12-00-00-x.jsonl"


def _rollout(path: Path, *, rolled_back: bool = False) -> Path:
    b = RolloutBuilder(seed=31)
    b.item(b.message("developer", "<permissions instructions>sandboxed</permissions instructions>"))
    b.context()
    b.exchange("task number 0: read the parser in module_0.py", tools=1, output_bytes=500)
    if rolled_back:  # a turn the user rolled back: Codex never sends it again
        b.turn(ROLLED_BACK)
        b.assistant("Dropping it now.")
        b.end_turn()
        b.rollback(1)
    for number in range(1, 12):
        b.exchange(f"task number {number}: fix the parser in module_{number}.py", tools=3, output_bytes=3000)
    path.parent.mkdir(parents=True, exist_ok=True)
    return b.write(path)


def _compress(tmp_path: Path, source: Path, **knobs: Any) -> tuple[Any, dict[str, Any]]:
    options = compress_options(tmp_path / "out", min_tokens=0, **knobs)
    outcome = compress_session(source, source.name, options)
    return outcome, as_json(outcome)


def test_without_codex_auto_publishes_and_the_report_says_the_gate_could_not_run(tmp_path: Path) -> None:
    outcome, report = _compress(tmp_path, _rollout(tmp_path / NAME), verify_resume="auto", codex_gate=None)
    assert isinstance(outcome, Compressed), report.get("reasons")
    check = report["resume_check"]
    assert check["verdict"] == "error" and check["error"] == "CodexNotInstalled"
    assert check["notes"] == [not_run_note(CODEX)]
    assert (tmp_path / "out" / "root" / NAME).is_file()


def test_without_codex_a_required_gate_refuses_and_writes_nothing(tmp_path: Path) -> None:
    outcome, report = _compress(tmp_path, _rollout(tmp_path / NAME), verify_resume="on", codex_gate=None)
    assert isinstance(outcome, Refused)
    assert report["reasons"] == ["resume-check-failed"]
    assert report["resume_check"]["error"] == "CodexNotInstalled"
    assert report["cut"]["kept_items"] > 0  # the figures of the candidate that was not published
    assert not (tmp_path / "out" / "root" / NAME).exists()


def test_the_gate_off_runs_no_proof(tmp_path: Path) -> None:
    outcome, report = _compress(
        tmp_path, _rollout(tmp_path / NAME), verify_resume="off", codex_gate="/nowhere"
    )
    assert isinstance(outcome, Compressed) and "resume_check" not in report


def test_a_codex_that_cannot_start_refuses_the_rollout_as_a_failed_check(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-codex-here")
    outcome, report = _compress(tmp_path, _rollout(tmp_path / NAME), codex_gate=missing)
    assert isinstance(outcome, Refused) and report["reasons"] == ["resume-check-failed"]
    # Codex's own error, never a builtin's (it was "FileNotFoundError", "ValueError" for no thread id)
    assert report["resume_check"] == {"verdict": "error", "error": "CodexNotStarted", **_elapsed(report)}


def test_a_rollout_codex_cannot_look_up_is_refused_with_codexs_own_error(tmp_path: Path) -> None:
    source = _rollout(tmp_path / "notes.jsonl")  # a name Codex finds no thread id in
    meta = source.read_text().split("\n", 1)  # nor in its session_meta: the id is gone
    record = json.loads(meta[0])
    record["payload"].pop("id")
    source.write_text(json.dumps(record) + "\n" + meta[1])
    outcome, report = _compress(tmp_path, source, codex_gate=str(tmp_path / "no-codex-here"))
    assert isinstance(outcome, Refused) and report["reasons"] == ["resume-check-failed"]
    assert report["resume_check"]["error"] == "CodexThreadNotFound"


def _elapsed(report: dict[str, Any]) -> dict[str, Any]:
    return {"elapsed_ms": report["resume_check"]["elapsed_ms"]}


@pytest.mark.parametrize("flag", ["--codex", "--judge"])
def test_a_codex_named_on_the_command_line_but_missing_is_a_usage_error(tmp_path: Path, flag: str) -> None:
    source = _rollout(tmp_path / "in" / NAME)
    missing = str(tmp_path / "none")
    named = (flag, missing) if flag == "--codex" else (flag, f"codex-rollout={missing}")
    done = compaction("compress", str(source), "--out", str(tmp_path / "out"), *named, unset=(GATE,))
    assert done.returncode == 2 and "Codex not found" in done.stderr and missing in done.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.codex
def test_codex_resumes_the_candidate_as_the_summary_and_the_originals_tail(
    codex: Path, tmp_path: Path
) -> None:
    outcome, report = _compress(tmp_path, _rollout(tmp_path / NAME), codex_gate=str(codex))
    assert isinstance(outcome, Compressed), report.get("reasons")
    check = report["resume_check"]
    assert check["verdict"] == "match", check["differences"]
    assert check["summary_blocks"] == 1 and check["kept_blocks"] == report["cut"]["kept_items"]
    sent = check["sent"]
    assert sent["compacted"]["estimated_tokens"] <= HALF * sent["original"]["estimated_tokens"]


@dataclass(frozen=True, slots=True)
class _Leaking:
    """The embedded summary with an excluded record's text appended: what the gate must catch."""

    writer: DeterministicWriter
    text: str
    replans: bool = True

    def __call__(self, evidence: Sequence[EvidenceItem], room: int) -> Written | Reason:
        written = self.writer(evidence, room)
        if isinstance(written, Reason):
            return written
        return replace(written, text=f"{written.text}\n- {self.text}")


def _rolled_back_line(source: Path) -> int:
    return next(
        number for number, line in enumerate(source.read_text().splitlines(), 1) if ROLLED_BACK in line
    )


@pytest.mark.codex
def test_verify_resume_finds_the_same_leak_in_a_pair_written_without_the_gate(
    codex: Path, tmp_path: Path
) -> None:
    source = _rollout(tmp_path / NAME, rolled_back=True)
    options = compress_options(tmp_path / "out", min_tokens=0, verify_resume="off")
    leaking = _Leaking(DeterministicWriter(options.summary_options()), ROLLED_BACK)
    assert isinstance(compress_session(source, NAME, replace(options, writer=leaking)), Compressed)
    candidate = tmp_path / "out" / "root" / NAME
    done = compaction("verify-resume", str(source), str(candidate), "--codex", str(codex), "--json")
    assert done.returncode == 1, done.stderr[-1500:]
    verdict = json.loads(done.stdout)
    line = _rolled_back_line(source)
    assert verdict["differences"] == [f"text of excluded line {line} (excluded_branch) is sent"]
    assert ROLLED_BACK not in done.stdout


@pytest.mark.codex
def test_a_summary_restating_a_rolled_back_prompt_is_refused_naming_the_line(
    codex: Path, tmp_path: Path
) -> None:
    source = _rollout(tmp_path / NAME, rolled_back=True)
    options = compress_options(tmp_path / "out", min_tokens=0, codex_gate=str(codex))
    leaking = _Leaking(DeterministicWriter(options.summary_options()), ROLLED_BACK)
    outcome = compress_session(source, NAME, replace(options, writer=leaking))
    report = as_json(outcome)
    assert isinstance(outcome, Refused), report.get("reasons")
    assert report["reasons"] == ["resume-mismatch"]
    rolled_back_line = _rolled_back_line(source)
    differences = report["resume_check"]["differences"]
    assert f"text of excluded line {rolled_back_line} (excluded_branch) is sent" in differences
    assert ROLLED_BACK not in json.dumps(report)  # the report names the line, never the text
    assert not (tmp_path / "out" / "root" / NAME).exists()


@pytest.mark.codex
def test_in_place_replaces_a_rollout_once_codex_resumed_its_candidate(codex: Path, tmp_path: Path) -> None:
    day = tmp_path / "fleet" / "2026" / "03" / "01"
    source = _rollout(day / NAME)
    old = time.time() - 2 * 86_400
    os.utime(source, (old, old))
    before = source.read_bytes()
    done = compaction(
        "compress", str(tmp_path / "fleet"), "--in-place", "--min-tokens", "0", "--verify-resume",
        "--report-dir", str(tmp_path / "reports"), "--backup-dir", str(tmp_path / "backups"),
        "--state-dir", str(tmp_path / "state"), "--quiet",
        "--codex", str(codex.relative_to(codex.parents[1])), cwd=codex.parents[1],  # Codex runs elsewhere
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    (report,) = [json.loads(p.read_text()) for p in (tmp_path / "reports").rglob("*.report.json")]
    assert report["in_place"]["disposition"] == "committed", report.get("reasons")
    assert report["resume_check"]["verdict"] == "match"
    assert source.read_bytes() != before and b'"type":"compacted"' in source.read_bytes()
