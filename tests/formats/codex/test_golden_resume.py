"""The golden test: the context rebuilt here is, item for item, what real Codex 0.171 sends.

`tests/fixtures/codex_resume.jsonl` holds, per corpus rollout, what `codex exec resume` sent to a
loopback Responses API server (the codex-judge recording): each item's type, role and SHA-256 of
its canonical JSON, and whether Codex resumed the file at all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from pipeline.formats.codex.analysis import analyze_rollout
from pipeline.formats.codex.rollout_items import sent_items
from pipeline.testing.settings import LIMITS

GOLDEN = Path(__file__).resolve().parents[2] / "fixtures" / "codex_resume.jsonl"


def _golden() -> dict[str, dict[str, Any]]:
    rows = (orjson.loads(line) for line in GOLDEN.read_bytes().splitlines() if line.strip())
    return {row["file"]: row for row in rows}


def test_the_golden_names_every_corpus_rollout(codex_files: Path) -> None:
    assert sorted(_golden()) == sorted(path.name for path in codex_files.glob("*.jsonl"))


@pytest.mark.parametrize("name", sorted(_golden()))
def test_the_rebuilt_context_is_what_codex_sends(name: str, codex_files: Path) -> None:
    golden = _golden()[name]
    analysis = analyze_rollout((codex_files / name).read_bytes(), LIMITS)
    assert analysis.rebuilt.resumable is golden["resumable"]
    items = list(sent_items(analysis.rollout, analysis.data, analysis.rebuilt))
    mine = [(item.get("type"), item.get("role")) for item in items]
    assert mine == [(item["type"], item.get("role")) for item in golden["items"]]
    assert analysis.context_digests() == [item["sha256"] for item in golden["items"]]
