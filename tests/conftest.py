"""Shared fixtures: the corpus location, the anyio backend, and a transcript builder."""

from __future__ import annotations

from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
CORPUS_FILES = CORPUS / "files"
GOLDEN = CORPUS / "golden"


@pytest.fixture
def anyio_backend() -> str:
    """anyio's pytest plugin runs async tests on asyncio only."""
    return "asyncio"


@pytest.fixture(scope="session")
def corpus_files() -> Path:
    """The real transcripts, read in place (never copied into the project)."""
    if not CORPUS_FILES.is_dir():
        pytest.fail(f"corpus not found at {CORPUS_FILES}")
    return CORPUS_FILES


@pytest.fixture(scope="session")
def golden_dir() -> Path:
    """Golden figures computed from the corpus by the reference tools."""
    return GOLDEN
