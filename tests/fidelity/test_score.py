"""Scores: recall per class, the session's fidelity (the mean of its classes), lost probes by anchor."""

from __future__ import annotations

import pytest

from pipeline.fidelity import ProbeClass
from tests.fidelity._items import bash, call, prompt, scored, summary

PROMPT = "Rename the --verbose flag to --debug in every module, please."


def test_each_class_scores_its_own_probes_and_fidelity_is_their_mean() -> None:
    span = [
        prompt(1, PROMPT),
        *call(2, "Read", {"file_path": "/r/a.py"}, "x"),
        *call(4, "Read", {"file_path": "/r/b.py"}, "x"),
        *bash(6, "pytest -q", "3 passed"),
    ]
    resumed = [summary(f"- {PROMPT} (L1)\n- Read 1 paths: /r/a.py (L2)")]
    score = scored(span, resumed)
    assert (score.of(ProbeClass.HUMAN).probes, score.of(ProbeClass.HUMAN).kept) == (1, 1)
    assert score.of(ProbeClass.FILE_READ).recall == 0.5
    assert score.of(ProbeClass.COMMAND).recall == 0.0
    assert score.of(ProbeClass.ERROR).recall is None  # no probes: no recall, and no weight
    assert score.fidelity == pytest.approx((1.0 + 0.5 + 0.0) / 3)
    assert (score.probes, score.kept) == (4, 2)


def test_lost_probes_are_listed_by_line_class_kind_and_anchor_only() -> None:
    span = [prompt(1, PROMPT), *bash(2, "make lint", "Exit code 2")]
    score = scored(span, [summary("- nothing kept")])
    assert [(lost.line, lost.klass, lost.kind) for lost in score.lost] == [
        (1, ProbeClass.HUMAN, ""),
        (2, ProbeClass.COMMAND, ""),
        (3, ProbeClass.ERROR, "failed-command"),
    ]
    assert all(len(lost.anchor) == 12 and "make" not in lost.anchor for lost in score.lost)


def test_a_floor_refuses_only_a_score_below_it_and_never_one_without_probes() -> None:
    score = scored([prompt(1, PROMPT), *bash(2, "ls", "a")], [summary(f"- {PROMPT}")])
    assert score.fidelity == 0.5
    assert score.below(0.6) and not score.below(0.5) and not score.below(0.0)
    empty = scored([], [summary("- x")])
    assert empty.fidelity is None and not empty.below(1.0)
