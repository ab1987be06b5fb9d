"""Fixtures of the in-place tests: a real session and the candidate `compress` builds for it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from pipeline.core.check.structure import structural_failures
from pipeline.core.topology.select import AUTO
from pipeline.jobs.compress import compress_session
from pipeline.testing import TranscriptBuilder
from pipeline.testing.invoke import candidate_of
from pipeline.testing.settings import LIMITS, compress_options


@dataclass(frozen=True, slots=True)
class Compacted:
    """A session's bytes and a validated compaction of them."""

    original: bytes
    candidate: bytes


def build_original(path: Path, *, turns: int = 6, seed: int = 5) -> bytes:
    """A multi-turn session with tool work, large enough for compress to cut."""
    builder = TranscriptBuilder(seed=seed)
    for turn in range(turns):
        builder.user(f"Turn {turn}: refactor module {turn} and keep the public API stable")
        for step in range(4):
            builder.tool_call(
                "Bash", {"command": f"pytest tests/test_{turn}_{step}.py -q"}, "." * 900 + "\n12 passed"
            )
        builder.assistant(builder.text(f"Turn {turn} is done; the tests pass."))
    builder.last_prompt()
    builder.write(path)
    return path.read_bytes()


def validator(data: bytes) -> tuple[str, ...]:
    """The shared structural validator, as the transaction runs it."""
    return structural_failures(data, AUTO, LIMITS)


@pytest.fixture(scope="session")
def compacted(tmp_path_factory: pytest.TempPathFactory) -> Compacted:
    """One real session and the candidate compress writes for it (built once)."""
    root = tmp_path_factory.mktemp("compacted")
    source = root / "session.jsonl"
    original = build_original(source)
    options = compress_options(root / "out", min_tokens=0, min_recent_records=8)
    outcome = compress_session(source, "session.jsonl", options)
    assert outcome.status.value == "compressed", outcome.report
    candidate = candidate_of(root / "out", source).read_bytes()
    assert not validator(candidate)
    return Compacted(original, candidate)
