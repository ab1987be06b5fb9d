"""Damaged and oddly shaped corpus sessions, compacted through the real Claude Code's resume gate.

Copies of corpus sessions over 40k tokens, in a temporary directory, get one planted defect each:
- pairing damage the API refuses (`PAIRING`: a dropped result, a repeated tool id, a result after
  a text block, a result naming no call) in the first fifth of the active chain: compressed, the
  defects listed under `repairs`, and proven by Claude Code (2.1.332 drops or moves three of the
  kinds itself; the fourth it sends, and the capture server answers the original with the API's
  400, which the report names while the candidate gets a 200);
- the same damage at the last tool result, which the kept tail holds: refused, line and code;
- a parent written after its child, and a session that returns to an earlier sessionId, in the
  first fifth: compressed and proven with the gate, refused without it; a clock set back is no
  rule at all and compresses either way.
A candidate that still carries damage (planted after the checks, where no compaction of ours
puts it) is refused because the capture server answers it with a 400.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, replace
from hashlib import sha256
from pathlib import Path
from typing import Any

import pytest

from pipeline.core.plan import protected_round_of
from pipeline.core.validate.checks import validate
from pipeline.jobs.compress import compress_session
from pipeline.testing import as_json
from pipeline.testing.fuzz import PAIRING, Mutation, plant, result_lines
from pipeline.testing.invoke import compaction, reports
from pipeline.testing.settings import compress_options
from pipeline.vocabulary import Severity
from tests.support.planting import clock_back, parent_after_child, session_run
from tests.support.resolved import resolve

pytestmark = pytest.mark.claude_code

# Corpus sessions over 40k tokens that compress (active-chain tokens, seed estimate).
SESSIONS = (
    "jnarowski__agentcmd__packages_agent-cli-sdk_tests_fixtures_claude_full_full-session-four.jsonl",  # 45k
    "iansherr__claude-code-log__test_test_data_real_projects_-experiments-worktrees_"
    "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",  # 61k
    "marot__spotter__test_fixtures_transcripts_fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl",  # 101k
    "iansherr__claude-code-log__test_test_data_real_projects_-Users-dain-workspace-JSSoundRecorder_"
    "7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl",  # 117k
    "codemie-ai__codemie-code__tests_integration_session_fixtures_session-196820da.jsonl",  # 185k
    "iansherr__claude-code-log__test_test_data_real_projects_-Users-dain-workspace-claude-code-log-sample_"
    "37f83ec9-f2ea-42a9-925e-0d5c105cb6e8.jsonl",  # 271k
)
CODES = {
    Mutation.DROPPED_RESULT: {"tool-use-not-followed-by-user"},
    Mutation.DUPLICATED_TOOL_ID: {"tool-use-id-duplicate", "tool-result-id-duplicate"},
    Mutation.RESULT_NOT_FIRST: {"tool-result-not-first"},
    Mutation.ORPHAN_RESULT: {"tool-result-mismatch"},
}
OTHER_SESSION = str(uuid.UUID(int=0x5E55_1011))
COMPRESS_TIMEOUT_SECONDS = 900


@dataclass(frozen=True, slots=True)
class Planted:
    """Where each copy's defect went, by file name."""

    root: Path
    sites: dict[str, tuple[str, int]]  # file -> (what was planted, 1-based line)


def _head_and_tail(data: bytes) -> tuple[list[int], list[int]]:
    """The chain's lines in its first fifth, and its tool results in the protected round (last first)."""
    found = resolve(data)
    chain = found.chain
    protected = set(chain[protected_round_of(found.index, chain).start :])
    results = [line for line in result_lines(data) if line in protected]
    return list(chain[: len(chain) // 5]), results[::-1]


def _defects(data: bytes) -> set[str]:
    """The codes of the validator's errors on the active chain of `data`."""
    found = resolve(data)
    findings = validate(found.index, found.graph, found.chain, data).findings
    return {f.code.value for f in findings if f.severity is Severity.ERROR}


def _plant_where_seen(data: bytes, kind: Mutation, sites: list[int]) -> tuple[bytes, int]:
    """`kind` planted at the first of `sites` where the validator sees it (a dropped result of a
    parallel batch is only a partial answer, a reused id of a rewound call no duplicate)."""
    for site in sites:
        damaged = plant(data, kind, site)
        if CODES[kind] <= _defects(damaged):
            return damaged, site
    raise AssertionError(f"{kind} is seen at none of {sites}")


def _plant_session(name: str, data: bytes, root: Path, sites: dict[str, tuple[str, int]]) -> None:
    head, protected = _head_and_tail(data)
    early = [line for line in result_lines(data) if line in set(head)]
    assert early, name
    stem = name[-24:-6]
    middle = early[len(early) // 2 :] + early[: len(early) // 2][::-1]
    site = middle[0]
    for kind in PAIRING:
        damaged, where = _plant_where_seen(data, kind, middle)
        sites[f"head-{kind}-{stem}.jsonl"] = (kind.value, where)
        (root / "head" / f"head-{kind}-{stem}.jsonl").write_bytes(damaged)
        damaged, where = _plant_where_seen(data, kind, protected)
        sites[f"tail-{kind}-{stem}.jsonl"] = (kind.value, where)
        (root / "tail" / f"tail-{kind}-{stem}.jsonl").write_bytes(damaged)
    # A chain line whose child follows it directly: moved after the child, the parent comes second.
    parent = next(line for line in head[1:] if line + 1 in set(head) and line != site)
    third = max(2, len(head) // 3)
    topology = {
        "chain-non-monotonic": parent_after_child(data, parent),
        "lineage-unsafe": session_run(data, head[third], head[2 * third], OTHER_SESSION),
        "clock-back": clock_back(data, head[third], head[2 * third], 6 * 3600),
    }
    for rule, planted in topology.items():
        assert planted != data, (name, rule)
        sites[f"{rule}-{stem}.jsonl"] = (rule, parent if rule == "chain-non-monotonic" else head[third])
        (root / "topology" / f"{rule}-{stem}.jsonl").write_bytes(planted)


@pytest.fixture(scope="module")
def planted(corpus_files: Path, tmp_path_factory: pytest.TempPathFactory) -> Planted:
    root = tmp_path_factory.mktemp("planted")
    for part in ("head", "tail", "topology"):
        (root / part).mkdir()
    sites: dict[str, tuple[str, int]] = {}
    for name in SESSIONS:
        _plant_session(name, (corpus_files / name).read_bytes(), root, sites)
    return Planted(root, sites)


def _run(planted: Planted, out: Path, claude: Path | None, *parts: str) -> dict[str, dict[str, Any]]:
    gate = ("--verify-resume", "--claude", str(claude)) if claude else ("--no-verify-resume",)
    roots = [str(planted.root / part) for part in parts]
    done = compaction(
        "compress", *roots, "--out", str(out), "--jobs", "2", "--quiet", *gate,
        timeout=COMPRESS_TIMEOUT_SECONDS,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-2000:]
    return {Path(r["session"]["label"]).name: r for r in reports(out)}


@pytest.fixture(scope="module")
def gated(planted: Planted, claude_code: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _run(planted, tmp_path_factory.mktemp("gated"), claude_code, "head", "tail", "topology")


def test_planted_damage_in_the_first_fifth_is_compressed_repaired_and_proven(
    planted: Planted, gated: dict[str, dict[str, Any]]
) -> None:
    heads = {name: r for name, r in gated.items() if name.startswith("head-")}
    assert len(heads) == len(PAIRING) * len(SESSIONS)
    rejected_originals: list[str] = []
    for name, report in heads.items():
        kind, site = planted.sites[name]
        assert report["status"] == "compressed", (name, report.get("reasons"))
        check = report["resume_check"]
        assert check["verdict"] == "match", (name, check["differences"])
        codes = {r["code"] for r in report["repairs"]}
        assert codes == CODES[Mutation(kind)], (name, report["repairs"])
        # The defect is found where it starts: the call left unanswered, the call given a used
        # id, the message holding the orphan, the block before the result.
        assert all(0 < r["line"] <= site for r in report["repairs"]), (name, site, report["repairs"])
        assert kind != Mutation.RESULT_NOT_FIRST or report["repairs"][0]["line"] == site
        rejected = check.get("api_rejected")
        if rejected is not None:
            rejected_originals.append(name)
            assert kind == Mutation.RESULT_NOT_FIRST and rejected["compacted"] == [], (name, rejected)
            assert rejected["original"][0]["rule"] == "tool-use-without-result", name
            assert any("the API rejects the original context" in note for note in check["notes"])
    # Claude Code drops an unanswered call, a repeated id and an orphan result before sending, and
    # moves a result to the front of a message it joins from several rows; a text block before
    # the result of a single call it sends as it is, and the API answers with a 400 (here, the
    # capture server): three of the six sessions.
    assert len(rejected_originals) >= 3, rejected_originals


def test_the_same_damage_in_the_kept_tail_is_refused_with_its_line_and_code(
    planted: Planted, gated: dict[str, dict[str, Any]]
) -> None:
    tails = {name: r for name, r in gated.items() if name.startswith("tail-")}
    assert len(tails) == len(PAIRING) * len(SESSIONS)
    for name, report in tails.items():
        kind, _ = planted.sites[name]
        assert report["status"] == "refused", name
        assert report["reasons"][0] == "source-active-chain-invalid", name
        assert set(report["reasons"][1:]) <= CODES[Mutation(kind)], (name, report["reasons"])
        listed = [f for f in report["findings"] if f["code"] in CODES[Mutation(kind)]]
        assert listed and all(f["line"] > 0 for f in listed), (name, report["findings"])
        assert "resume_check" not in report and "repairs" not in report


def test_with_repair_the_same_tail_damage_is_repaired_proven_and_compressed(
    planted: Planted, claude_code: Path, tmp_path: Path
) -> None:
    # The two smallest sessions' tail copies: each defect kind, repaired first and proven by Claude
    # Code beside the damaged file, then compressed and the candidate proven beside the repair.
    chosen = tmp_path / "tail"
    chosen.mkdir()
    for name in SESSIONS[:2]:
        for kind in PAIRING:
            copy = f"tail-{kind}-{name[-24:-6]}.jsonl"
            (chosen / copy).write_bytes((planted.root / "tail" / copy).read_bytes())
    done = compaction(
        "compress", str(chosen), "--out", str(tmp_path / "out"), "--jobs", "2", "--quiet",
        "--verify-resume", "--claude", str(claude_code), "--repair", timeout=COMPRESS_TIMEOUT_SECONDS,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    found = {Path(r["session"]["label"]).name: r for r in reports(tmp_path / "out")}
    assert len(found) == 2 * len(PAIRING)
    for name, report in found.items():
        kind, _ = planted.sites[name]
        assert report["status"] == "compressed", (name, report.get("reasons"))
        repair = report["source_repair"]
        assert repair["status"] == "repaired" and repair["proof"]["verdict"] == "proven", (name, repair)
        assert {e["code"] for e in repair["edits"]} & CODES[Mutation(kind)], (name, repair["edits"])
        assert report["resume_check"]["verdict"] == "match", (name, report["resume_check"])
        assert report["session"]["sha256"] == sha256((chosen / name).read_bytes()).hexdigest()


def test_topology_the_seed_refuses_is_compressed_and_proven_with_the_gate(
    gated: dict[str, dict[str, Any]],
) -> None:
    for rule in ("chain-non-monotonic", "lineage-unsafe", "clock-back"):
        found = {name: r for name, r in gated.items() if name.startswith(f"{rule}-")}
        assert len(found) == len(SESSIONS), rule
        for name, report in found.items():
            assert report["status"] == "compressed", (name, report.get("reasons"))
            assert report["resume_check"]["verdict"] == "match", (name, report["resume_check"]["differences"])
            assert report["leaf"].get("unproven") == (None if rule == "clock-back" else rule), name


def test_without_claude_code_the_same_topology_stays_refused(
    planted: Planted, tmp_path_factory: pytest.TempPathFactory
) -> None:
    found = _run(planted, tmp_path_factory.mktemp("ungated"), None, "topology")
    assert len(found) == 3 * len(SESSIONS)
    for name, report in found.items():
        assert "resume_check" not in report, name
        if name.startswith("clock-back-"):
            assert report["status"] == "compressed", (name, report.get("reasons"))
            continue
        rule = next(r for r in ("chain-non-monotonic", "lineage-unsafe") if name.startswith(r))
        assert report["status"] == "refused" and report["reasons"] == [f"topology-{rule}"], name


def test_a_candidate_that_still_carries_damage_is_refused_by_the_apis_400(
    corpus_files: Path, claude_code: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipeline.jobs.compress import job

    checked = job.compose_and_check

    def carrying_damage(*args: Any, **kwargs: Any) -> Any:
        made = checked(*args, **kwargs)
        data = made.composed.data
        damaged = plant(data, Mutation.RESULT_NOT_FIRST, result_lines(data)[-1])
        return replace(made, composed=replace(made.composed, data=damaged))

    monkeypatch.setattr(job, "compose_and_check", carrying_damage)
    source = corpus_files / SESSIONS[2]
    out = tmp_path / "out"
    outcome = compress_session(source, source.name, compress_options(out, gate=str(claude_code)))
    report = as_json(outcome)
    assert report["status"] == "refused", report.get("reasons")
    assert report["reasons"] == ["resume-api-rejected-tool-use-without-result"]
    check = report["resume_check"]
    assert check["verdict"] == "mismatch" and check["differences"][0].startswith(
        "the API rejects the compacted context (tool-use-without-result at messages."
    )
    assert check["api_rejected"]["original"] == []
    assert [r["rule"] for r in check["api_rejected"]["compacted"]] == ["tool-use-without-result"]
    assert not out.exists()
    assert json.dumps(report).count("Output follows.") == 0  # the planted text never reaches a report
