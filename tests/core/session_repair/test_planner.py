"""The damage repair's plan on builder sessions: each defect at the start, middle and end of the chain.

Every planted defect is repaired with at most the lines it needs, every other line byte-identical,
the validator finding no pairing error left, and a second plan finding nothing; a dangling
parent is only touched with `relink`; a file with more defects than the round bound is left as
it was.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import orjson
import pytest

from pipeline.core.read_pages import READ_PAGES_CODE, apply_patches, plan_repair
from pipeline.core.session_repair import (
    RepairAction,
    SessionRepairOptions,
    SessionRepairPlan,
    plan_session_repair,
    repair_failures,
)
from pipeline.core.session_repair.edits import split_lines
from pipeline.core.topology.select import AUTO
from pipeline.core.validate.checks import validate
from pipeline.core.validate.pairing import API_PAIRING_CODES
from pipeline.live_vocabulary import RepairScope
from pipeline.testing.fuzz import PAIRING, Mutation, plant, result_lines
from pipeline.testing.sessions import build_session
from pipeline.testing.settings import LIMITS
from pipeline.vocabulary import FindingCode, Severity
from tests.publish.live.test_read_pages_repair import PAGES, session
from tests.support.resolved import resolve

OPTIONS = SessionRepairOptions(AUTO, LIMITS, relink=False, max_rounds=50, read_pages=False)
# The most lines each kind of damage may need changed (a record inserted counts as one).
MOST_LINES = {
    Mutation.DROPPED_RESULT: 2,  # the interrupted result inserted, the next record hung onto it
    Mutation.DUPLICATED_TOOL_ID: 2,  # the call and its result renamed
    Mutation.RESULT_NOT_FIRST: 1,
    Mutation.ORPHAN_RESULT: 1,  # the orphan dropped, the call answered as interrupted, on its line
}
MISSING = "00000000-dead-4bad-8bad-000000000000"


@pytest.fixture(scope="module")
def sound(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A builder session without damage: its one malformed line repaired away."""
    path = tmp_path_factory.mktemp("built") / "session.jsonl"
    build_session(path, turns=8, seed=5)
    plan = plan_session_repair(path.read_bytes(), OPTIONS)
    assert plan.repaired is not None
    return plan.repaired


def _changed_lines(plan: SessionRepairPlan) -> set[int]:
    return {r.line for r in plan.receipts}


def _assert_minimal(damaged: bytes, plan: SessionRepairPlan) -> None:
    assert plan.unrepaired is None and plan.repaired is not None
    assert repair_failures(damaged, plan.repaired, plan, OPTIONS) == ()
    source = split_lines(damaged)
    touched = _changed_lines(plan)
    for origin, (content, _) in zip(plan.origin, split_lines(plan.repaired), strict=True):
        if origin > 0 and origin not in touched:
            assert content == source[origin - 1][0], origin
    found = resolve(plan.repaired)
    errors = validate(found.index, found.graph, found.chain, plan.repaired).findings
    assert not [f for f in errors if f.severity is Severity.ERROR and f.code in API_PAIRING_CODES]


def test_the_builders_malformed_line_is_dropped_and_nothing_else_changes(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    build_session(path, turns=3, seed=2)
    data = path.read_bytes()
    plan = plan_session_repair(data, OPTIONS)
    assert [(r.code, r.action) for r in plan.receipts] == [
        (FindingCode.LINE_TRUNCATED, RepairAction.DROP_LINE)
    ]
    assert plan.receipts[0].bytes_after == 0 and plan.receipts[0].bytes_before > 0
    _assert_minimal(data, plan)
    lines = data.split(b"\n")
    assert plan.repaired == b"\n".join(lines[: plan.receipts[0].line - 1] + lines[plan.receipts[0].line :])


@pytest.mark.parametrize("where", ["start", "middle", "end"])
@pytest.mark.parametrize("kind", PAIRING, ids=str)
def test_each_pairing_defect_is_repaired_with_the_fewest_lines(
    sound: bytes, kind: Mutation, where: str
) -> None:
    sites = result_lines(sound)
    site = {"start": sites[0], "middle": sites[len(sites) // 2], "end": sites[-2]}[where]
    damaged = plant(sound, kind, site)
    assert damaged != sound
    plan = plan_session_repair(damaged, OPTIONS)
    _assert_minimal(damaged, plan)
    assert 1 <= len(_changed_lines(plan)) <= MOST_LINES[kind], plan.receipts
    assert not plan_session_repair(plan.repaired or b"", OPTIONS).changed


def test_a_torn_tail_and_a_missing_final_newline_are_repaired(sound: bytes) -> None:
    torn = sound[: len(sound) - 30]
    plan = plan_session_repair(torn, OPTIONS)
    _assert_minimal(torn, plan)
    assert [r.action for r in plan.receipts] == [RepairAction.DROP_LINE]
    unterminated = sound.rstrip(b"\n")
    plan = plan_session_repair(unterminated, OPTIONS)
    assert plan.repaired == unterminated + b"\n"
    assert [r.code for r in plan.receipts] == [FindingCode.MISSING_FINAL_NEWLINE]


def _broken_link(data: bytes) -> tuple[bytes, int]:
    """A user prompt in the middle of the chain naming a parent never written."""
    found = resolve(data)
    middle = found.chain[len(found.chain) // 2 :]
    line = next(
        n for n in middle if found.index.entry(n).type == "user" and "T" in found.index.entry(n).blocks
    )
    lines = data.split(b"\n")
    record = orjson.loads(lines[line - 1])
    record["parentUuid"] = MISSING
    lines[line - 1] = orjson.dumps(record)
    return b"\n".join(lines), line


def test_a_broken_parent_link_is_relinked_only_when_asked(sound: bytes) -> None:
    broken, line = _broken_link(sound)
    assert len(resolve(broken).chain) < len(resolve(sound).chain)
    assert not plan_session_repair(broken, OPTIONS).changed
    relinking = replace(OPTIONS, relink=True)
    plan = plan_session_repair(broken, relinking)
    assert [(r.line, r.action) for r in plan.receipts] == [(line, RepairAction.RELINK)]
    assert plan.repaired is not None
    assert repair_failures(broken, plan.repaired, plan, relinking) == ()
    assert len(resolve(plan.repaired).chain) == len(resolve(sound).chain)


def test_more_defects_than_the_round_bound_leave_the_file_as_it_was(sound: bytes) -> None:
    sites = result_lines(sound)
    damaged = plant(plant(sound, Mutation.RESULT_NOT_FIRST, sites[0]), Mutation.RESULT_NOT_FIRST, sites[-2])
    plan = plan_session_repair(damaged, replace(OPTIONS, max_rounds=1))
    assert plan.repaired is None and plan.unrepaired is not None
    assert plan.unrepaired.code == "too-many-defects"
    assert plan_session_repair(damaged, OPTIONS).count()[FindingCode.TOOL_RESULT_NOT_FIRST] == 2


def test_a_file_of_another_format_is_not_repaired() -> None:
    rollout = b'{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x"}}\n'
    plan = plan_session_repair(rollout, OPTIONS)
    assert not plan.changed and plan.unrepaired is not None
    assert plan.unrepaired.code == "unsupported-format"


def test_the_read_pages_repair_is_one_of_the_repairs_only_when_asked() -> None:
    data = session(pending=True).to_bytes()  # a Read answered, another tool's pages, a Read pending
    plain = plan_session_repair(data, OPTIONS)
    assert RepairAction.DROP_READ_PAGES not in {r.action for r in plain.receipts}
    asked = replace(OPTIONS, read_pages=True)
    plan = plan_session_repair(data, asked)
    assert plan.repaired is not None
    pages = [r for r in plan.receipts if r.action is RepairAction.DROP_READ_PAGES]
    assert [r.code for r in pages] == [READ_PAGES_CODE]
    assert pages[0].bytes_before - pages[0].bytes_after == len(PAGES)
    # another tool's `pages` and a call still pending (no result yet) are left as they are
    assert b'"pages":"not a Read call"' in plan.repaired and b'"pages":"9"' in plan.repaired
    assert repair_failures(data, plan.repaired, plan, asked) == ()
    assert not plan_session_repair(plan.repaired, asked).changed
    # the very bytes `repair-read-pages` writes over the same chain
    alone = plan_repair(data, RepairScope.ACTIVE_CHAIN, AUTO, LIMITS)
    assert plan.repaired == apply_patches(data, alone.patches)
