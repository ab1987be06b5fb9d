"""The survival contract, driven by a language-neutral JSON matrix (fixtures/survival_matrix.json)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from pipeline.core.check.contract import (
    RESTATED_CLOSE,
    RESTATED_OPEN,
    ContractMessage,
    Violation,
    check_survival,
    protected_round,
    restate,
    restated_instructions,
)

MATRIX = json.loads((Path(__file__).parent / "fixtures" / "survival_matrix.json").read_text())


def messages(rows: list[dict[str, Any]]) -> list[ContractMessage]:
    return [
        ContractMessage(
            row["role"],
            row.get("text", ""),
            tuple(row.get("tool_use_ids", ())),
            tuple(row.get("tool_result_ids", ())),
            row.get("checkpoint", False),
            row.get("meta", False),
            row.get("media", False),
        )
        for row in rows
    ]


def test_the_matrix_covers_the_seed_behaviours() -> None:
    assert len(MATRIX["cases"]) >= 14
    expected = {v for case in MATRIX["cases"] for v in case["expect"]}
    assert expected == {v.value for v in Violation}  # every violation is exercised at least once


@pytest.mark.parametrize("case", MATRIX["cases"], ids=[c["name"] for c in MATRIX["cases"]])
def test_survival_matrix(case: dict[str, Any]) -> None:
    found = check_survival(messages(case["before"]), messages(case["after"]), anchors=case.get("anchors", ()))
    assert sorted(v.value for v in found) == sorted(case["expect"])


def test_a_masked_rewrite_must_hold_as_many_summaries_as_its_source() -> None:
    """`checkpoints=0` (a masked chain with no compaction): none is missing, a new one is one too many."""
    chain = messages([{"role": "user", "text": "fix the parser"}, {"role": "assistant", "text": "done"}])
    summary = messages([{"role": "user", "text": "Summary: the parser", "checkpoint": True}])
    assert check_survival(chain, chain, checkpoints=0) == ()
    assert check_survival(chain, summary + chain, checkpoints=0) == (Violation.CHECKPOINT_DUPLICATED,)
    assert check_survival(chain, chain) == (Violation.CHECKPOINT_MISSING,)


def test_protected_round_of_a_long_task_starts_at_its_second_to_last_exchange() -> None:
    case = next(c for c in MATRIX["cases"] if c["name"].startswith("long single-request"))
    view = protected_round(messages(case["before"]))
    assert view.start == 7 and view.tool_use_ids == ("s4", "s5")


def test_hook_context_between_tool_calls_leaves_the_prompt_as_the_round_instruction() -> None:
    case = next(c for c in MATRIX["cases"] if c["name"].startswith("hook context summarized"))
    view = protected_round(messages(case["before"]))
    assert view.user_texts == ("refactor the parser",) and view.tool_use_ids == ("t3", "t4")


@pytest.mark.parametrize("seed", range(20))
def test_restated_instructions_read_back_exactly_whatever_they_hold(seed: int) -> None:
    rng = random.Random(seed)
    pieces = ["fix it", "\n", "  ", RESTATED_CLOSE, RESTATED_OPEN.format(chars=3), "é", "\u2603", "```", ""]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 12))) for _ in range(rng.randint(1, 4))]
    summary = "intro\n" + "\n".join(restate(text) for text in texts) + "\n\n## Goal\n- more (L1)"
    assert restated_instructions(summary) == tuple(texts)
