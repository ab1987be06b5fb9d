"""Real Codex 0.171 sends the golden context for every corpus rollout (marker `codex`).

tests/fixtures/codex_resume.jsonl (scripts/record-codex-goldens) holds, per rollout, whether Codex
resumes it and the type, role and canonical digest of each history item it sends. The Codex
format's reader rebuilds the same context from the file and is tested against these lines.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import pytest

from pipeline.proof.codex.codex_client import resume_codex
from pipeline.proof.codex.codex_golden import golden_entry, item_digest, item_shape

GOLDEN: Final = Path(__file__).resolve().parents[2] / "fixtures" / "codex_resume.jsonl"
GOLDEN_LINES: Final = [json.loads(line) for line in GOLDEN.read_text().splitlines()]


def test_the_digest_is_sha256_of_the_sorted_key_json() -> None:
    item = {"type": "message", "role": "user", "content": [{"text": "é", "type": "input_text"}]}
    same = {"content": [{"type": "input_text", "text": "é"}], "role": "user", "type": "message"}
    assert item_digest(item) == item_digest(same) and len(item_digest(item)) == 64
    assert item_shape({"type": "reasoning"})["role"] is None
    assert golden_entry("f.jsonl", False, []) == {"file": "f.jsonl", "resumable": False, "items": []}


def test_every_corpus_rollout_has_one_golden_line_in_the_agreed_shape(codex_corpus: Path) -> None:
    assert [entry["file"] for entry in GOLDEN_LINES] == sorted(p.name for p in codex_corpus.glob("*.jsonl"))
    for entry in GOLDEN_LINES:
        assert set(entry) == {"file", "resumable", "items"}
        assert all(set(item) == {"type", "role", "sha256"} for item in entry["items"])
        assert entry["resumable"] == bool(entry["items"])
    unreadable = [entry["file"] for entry in GOLDEN_LINES if not entry["resumable"]]
    assert [name.split("__")[0] for name in unreadable] == ["JaydenXsoe"]  # legacy: Codex cannot read it


@pytest.mark.codex
@pytest.mark.parametrize("entry", GOLDEN_LINES, ids=[e["file"][:48] for e in GOLDEN_LINES])
def test_resuming_the_rollout_sends_the_golden_context(
    entry: dict[str, Any], codex: Path, codex_corpus: Path
) -> None:
    result = resume_codex(codex_corpus / entry["file"], executable=codex, timeout=180.0)
    assert result.resumed == entry["resumable"], result.stderr[-1500:]
    assert [item_shape(item) for item in result.context] == entry["items"]
