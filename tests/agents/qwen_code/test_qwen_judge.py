"""The plug-in's judge runs the real Qwen Code 0.24.4 on an original and the candidate the
plug-in composed, and holds it (skipped, saying why, only when Qwen Code cannot be installed)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Final

import pytest

from pipeline.agents.qwen_code import QWEN_CODE
from pipeline.agents.qwen_code.qwen_judge import QwenClient
from pipeline.formats.line_guard import LineLimits
from pipeline.proof.qwen_code.qwen_install import QwenCodeNotInstalled
from pipeline.vocabulary import Verdict
from tests.support.qwen_model import installed_qwen_code
from tests.support.qwen_records import long_outputs

FIXTURES: Final = Path(__file__).resolve().parents[2] / "fixtures" / "qwen_code"
LIMITS: Final = LineLimits(max_line_bytes=1_000_000, max_json_depth=200)


def test_the_client_names_itself_and_refuses_a_place_without_it(tmp_path: Path) -> None:
    client = QWEN_CODE.judge.client
    assert client.name == "Qwen Code" and client.not_installed == "QwenCodeNotInstalled"
    with pytest.raises(QwenCodeNotInstalled):
        client.locate(tmp_path)


def _require_qwen_code() -> None:
    if installed_qwen_code() is None:
        pytest.skip(
            "Qwen Code 0.24.4 could not be installed by scripts/install-qwen-code (no npm or registry)"
        )


def test_qwen_code_holds_the_candidate_the_plug_in_composed(tmp_path: Path) -> None:
    _require_qwen_code()
    source = FIXTURES / "compressed.jsonl"
    session = QWEN_CODE.read(source.read_bytes(), source, LIMITS)
    plan = session.plan_tail(room=0)
    assert plan is not None
    candidate = tmp_path / "candidate.jsonl"
    candidate.write_bytes(session.compose(plan, "SUMMARY-OF-THE-EARLIER-WORK"))
    script = QwenClient().locate(None)
    started = time.monotonic()
    judged = QWEN_CODE.judge.prove(
        source, candidate, executable=script, timeout=120.0, limits=LIMITS, excluded=(), summaries=None
    )
    section = judged.section((time.monotonic() - started) * 1000)
    assert judged.ok, section.differences
    assert section.verdict is Verdict.MATCH and section.summary_blocks == 1 and section.kept_blocks >= 1


def test_an_output_qwen_code_clears_for_the_original_alone_still_holds(tmp_path: Path) -> None:
    """Past 500,000 characters of tool outputs Qwen Code clears the oldest (all but the newest five)
    down to half that before it sends: for the original, not for a candidate keeping less."""
    _require_qwen_code()
    source = tmp_path / "original.jsonl"
    source.write_bytes(long_outputs(8, 80_000))  # 640,000 characters of outputs
    session = QWEN_CODE.read(source.read_bytes(), source, LIMITS)
    plan = session.plan_tail(room=sum(item.tokens for item in session.sent()) * 6 // 8)
    assert plan is not None and plan.first_item == 5  # c2 to c7 kept: 480,000 characters
    candidate = tmp_path / "candidate.jsonl"
    candidate.write_bytes(session.compose(plan, "SUMMARY-OF-THE-EARLIER-WORK"))
    judged = QWEN_CODE.judge.prove(
        source, candidate, executable=QwenClient().locate(None), timeout=120.0, limits=LIMITS, excluded=(),
        summaries=["SUMMARY-OF-THE-EARLIER-WORK"],
    )  # fmt: skip
    section = judged.section(0.0)
    assert judged.ok, section.differences
    assert any(note.startswith("1 tool output(s)") for note in section.notes)  # c2, cleared for the original
