"""The real Qwen Code 0.24.4 proves `repair` of its calls' answers: resumed, a damaged copy of a
real session (an answer after the next prompt, a parallel call's answer after one, an answer
written twice: one copy, one resume each side) and its repair send the same history, the one the
reader rebuilds for both.

These run the pinned client (scripts/install-qwen-code, installed here when missing; skipped,
saying why, only when it cannot be installed); each resume takes about two seconds.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Final

import pytest

from pipeline.agents.qwen_code import QWEN_CODE
from pipeline.formats.line_guard import LineLimits
from pipeline.formats.qwen_code.session_analysis import analyze_session
from pipeline.formats.rewrites import Rewrite, RewriteKind
from pipeline.proof.qwen_code.qwen_install import QwenCode
from pipeline.proof.qwen_code.qwen_verdict import judge_qwen
from pipeline.proof.qwen_code.resume_run import resume_qwen_code
from pipeline.vocabulary import FindingCode, Verdict
from tests.support.qwen_damage import ALL_DEFECTS
from tests.support.qwen_model import installed_qwen_code

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


def test_qwen_code_sends_the_same_history_from_a_damaged_session_and_its_repair(
    qwen: QwenCode, tmp_path: Path
) -> None:
    damaged = ALL_DEFECTS()
    rewrite = QWEN_CODE.read(damaged, None, LIMITS).rewrite(RewriteKind.REPAIR, LIMITS)
    assert isinstance(rewrite, Rewrite)
    assert rewrite.repaired == {FindingCode.TOOL_RESULT_NOT_FIRST, FindingCode.TOOL_RESULT_ID_DUPLICATE}
    sides = {"damaged": damaged, "repaired": rewrite.data}
    for side, data in sides.items():
        (tmp_path / side).mkdir()
        (tmp_path / side / "session.jsonl").write_bytes(data)
    with ThreadPoolExecutor(len(sides)) as pool:  # the two resumes are independent: side by side
        results = pool.map(
            lambda side: resume_qwen_code(tmp_path / side / "session.jsonl", qwen=qwen, timeout=TIMEOUT),
            sides,
        )
    sent = []
    for (side, data), result in zip(sides.items(), results, strict=True):
        assert result.resumed, result.stderr[-1500:]
        assert [m.message for m in analyze_session(data, LIMITS).messages] == list(result.context), side
        sent.append(result.context)
    verdict = judge_qwen(sent[0], sent[1], summaries=())  # the judge's verdict on a rewrite
    assert verdict.verdict is Verdict.MATCH and sent[0] == sent[1], verdict.differences
