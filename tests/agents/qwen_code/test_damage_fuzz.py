"""Every kind of damage the fuzzer makes, on every real Qwen Code session, read through the
plug-in: never an exception, every line in exactly one set, findings on lines of the file, a cut
that composes a candidate re-reading as the summary and the original's suffix, and a repair
that, when offered, passes the rewrite job's own check (the same items sent, its findings gone,
none new)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Final

import pytest

from pipeline.agents.qwen_code import QWEN_CODE
from pipeline.formats.line_guard import LineLimits
from pipeline.formats.rewrites import Rewrite, RewriteKind
from pipeline.jobs.context_rewrite import check_rewrite
from pipeline.testing.fuzz import Mutation, mutate
from tests.support.qwen_damage import ALL_DEFECTS

FIXTURES: Final = Path(__file__).resolve().parents[2] / "fixtures" / "qwen_code"
LIMITS: Final = LineLimits(max_line_bytes=200_000, max_json_depth=200)
SOURCES: Final = {
    **{p.name: p.read_bytes() for p in sorted(FIXTURES.glob("*.jsonl"))},
    "all-defects": ALL_DEFECTS(),
}
SEED: Final = 20261207


def _cases() -> list[tuple[str, Mutation, int]]:
    rng = random.Random(SEED)
    return [(name, kind, rng.randrange(2**32)) for name in SOURCES for kind in Mutation]


@pytest.mark.parametrize(("name", "kind", "seed"), _cases())
def test_damage_never_breaks_the_reader_the_sets_the_cut_or_the_repair(
    name: str, kind: Mutation, seed: int
) -> None:
    data = mutate(
        SOURCES[name],
        random.Random(seed),
        kind,
        other=SOURCES["tools.jsonl"],
        depth=1_000,
        huge_bytes=300_000,
    )
    session = QWEN_CODE.read(data, None, LIMITS)
    lines = session.line_count
    sets = session.sweep_sets()
    assert sorted(line for members in sets.values() for line in members) == list(range(1, lines + 1))
    assert all(1 <= f.line <= lines for f in session.findings if f.line is not None)
    plan = session.plan_tail(sum(item.tokens for item in session.sent()) // 3) if session.resumable else None
    if plan is not None:
        cut = session.compress_sets(plan)
        assert sorted(line for members in cut.values() for line in members) == list(range(1, lines + 1))
        candidate = QWEN_CODE.read(session.compose(plan, "SUMMARY"), None, LIMITS)
        expected = [session.summary_sent("SUMMARY"), *session.sent()[plan.first_item :]]
        assert list(candidate.sent()) == expected
    rewrite = session.rewrite(RewriteKind.REPAIR, LIMITS)
    if isinstance(rewrite, Rewrite):
        assert check_rewrite(session, QWEN_CODE.read(rewrite.data, None, LIMITS), rewrite) == []
