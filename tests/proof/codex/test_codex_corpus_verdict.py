"""The Codex judge on the real corpus (marker `codex`): a true compaction of each rollout Codex
resumes matches, item for item; one changed item in the kept part is a mismatch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

import pytest

from pipeline.proof.codex.codex_client import resume_codex
from pipeline.proof.codex.codex_verdict import judge_codex
from tests.support.codex_rollouts import SUMMARY, summary_candidate

pytestmark = pytest.mark.codex
GOLDEN: Final = Path(__file__).resolve().parents[2] / "fixtures" / "codex_resume.jsonl"
RESUMABLE: Final = [e["file"] for e in map(json.loads, GOLDEN.read_text().splitlines()) if e["resumable"]]
TIMEOUT: Final = 180.0


@pytest.mark.parametrize("name", RESUMABLE, ids=[name[:48] for name in RESUMABLE])
def test_a_summary_and_a_verbatim_tail_of_a_real_rollout_matches(
    name: str, codex: Path, codex_corpus: Path, tmp_path: Path
) -> None:
    source = codex_corpus / name
    candidate = summary_candidate(source, tmp_path)
    original, compacted = (resume_codex(p, executable=codex, timeout=TIMEOUT) for p in (source, candidate))
    assert original.resumed and compacted.resumed, compacted.stderr[-1500:]
    verdict = judge_codex(original.context, compacted.context, summaries=[SUMMARY])
    assert verdict.ok, verdict.differences
    assert verdict.summary_items == 1 and verdict.kept_items >= 1


def test_one_changed_line_in_the_kept_part_is_a_mismatch(
    codex: Path, codex_corpus: Path, tmp_path: Path
) -> None:
    source = codex_corpus / next(name for name in RESUMABLE if name.startswith("EdouardZemb"))
    candidate = summary_candidate(source, tmp_path)
    lines = candidate.read_bytes().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if b'"function_call_output"' in line)
    record = json.loads(lines[at])
    record["payload"]["output"] += "\nan extra line"
    lines[at] = json.dumps(record).encode() + b"\n"
    candidate.write_bytes(b"".join(lines))
    original, compacted = (resume_codex(p, executable=codex, timeout=TIMEOUT) for p in (source, candidate))
    verdict = judge_codex(original.context, compacted.context, summaries=[SUMMARY])
    assert not verdict.ok
    assert any(
        "neither a summary message nor part of the original's suffix" in d for d in verdict.differences
    )
