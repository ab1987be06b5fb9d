"""`fit-calibration --families --held-out`: the fit judged on sessions it was never fitted on."""

from __future__ import annotations

import importlib.util
import json
import shutil
import types
from pathlib import Path

import pytest

from pipeline.estimate.families import ModelFamily
from pipeline.jobs.tokens.sent import SentTurn

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def script() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("_fit_families", ROOT / "scripts" / "_fit_families.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def billed_session(family: ModelFamily, message: int, block: int, scale: float) -> list[SentTurn]:
    """Eight turns billed exactly as `message`/`block` framing at `scale` says, over a fixed prefix."""
    turns = []
    for n in range(1, 9):
        estimate, messages, blocks = 1_500 * n, 2 * n, n
        billed = 4_000 + round(scale * estimate) + message * messages + block * blocks
        turns.append(SentTurn(n, billed, family, estimate, messages, blocks, n == 1))
    return turns


def test_each_held_out_session_is_measured_with_the_constants_its_family_takes(
    script: types.ModuleType,
) -> None:
    framing, scale = {"claude": (2, 90), "claude-4.7": (3, 128)}, {"claude": 1.0, "claude-4.7": 1.4}
    sessions = {
        "own.jsonl": (ModelFamily.CLAUDE_4_7, billed_session(ModelFamily.CLAUDE_4_7, 3, 128, 1.4)),
        # DeepSeek has no constants of its own: Claude's framing at scale 1 is what it is judged with.
        "borrowed.jsonl": (ModelFamily.DEEPSEEK, billed_session(ModelFamily.DEEPSEEK, 2, 90, 1.0)),
        "missed.jsonl": (ModelFamily.CLAUDE, billed_session(ModelFamily.CLAUDE, 2, 90, 1.2)),
    }
    measured = script.held_out_figures(sessions, framing, scale)
    assert {label: (family, turns) for label, (family, turns, _) in measured.items()} == {
        "own.jsonl": (ModelFamily.CLAUDE_4_7, 8),
        "borrowed.jsonl": (ModelFamily.DEEPSEEK, 8),
        "missed.jsonl": (ModelFamily.CLAUDE, 8),
    }
    assert measured["own.jsonl"][2] == pytest.approx(1.0, abs=1e-3)
    assert measured["borrowed.jsonl"][2] == pytest.approx(1.0, abs=1e-3)
    # Billed growth per turn over framed growth per turn: what the constants leave out shows.
    growth, framed = 1.2 * 1_500 + 2 * 2 + 90, 1_500 + 2 * 2 + 90
    assert measured["missed.jsonl"][2] == pytest.approx(growth / framed, abs=1e-3)


def test_the_held_out_report_gives_each_family_its_count_status_and_worst_sessions(
    script: types.ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    measured = {
        "a.jsonl": (ModelFamily.CLAUDE, 25, 1.02),
        "b.jsonl": (ModelFamily.CLAUDE, 5, 0.80),
        "c.jsonl": (ModelFamily.GLM, 30, 1.30),
    }
    versions = {"a.jsonl": "2.1.7", "b.jsonl": "2.0.76", "c.jsonl": "2.1.7"}
    script.print_held_out(measured, versions, {"claude": 42})
    lines = capsys.readouterr().out.splitlines()
    assert "held-out family claude: fitted (framing)" in lines
    assert any(line.startswith("held-out family glm: not fitted: too-few-sessions") for line in lines)
    assert any(line.startswith("held-out family claude: n=2 median 0.1100") for line in lines)
    assert any(line.startswith("held-out all, billed turns >= 20: n=2 median 0.1600") for line in lines)
    assert any(line.startswith("held-out client 2.1: n=2") for line in lines)
    worst = [line for line in lines if line.startswith("held-out worst")]
    assert worst[0].startswith("held-out worst: slope 1.300 glm 2.1.7 30 turns c.jsonl")


def one_session(directory: Path, name: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    record = {
        "type": "user",
        "uuid": "00000000-0000-4000-8000-000000000001",
        "parentUuid": None,
        "sessionId": "00000000-0000-4000-8000-0000000000aa",
        "message": {"role": "user", "content": "hello"},
    }
    path = directory / name
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return path


def test_a_held_out_set_holding_a_session_of_the_corpus_is_refused(
    script: types.ModuleType, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus"
    source = one_session(corpus, "s.jsonl")
    held_out = tmp_path / "held-out"
    held_out.mkdir()
    shutil.copyfile(source, held_out / "renamed.jsonl")
    with pytest.raises(SystemExit, match="1 held-out sessions are also in the corpus"):
        script.judge_held_out(corpus, held_out, {"claude": (2, 90)}, {"claude": 1.0}, {})
