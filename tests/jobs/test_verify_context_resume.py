"""verify-resume on Codex rollouts: the Codex CLI judges (marker `codex`, but the usage errors)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.proof.codex.codex_prove import compaction_summaries
from pipeline.testing.invoke import compaction
from pipeline.testing.settings import LIMITS
from pipeline.vocabulary import ResumeExit
from tests.support.codex_rollouts import SUMMARY, compacted, conversation, user, write_rollout


def _pair(tmp_path: Path, *, summary: bool = True) -> tuple[Path, Path]:
    items = conversation(3)
    original = write_rollout(tmp_path / "original", items)
    candidate = write_rollout(tmp_path / "candidate", items[4:], compaction=compacted() if summary else None)
    return original, candidate


def test_the_summary_is_the_newest_compacted_records_message(tmp_path: Path) -> None:
    rollout = write_rollout(tmp_path, conversation(1), compaction=compacted("older summary"))
    with rollout.open("a") as more:
        more.write(json.dumps({"type": "compacted", "payload": compacted()}) + "\n")
        more.write(json.dumps({"type": "compacted", "payload": {"message": ""}}) + "\n")
    assert compaction_summaries(rollout, LIMITS) == (SUMMARY,)
    assert compaction_summaries(write_rollout(tmp_path / "plain", conversation(1)), LIMITS) == ()


def test_a_codex_path_that_holds_no_codex_exits_2(tmp_path: Path) -> None:
    original, candidate = _pair(tmp_path)
    done = compaction("verify-resume", str(original), str(candidate), "--codex", str(tmp_path))
    assert done.returncode == 2 and "Codex not found" in done.stderr


def test_judge_names_a_formats_client_over_its_own_flag_and_config(tmp_path: Path) -> None:
    """`--judge FORMAT=PATH` names any format's client: here a Codex that is not there, which
    wins over a config's [judges] row and is reported as Codex's own usage error."""
    original, candidate = _pair(tmp_path)
    config = tmp_path / "judges.toml"
    config.write_text(f'[judges]\n"codex-rollout" = "{tmp_path / "elsewhere"}"\n')
    named = tmp_path / "named"
    done = compaction(
        "verify-resume",
        str(original),
        str(candidate),
        "--config",
        str(config),
        "--judge",
        f"codex-rollout={named}",
    )
    assert done.returncode == 2 and "Codex not found" in done.stderr and str(named) in done.stderr
    by_config = compaction("verify-resume", str(original), str(candidate), "--config", str(config))
    assert by_config.returncode == 2 and str(tmp_path / "elsewhere") in by_config.stderr


@pytest.mark.parametrize("value", ["codex-rollout", "nobody=/bin/true", "=x"])
def test_judge_refuses_what_names_no_processed_formats_client(tmp_path: Path, value: str) -> None:
    original, candidate = _pair(tmp_path)
    done = compaction("verify-resume", str(original), str(candidate), "--judge", value)
    assert done.returncode == 2 and "--judge" in done.stderr and "claude-code" in done.stderr


def test_a_codex_that_cannot_run_exits_with_codexs_own_code_not_claude_codes(tmp_path: Path) -> None:
    original, candidate = _pair(tmp_path)
    broken = tmp_path / "codex"
    broken.write_bytes(b"\x7fELF not a program")  # executable, but the system cannot run it
    broken.chmod(0o755)
    done = compaction("verify-resume", str(original), str(candidate), "--codex", str(broken))
    assert done.returncode == ResumeExit.CODEX_FAILED == 5, done.stderr
    assert ResumeExit.CODEX_FAILED != ResumeExit.CLAUDE_CODE_FAILED
    assert "could not be started" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.codex
def test_a_file_naming_no_thread_codex_can_look_up_exits_3_not_as_a_failure(
    codex: Path, tmp_path: Path
) -> None:
    original, _ = _pair(tmp_path)
    anonymous = tmp_path / "notes.jsonl"  # no thread id in its name, and no session_meta
    anonymous.write_text("".join(original.read_text().splitlines(keepends=True)[1:]))
    done = compaction("verify-resume", str(original), str(anonymous), "--codex", str(codex))
    assert done.returncode == ResumeExit.NOT_RESUMABLE, done.stderr
    assert "no thread id" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.codex
def test_a_true_compaction_matches_and_the_json_names_the_judge(codex: Path, tmp_path: Path) -> None:
    original, candidate = _pair(tmp_path)
    done = compaction("verify-resume", str(original), str(candidate), "--codex", str(codex), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["verdict"] == "match" and report["differences"] == []
    assert (report["summary_blocks"], report["kept_blocks"]) == (1, 8)
    assert report["codex"] == {"path": str(codex), "version": "0.171.0"}
    assert report["sent"]["original"]["messages"] == 12 and report["characters_reduction"] > 0


@pytest.mark.codex
def test_a_candidate_without_its_summary_is_a_mismatch(codex: Path, tmp_path: Path) -> None:
    original, candidate = _pair(tmp_path, summary=False)
    done = compaction("verify-resume", str(original), str(candidate), "--codex", str(codex))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "mismatch" in done.stdout and "does not open with a summary" in done.stdout
    wrong = write_rollout(tmp_path / "wrong", [user("a different summary"), *conversation(3)[4:]])
    done = compaction("verify-resume", str(original), str(wrong), "--codex", str(codex), "--json")
    assert done.returncode == 0  # leading messages are a summary when the file names none, noted
    assert json.loads(done.stdout)["notes"] == [
        "no summary text is known: the messages before the kept suffix are taken as the summary"
    ]


@pytest.mark.codex
def test_an_original_codex_cannot_read_is_not_resumable(codex: Path, tmp_path: Path) -> None:
    legacy = tmp_path / "rollout-2025-08-19T08-25-08-38b123ff-933b-4dfe-bd12-d42671fcb25f.jsonl"
    meta = {"type": "session_meta", "payload": {"id": "38b123ff-933b-4dfe-bd12-d42671fcb25f"}}
    legacy.write_text(json.dumps(meta) + "\n")
    _, candidate = _pair(tmp_path)
    done = compaction("verify-resume", str(legacy), str(candidate), "--codex", str(codex), "--json")
    assert done.returncode == 3, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["verdict"] == "not-resumable" and report["codex"]["version"] == "0.171.0"
