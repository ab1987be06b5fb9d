"""The real Qwen Code 0.24.4 as the judge: it sends, on resume, exactly the history the reader
rebuilds (the golden), and resumes a candidate as the summary, then a verbatim suffix.

These run the pinned client (scripts/install-qwen-code, installed here when missing; skipped,
saying why, only when it cannot be installed). Each resume takes about two seconds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import pytest

from pipeline.formats.claude_code.line_guard import LineLimits
from pipeline.formats.qwen_code.compression_records import summary_message
from pipeline.formats.qwen_code.session_analysis import analyze_session
from pipeline.proof.qwen_code.qwen_install import QwenCode
from pipeline.proof.qwen_code.resume_run import PROBE, resume_qwen_code, split_request
from tests.support.qwen_model import installed_qwen_code

FIXTURES: Final = Path(__file__).resolve().parents[2] / "fixtures" / "qwen_code"
LIMITS: Final = LineLimits(max_line_bytes=1_000_000, max_json_depth=200)
TIMEOUT: Final = 120.0


@pytest.fixture(scope="module")
def qwen() -> QwenCode:
    found = installed_qwen_code()
    if found is None:
        pytest.skip(
            "Qwen Code 0.24.4 could not be installed by scripts/install-qwen-code (no npm or registry)"
        )
    return found


@pytest.mark.parametrize("name", ["tools.jsonl", "compressed.jsonl"])
def test_qwen_code_sends_the_history_the_reader_rebuilds(qwen: QwenCode, name: str) -> None:
    session = FIXTURES / name
    result = resume_qwen_code(session, qwen=qwen, timeout=TIMEOUT)
    assert result.resumed, result.stderr[-1500:]
    rebuilt = analyze_session(session.read_bytes(), LIMITS)
    assert [m.message for m in rebuilt.messages] == list(result.context)
    assert result.leading[0]["role"] == "system" and PROBE in str(result.turn[-1])


def test_qwen_code_resumes_a_candidate_as_the_summary_then_a_verbatim_suffix(
    qwen: QwenCode, tmp_path: Path
) -> None:
    source = FIXTURES / "tools.jsonl"
    original = analyze_session(source.read_bytes(), LIMITS)
    plan = original.plan_tail(room=200)
    assert plan is not None
    candidate = tmp_path / source.name
    candidate.write_bytes(original.compose(plan.cut_line, "SUMMARY-OF-THE-EARLIER-WORK"))
    before = resume_qwen_code(source, qwen=qwen, timeout=TIMEOUT)
    after = resume_qwen_code(candidate, qwen=qwen, timeout=TIMEOUT)
    assert after.resumed, after.stderr[-1500:]
    expected = [summary_message("SUMMARY-OF-THE-EARLIER-WORK"), *before.context[plan.first_item :]]
    assert list(after.context) == expected


def test_a_request_splits_into_what_qwen_code_adds_the_history_and_the_new_turn() -> None:
    reminder = {"type": "text", "text": "<system-reminder>\\nenv\\n</system-reminder>"}
    messages = [
        {"role": "system", "content": "You are Qwen Code"},
        {"role": "user", "content": [reminder, {"type": "text", "text": "first"}]},
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": [reminder, {"type": "text", "text": PROBE}]},
    ]
    leading, context, turn = split_request(messages, PROBE)
    assert [m["role"] for m in leading] == ["system", "user"] and leading[1]["content"] == [reminder]
    assert context == ({"role": "user", "content": [{"type": "text", "text": "first"}]}, messages[2])
    assert turn == (messages[3],)
