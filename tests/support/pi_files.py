"""The pi sessions tests read: the real corpus (in place), the pi-mono files beside the other
agents', and the fixtures the real pi wrote (tests/fixtures/pi/)."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from pipeline.formats.line_guard import LineLimits

CORPUS: Final = Path(__file__).resolve().parents[3] / "shared" / "corpus"
FIXTURES: Final = Path(__file__).resolve().parents[1] / "fixtures" / "pi"
LIMITS: Final = LineLimits(max_line_bytes=300_000_000, max_json_depth=1000)


def pi_session_files() -> list[Path]:
    """Every real pi session: the corpus's, the two pi-mono files, and the pi-written fixtures."""
    corpus = sorted((CORPUS / "pi" / "files").glob("*.jsonl"))
    pi_mono = sorted((CORPUS / "files").glob("badlogic__pi-mono__*.jsonl"))
    return [*corpus, *pi_mono, *sorted(FIXTURES.glob("*.jsonl"))]
