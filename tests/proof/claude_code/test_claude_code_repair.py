"""`compaction repair` judged by the real Claude Code: damaged and repaired files resumed side by side.

Each pairing defect planted in the recent tail of corpus sessions (and a torn last line), and in a
builder session at the start, middle and end of its chain, is repaired and proven: Claude Code
resumes the repaired file, the capture server (answering as the API does) accepts its context,
and that context holds everything the damaged one sent but the declared drops. A parent link
broken in the middle of the chain makes Claude Code resume from the break only; `--relink` gives
it the whole history again. The command proves before it publishes in place.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from pipeline.agents.claude_code.claude_judge import CLAUDE_CODE_JUDGE
from pipeline.core.session_repair import (
    RepairAction,
    SessionRepairOptions,
    plan_session_repair,
    repair_failures,
)
from pipeline.core.topology.select import AUTO
from pipeline.proof.damage_repair import ProofSetup, repair_session
from pipeline.testing.fuzz import PAIRING, Mutation, plant, result_lines
from pipeline.testing.invoke import compaction, reports
from pipeline.testing.sessions import build_session
from pipeline.testing.settings import LIMITS
from pipeline.testing.tail_damage import break_link, tail_plants, torn_tail
from tests.cli.conftest import make_idle
from tests.publish.live.test_read_pages_repair import session

pytestmark = pytest.mark.claude_code

OPTIONS = SessionRepairOptions(AUTO, LIMITS, relink=False, max_rounds=100, read_pages=False)
TIMEOUT_SECONDS = 180.0
SESSIONS: tuple[str, ...] = (
    "jnarowski__agentcmd__packages_agent-cli-sdk_tests_fixtures_claude_full_full-session-four.jsonl",
    "marot__spotter__test_fixtures_transcripts_fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl",
    "iansherr__claude-code-log__test_test_data_real_projects_-experiments-worktrees_"
    "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
)
RELINKED = (
    SESSIONS[0],
    SESSIONS[2],
    "codemie-ai__codemie-code__tests_integration_session_fixtures_session-196820da.jsonl",
)


def _proven(
    data: bytes, name: str, setup: ProofSetup, scratch: Path, options: SessionRepairOptions = OPTIONS
) -> dict[str, object]:
    job = repair_session(data, name, options, setup, scratch)
    plan = job.plan
    assert plan.repaired is not None, (name, plan.unrepaired)
    assert repair_failures(data, plan.repaired, plan, options) == (), name
    assert job.proof is not None
    assert job.proof.verdict.value == "proven", (name, job.proof)
    return {
        "damaged": job.proof.damaged_blocks,
        "repaired": job.proof.repaired_blocks,
        "edits": len(plan.receipts),
    }


@pytest.fixture(scope="module")
def setup(claude_code: Path) -> ProofSetup:
    return ProofSetup(claude_code.resolve(), TIMEOUT_SECONDS, CLAUDE_CODE_JUDGE)


@pytest.mark.parametrize("name", SESSIONS)
def test_damage_in_the_recent_tail_of_corpus_sessions_is_repaired_and_proven(
    name: str, corpus_files: Path, setup: ProofSetup, tmp_path: Path
) -> None:
    data = (corpus_files / name).read_bytes()
    planted = list(tail_plants(data))
    assert {kind for kind, _, _ in planted} == set(PAIRING), name
    for kind, line, damaged in planted:
        figures = _proven(damaged, name, setup, tmp_path)
        assert 1 <= int(str(figures["edits"])) <= 2, (kind, line, figures)
    _proven(torn_tail(data), name, setup, tmp_path)


@pytest.mark.parametrize("where", ["start", "middle", "end"])
def test_damage_in_builder_sessions_is_repaired_and_proven(
    where: str, setup: ProofSetup, tmp_path: Path
) -> None:
    path = tmp_path / "built" / "session.jsonl"
    path.parent.mkdir()
    build_session(path, turns=6, seed=7)
    sites = result_lines(path.read_bytes())
    site = {"start": sites[0], "middle": sites[len(sites) // 2], "end": sites[-2]}[where]
    for kind in PAIRING:
        _proven(plant(path.read_bytes(), kind, site), path.name, setup, tmp_path)


@pytest.mark.parametrize("name", RELINKED)
def test_relink_gives_claude_code_the_history_before_a_broken_link(
    name: str, corpus_files: Path, setup: ProofSetup, tmp_path: Path
) -> None:
    broken = break_link((corpus_files / name).read_bytes())
    assert broken is not None, name
    figures = _proven(broken[0], name, setup, tmp_path, replace(OPTIONS, relink=True))
    assert int(str(figures["repaired"])) > int(str(figures["damaged"])), figures


def test_the_read_pages_repair_is_proven_with_the_pairing_repairs(setup: ProofSetup, tmp_path: Path) -> None:
    data = session(pending=True).to_bytes()
    damaged = plant(data, Mutation.DROPPED_RESULT, result_lines(data)[0])  # the Read call's result
    options = replace(OPTIONS, read_pages=True)
    _proven(damaged, "session.jsonl", setup, tmp_path, options)
    actions = {r.action for r in plan_session_repair(damaged, options).receipts}
    assert {RepairAction.DROP_READ_PAGES, RepairAction.INSERT_INTERRUPTED_RESULT} <= actions


def test_the_command_proves_each_repair_before_publishing_it_in_place(
    corpus_files: Path, claude_code: Path, tmp_path: Path
) -> None:
    project = tmp_path / "projects" / "-repo"
    project.mkdir(parents=True)
    data = (corpus_files / SESSIONS[0]).read_bytes()
    _, _, damaged = next(iter(tail_plants(data)))
    (project / "s.jsonl").write_bytes(damaged)
    make_idle(tmp_path / "projects")
    done = compaction(
        "repair", str(tmp_path / "projects"), "--in-place", "--claude", str(claude_code),
        "--state-dir", str(tmp_path / "state"), "--report-dir", str(tmp_path / "r"), "--quiet",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (report,) = reports(tmp_path / "r")
    assert report["operation_state"] == "committed" and report["proof"]["verdict"] == "proven", json.dumps(
        report
    )
    assert (project / "s.jsonl").read_bytes() != damaged
