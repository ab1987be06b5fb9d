"""The model a resume is pinned to: the 1M window when the session was billed beyond 200k."""

from __future__ import annotations

import re
from pathlib import Path

from pipeline.proof.claude_code.model import LONG_CONTEXT_SUFFIX, with_recorded_window
from pipeline.testing.sessions import build_session


def _session(tmp_path: Path, cache_read: int | None) -> Path:
    path = tmp_path / f"s{cache_read}.jsonl"
    build_session(path, turns=4)
    if cache_read is not None:  # one call of the session read this many cached tokens
        data = path.read_text()
        path.write_text(
            re.sub(r'"cache_read_input_tokens":\d+', f'"cache_read_input_tokens":{cache_read}', data, count=1)
        )
    return path


def test_a_session_billed_beyond_the_standard_window_resumes_with_the_long_one(tmp_path: Path) -> None:
    assert with_recorded_window("claude-opus-4-6", _session(tmp_path, None)) == "claude-opus-4-6"
    assert with_recorded_window("claude-opus-4-6", _session(tmp_path, 190_000)) == "claude-opus-4-6"
    long = _session(tmp_path, 260_000)
    assert with_recorded_window("claude-opus-4-6", long) == "claude-opus-4-6" + LONG_CONTEXT_SUFFIX
    assert with_recorded_window("claude-opus-4-6[1m]", long) == "claude-opus-4-6[1m]"  # never twice
