"""The golden test: the context our reader rebuilds from a pi session is exactly, message for
message, what the real pi 1.6.0 sends when it resumes that session (every real file we have)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.formats.pi.session_analysis import analyze_session, message_digest
from pipeline.proof.pi.pi_process import find_pi
from pipeline.proof.pi.pi_resume import resume_pi
from tests.support.pi_builder import PiSessionBuilder
from tests.support.pi_files import LIMITS, pi_session_files

PI = find_pi()
FILES = pi_session_files()


def test_the_golden_covers_every_real_pi_file() -> None:
    assert len(FILES) >= 12  # 8 corpus files, 2 pi-mono files, the pi-written fixtures


@pytest.mark.skipif(PI is None, reason="pi is not installed (scripts/install-pi installs it)")
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[-48:])
def test_the_rebuilt_context_is_what_pi_sends(path: Path) -> None:
    assert PI is not None
    sent = resume_pi(path, pi=PI, timeout=120)
    assert sent.resumed, sent.stderr[-2000:]
    analysis = analyze_session(path.read_bytes(), LIMITS)
    ours = [message.body for message in analysis.messages]
    assert len(ours) == len(sent.context)
    assert [message_digest(m) for m in ours] == [message_digest(m) for m in sent.context]


@pytest.mark.skipif(PI is None, reason="pi is not installed (scripts/install-pi installs it)")
def test_a_session_larger_than_the_judges_window_is_sent_whole(tmp_path: Path) -> None:
    """pi compacts before a request past its model's window: the judge turns that off, so a giant
    is sent as rebuilt (about 10 MB here, over 2M tokens by pi's characters / 4)."""
    assert PI is not None
    builder = PiSessionBuilder(seed=3)
    for turn in range(700):
        builder.turn(f"task {turn}", tools=3, output_bytes=4000)
    path = builder.write(tmp_path / "giant.jsonl")
    sent = resume_pi(path, pi=PI, timeout=300)
    assert sent.resumed and sent.chat_requests == 1
    analysis = analyze_session(path.read_bytes(), LIMITS)
    assert analysis.context_tokens() > 2_000_000
    assert [message_digest(m) for m in sent.context] == analysis.context_digests()
