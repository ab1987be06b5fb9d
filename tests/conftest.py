"""Shared fixtures: the corpus location, the anyio backend, and a transcript builder."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

# `compress` resumes every candidate in Claude Code by default whenever it is installed (two
# resumes, 5-20 s, per candidate). Tests about something else run it without the gate; the tests
# of the gate itself pass --verify-resume (flags beat the environment) or remove this variable.
RESUME_GATE_ENV = "COMPACTION_COMPRESS_VERIFY_RESUME"
os.environ.setdefault(RESUME_GATE_ENV, "off")

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
CORPUS_FILES = CORPUS / "files"
GOLDEN = CORPUS / "golden"
CODEX_FILES = CORPUS / "codex" / "files"


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
def codex_files() -> Path:
    """The real Codex rollouts, read in place (never copied into the project)."""
    if not CODEX_FILES.is_dir():
        pytest.fail(f"Codex corpus not found at {CODEX_FILES}")
    return CODEX_FILES


@pytest.fixture(scope="session")
def golden_dir() -> Path:
    """Golden figures computed from the corpus by the reference tools."""
    return GOLDEN


@pytest.fixture(scope="session")
def claude_code() -> Path:
    """The pinned Claude Code that scripts/install-claude-code installs.

    Missing, it fails the test with the fix; the one exception is a machine without npm, where
    it cannot be installed at all: there the test is skipped and says so.
    """
    from pipeline.proof.claude_code.client import CLAUDE_CODE_VERSION, find_claude_code, installed_version

    executable = find_claude_code()
    if executable is None:
        if shutil.which("npm") is None:
            pytest.skip(
                f"npm is not installed, so Claude Code {CLAUDE_CODE_VERSION} could not be installed; "
                "install Node.js/npm and run scripts/install-claude-code to run this test"
            )
        pytest.fail(
            f"Claude Code {CLAUDE_CODE_VERSION} is not installed: run scripts/install-claude-code "
            "(or set COMPACTION_CLAUDE_CODE to an executable or npm prefix)",
            pytrace=False,
        )
    version = installed_version(executable)
    if version != CLAUDE_CODE_VERSION:
        pytest.fail(
            f"{executable} is Claude Code {version}, the tests need {CLAUDE_CODE_VERSION}: "
            "run scripts/install-claude-code",
            pytrace=False,
        )
    return executable


@pytest.fixture(scope="session")
def codex() -> Path:
    """The pinned Codex CLI, installed by scripts/install-codex here when it is missing.

    Skipped, saying why, only when it truly cannot be installed (no npm, or npm failed: no network
    to the registry); a different version fails the test with the fix.
    """
    from pipeline.installed import CODEX_VERSION, find_codex, reported_version

    if find_codex() is None:
        script = Path(__file__).resolve().parents[1] / "scripts" / "install-codex"
        done = subprocess.run([str(script)], capture_output=True, text=True, check=False)
        if find_codex() is None:
            why = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
            pytest.skip(f"Codex {CODEX_VERSION} could not be installed by scripts/install-codex: {why[0]}")
    executable = find_codex()
    assert executable is not None
    version = reported_version(executable)
    if version != CODEX_VERSION:
        pytest.fail(f"{executable} is Codex {version}, the tests need {CODEX_VERSION}", pytrace=False)
    return executable


@pytest.fixture(scope="session")
def codex_corpus() -> Path:
    """The real Codex rollouts, read in place (never copied into the project)."""
    folder = CORPUS / "codex" / "files"
    if not folder.is_dir():
        pytest.fail(f"Codex corpus not found at {folder}")
    return folder
