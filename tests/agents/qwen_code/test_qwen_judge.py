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

FIXTURES: Final = Path(__file__).resolve().parents[2] / "fixtures" / "qwen_code"
LIMITS: Final = LineLimits(max_line_bytes=1_000_000, max_json_depth=200)


def test_the_client_names_itself_and_refuses_a_place_without_it(tmp_path: Path) -> None:
    client = QWEN_CODE.judge.client
    assert client.name == "Qwen Code" and client.not_installed == "QwenCodeNotInstalled"
    with pytest.raises(QwenCodeNotInstalled):
        client.locate(tmp_path)


def test_qwen_code_holds_the_candidate_the_plug_in_composed(tmp_path: Path) -> None:
    if installed_qwen_code() is None:
        pytest.skip(
            "Qwen Code 0.24.4 could not be installed by scripts/install-qwen-code (no npm or registry)"
        )
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
