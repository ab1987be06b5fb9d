"""`fit-calibration --codex`: auto's per-turn fit on Codex rollouts, its framing and held-out figure."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import pytest

from pipeline.estimate.families import ModelFamily
from pipeline.formats.codex.billed_requests import BilledRequest
from tests.support.rollout_builder import RolloutBuilder

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


@pytest.fixture(scope="module")
def script() -> types.ModuleType:
    sys.path.insert(0, str(SCRIPTS))  # it imports `_fit_families` beside it, as the script does
    try:
        spec = importlib.util.spec_from_file_location("_fit_codex", SCRIPTS / "_fit_codex.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its dataclasses resolve their annotations through it
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(SCRIPTS))
    return module


def rollout(script: types.ModuleType, label: str, framing: int, reasoning: int = 0) -> object:
    """Ten requests billed as a constant, each item's text, `framing` per item and `reasoning`
    re-read per earlier request of the one user turn."""
    requests = []
    for n in range(10):
        tokens, items = 900 * n + 40 * (n % 3), 3 * n + 2
        billed = 7_000 + tokens + framing * items + reasoning * n
        requests.append(
            BilledRequest(
                n + 1, n + 1, billed, 0, items, tokens, 0, reasoning, reasoning * n, "gpt-5.4", n == 0
            )
        )
    return script.Rollout(label, "0.114.0", ModelFamily.OPENAI, tuple(requests))


def test_the_framing_is_the_grid_point_the_bills_say(script: types.ModuleType) -> None:
    view = script.View("visible", json=False, reasoning=False)
    sessions = [script.turns(rollout(script, f"r{n}.jsonl", 12), view) for n in range(6)]
    framing, error = script.best_framing(sessions)
    assert framing == 12 and error == pytest.approx(0.0, abs=1e-9)


def test_the_turns_reasoning_is_what_the_reasoning_view_adds(script: types.ModuleType) -> None:
    sessions = [rollout(script, f"r{n}.jsonl", 0, reasoning=300) for n in range(6)]
    plain = script.View("visible", json=False, reasoning=False)
    read_back = script.View("visible+reasoning", json=False, reasoning=True)
    assert script.best_framing([script.turns(r, read_back) for r in sessions]) == (
        0,
        pytest.approx(0.0, abs=1e-9),
    )
    assert script.best_framing([script.turns(r, plain) for r in sessions])[1] > 0.05


def test_held_out_rollouts_are_judged_with_the_framing_fitted_elsewhere(script: types.ModuleType) -> None:
    view = script.View("visible", json=False, reasoning=False)
    fitted = [rollout(script, f"fit{n}.jsonl", 12) for n in range(6)]
    same = [rollout(script, f"held{n}.jsonl", 12) for n in range(3)]
    other = [rollout(script, f"held{n}.jsonl", 30) for n in range(3)]
    assert script.judge_held_out(fitted, same, view) == pytest.approx(0.0, abs=1e-9)
    assert script.judge_held_out(fitted, other, view) > 0.01  # a framing they do not share shows


def test_a_held_out_file_the_fit_also_holds_is_refused(script: types.ModuleType, tmp_path: Path) -> None:
    b = RolloutBuilder(seed=41)
    for task in ("one", "two", "three"):
        b.exchange(task, tools=1)
    for folder in ("fit", "held"):
        (tmp_path / folder).mkdir()
        b.write(tmp_path / folder / "rollout.jsonl")
    with pytest.raises(SystemExit, match="also in the rollouts fitted on"):
        script.fit_codex(tmp_path / "fit", held_out=tmp_path / "held")
