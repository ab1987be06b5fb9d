"""The real Codex CLI 0.171 resumed offline against the loopback Responses API (marker `codex`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.proof.codex.codex_client import PROBE, CodexResumeTimedOut, resume_codex
from pipeline.proof.codex.codex_verdict import judge_codex
from tests.support.codex_rollouts import SUMMARY, compacted, conversation, write_rollout

pytestmark = pytest.mark.codex
TIMEOUT = 120.0


def test_codex_sends_the_history_of_a_built_rollout_item_for_item(codex: Path, tmp_path: Path) -> None:
    items = conversation(3)
    rollout = write_rollout(tmp_path / "in", items)
    before = rollout.read_bytes()
    kept = tmp_path / "as-codex-left-it.jsonl"
    result = resume_codex(rollout, executable=codex, timeout=TIMEOUT, keep=kept)
    assert result.resumed and result.returncode == 0, result.stderr[-2000:]
    assert result.context == tuple(items)
    assert result.turn[-1]["content"][0]["text"] == PROBE
    assert result.response_requests == 1
    assert rollout.read_bytes() == before  # Codex appended to the staged copy only
    left = kept.read_bytes()  # the staged copy: our meta line, the rest verbatim, Codex's turn after
    assert left[left.index(b"\n") :].startswith(before[before.index(b"\n") :])
    assert len(left) > len(before)


def test_a_compacted_rollout_resumes_as_its_replacement_history_then_the_later_items(
    codex: Path, tmp_path: Path
) -> None:
    items = conversation(3)
    original = write_rollout(tmp_path / "a", items)
    candidate = write_rollout(tmp_path / "b", items[4:], compaction=compacted())
    sent = [resume_codex(path, executable=codex, timeout=TIMEOUT) for path in (original, candidate)]
    assert sent[1].context[0]["content"][0]["text"] == SUMMARY
    verdict = judge_codex(sent[0].context, sent[1].context, summaries=[SUMMARY])
    assert verdict.ok and (verdict.summary_items, verdict.kept_items) == (1, 8), verdict.differences


def test_a_file_codex_cannot_read_is_not_resumed(codex: Path, tmp_path: Path) -> None:
    legacy = tmp_path / "rollout-2025-08-19T08-25-08-38b123ff-933b-4dfe-bd12-d42671fcb25f.jsonl"
    legacy.write_text('{"id": "38b123ff-933b-4dfe-bd12-d42671fcb25f", "timestamp": "2025-08-19"}\n')
    result = resume_codex(legacy, executable=codex, timeout=TIMEOUT)
    assert not result.resumed and result.returncode != 0
    assert result.context == () and result.response_requests == 0


def test_a_resume_over_its_time_limit_is_killed(codex: Path, tmp_path: Path) -> None:
    rollout = write_rollout(tmp_path, conversation(1))
    with pytest.raises(CodexResumeTimedOut, match=r"did not finish within 0\.01 s"):
        resume_codex(rollout, executable=codex, timeout=0.01)
