"""A compacted giant resumes in the real Claude Code as summary + tail, not compacted again (marker `claude_code`).

The candidate keeps its tail's `usage` fields byte for byte: they bill the source's context at
that call, and Claude Code 2.1.332 sizes a resumed conversation from the last of them. A session
whose calls stayed well inside the window (most do: the client compacts near it) therefore
resumes with one request: the probe's, opening with our summary. One whose last call billed
near the window's end (about 158k of 200k measured) is compacted by Claude Code first: the README's
known limits say so.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from pipeline.jobs.compress.job import compress_session
from pipeline.proof.claude_code.client import resume
from pipeline.testing import as_json
from pipeline.testing.giant import generate_giant
from pipeline.testing.settings import compress_options

MODEL = "claude-opus-4-6"  # a 200k window
CALLS_WINDOW = 120_000  # the generated calls bill at most 80% of this: well inside the model's


def billed(line: bytes) -> int:
    usage = orjson.loads(line)["message"]["usage"]
    return int(
        usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]
    )


@pytest.mark.claude_code
def test_a_compacted_giant_resumes_as_summary_and_tail_in_one_request(
    claude_code: Path, tmp_path: Path
) -> None:
    made = generate_giant(
        tmp_path / "source", target_bytes=3 * 1024 * 1024, seed=2, context_window=CALLS_WINDOW
    )
    source = tmp_path / "source" / made.path
    report = as_json(compress_session(source, source.name, compress_options(tmp_path / "out")))
    assert report["status"] == "compressed", report.get("reasons")
    assert report["tokens"]["active_chain"] > 5 * report["tokens"]["output"]
    candidate = tmp_path / "out" / "root" / source.name
    kept = [line for line in candidate.read_bytes().split(b"\n") if b'"type":"assistant"' in line]
    assert 0 < billed(kept[-1]) <= CALLS_WINDOW  # the tail keeps the source's billed usage

    resumed = resume(candidate, executable=claude_code, model=MODEL, timeout=120)
    assert resumed.resumed and resumed.message_requests == 1  # a compaction sends its own request first
    assert resumed.context.blocks[0].text.startswith("This session is being continued")
    assert len(resumed.context.blocks) > 10
