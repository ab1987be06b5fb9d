"""The real pi sends the same context from a session with unanswered calls and from its repair:
the result pi made up on every request is now in the file, where pi put it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline.formats.pi.call_repair import repair_calls
from pipeline.formats.pi.session_analysis import analyze_session, message_digest
from pipeline.proof.pi.pi_process import find_pi
from pipeline.proof.pi.pi_resume import resume_pi
from tests.support.pi_files import FIXTURES, LIMITS, ended_mid_tool, lost_result

PI = find_pi()
TOOLS = FIXTURES / "tools.jsonl"
DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "lost-result": lambda data: lost_result(data, 16),
    "ended-mid-tool": lambda data: ended_mid_tool(data, 12),
}


@pytest.mark.skipif(PI is None, reason="pi is not installed (scripts/install-pi installs it)")
@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_pi_sends_the_same_context_from_the_damaged_session_and_its_repair(
    damage: str, tmp_path: Path
) -> None:
    assert PI is not None
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(DAMAGE[damage](TOOLS.read_bytes()))
    repair = repair_calls(analyze_session(damaged.read_bytes(), LIMITS), LIMITS)
    assert repair is not None
    repaired = tmp_path / "repaired.jsonl"
    repaired.write_bytes(repair.data)
    sent = {path.name: resume_pi(path, pi=PI, timeout=120) for path in (damaged, repaired)}
    assert all(result.resumed for result in sent.values()), [r.stderr[-1000:] for r in sent.values()]
    before, after = (
        [message_digest(m) for m in sent[name].context] for name in ("damaged.jsonl", "repaired.jsonl")
    )
    assert after == before
    assert after == analyze_session(repair.data, LIMITS).context_digests()
    assert any(m.get("content") == "No result provided" for m in sent["repaired.jsonl"].context)
