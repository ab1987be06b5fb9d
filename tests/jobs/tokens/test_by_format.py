"""`tokens` sums its sessions per agent format too, and counts those compress would compact at the
current target (by the estimator the plan uses; a subagent's transcript never)."""

from __future__ import annotations

from pathlib import Path

from msgspec import UNSET

from pipeline.jobs.tokens.by_corpus import summarize
from pipeline.jobs.tokens.job import tokens_session
from pipeline.report.documents import ContextTokensReport, Outcome
from pipeline.testing.sessions import build_session
from pipeline.testing.settings import tokens_options
from tests.support.rollout_builder import RolloutBuilder


def outcomes(tmp_path: Path) -> dict[str, Outcome]:
    small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    build_session(small, turns=2, seed=1)
    build_session(large, turns=12, seed=2)
    rollout = RolloutBuilder(seed=3)
    for number in range(6):
        rollout.exchange(f"task {number}: fix module_{number}.py", tools=2, output_bytes=2000)
    codex = rollout.write(tmp_path / "rollout-2026-03-01T12-00-00-x.jsonl")
    options = tokens_options()
    return {path.name: tokens_session(path, path.name, options) for path in (small, large, codex)}


def test_sessions_are_summed_per_agent_and_those_over_the_bar_counted(tmp_path: Path) -> None:
    found = outcomes(tmp_path)
    chains = {
        label: o.report.tokens.seed_record.active_chain  # type: ignore[union-attr]
        for label, o in found.items()
        if label.endswith(".jsonl") and not label.startswith("rollout")
    }
    bar = (chains["small.jsonl"] + chains["large.jsonl"]) // 2  # only the large session is over it
    corpora = dict.fromkeys(found, "team")
    summary = summarize(
        found, corpora, ["seed"], calibration_version="test", elapsed_ms=1, needs=lambda chain: chain > bar
    )
    assert {fmt: group.sessions for fmt, group in summary.by_format.items()} == {
        "claude-code": 2,
        "codex-rollout": 1,
    }
    claude = summary.by_format["claude-code"]
    assert claude.need_compaction == 1
    assert (
        claude.totals["session"]["seed"] == summary.overall.totals["session"]["seed"]
    )  # rollouts: their own
    rollout = summary.by_format["codex-rollout"].need_compaction
    assert summary.overall.need_compaction == 1 + rollout == summary.corpora["team"].need_compaction
    everything = summarize(
        found, corpora, ["seed"], calibration_version="test", elapsed_ms=1, needs=lambda chain: True
    )
    assert (
        everything.overall.need_compaction == 3 and everything.by_format["codex-rollout"].need_compaction == 1
    )


def test_a_format_read_through_the_seam_is_summed_by_class_and_view(tmp_path: Path) -> None:
    found = outcomes(tmp_path)
    codex = next(o for label, o in found.items() if label.startswith("rollout"))
    assert isinstance(codex.report, ContextTokensReport)
    tokens = codex.report.tokens
    summary = summarize(
        found, dict.fromkeys(found, "team"), ["seed"], calibration_version="test", elapsed_ms=1, needs=bool
    )
    group = summary.by_format["codex-rollout"]
    own = tokens.estimators[0]  # the client's own estimate
    assert group.measured == 1
    assert group.totals["session"][own] == tokens.session[own] > 0
    assert group.totals["active_chain"][own] == tokens.context[own] > 0
    assert set(group.classes) >= set(tokens.classes)
    assert (
        sum(
            entry.active_chain.get(own, 0)
            for entry in group.classes.values()
            if entry.active_chain is not UNSET
        )
        == tokens.context[own]
    )
    row = next(row for row in summary.sessions if row.label == codex.label)
    assert row.active_chain == tokens.context and set(row.classes or {}) == set(tokens.classes)
