"""The resume gate where Claude Code derives reminders from state, with the real Claude Code 2.1.332.

(a) A session whose summarized part holds every kind of state record (its own, and those Claude
Code appended when it resumed the session once), a background shell left running, and a tool
ToolSearch loaded: compress passes the gate, and breaking the candidate's carried state, its
kept part or its summary is refused with the difference named. (b) Sessions Claude Code
compacts on resume (near its 200k window, over it) and one billed past 200k that resumes on the
1M window pass the gate. Claude Code's own `/compact` still runs on a candidate carrying
projected records and appends its own compact pair.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from pipeline.proof.claude_code.client import resume
from pipeline.testing.invoke import candidate_of, compaction, reports
from pipeline.testing.settings import default_settings
from tests.support.resolved import resolve
from tests.support.stateful import CANARY, LOADED_TOOL, ORPHAN_TASK, billed_session, stateful_session

pytestmark = pytest.mark.claude_code

NO_MIN_GAIN = "[compress]\nmin_gain = 0.0\n"
TIMEOUT = default_settings().verify.resume_timeout_seconds
# Every state kind the summarized part holds: the builder's, and those Claude Code wrote itself.
KINDS = {
    "agent_listing_delta",
    "date",
    "deferred_tools_delta",
    "dynamic_skill",
    "environment",
    "language",
    "mcp_dropped_tools_delta",
    "mcp_instructions_delta",
    "model",
    "output_style_instructions",
    "remote_session_change",
    "session_context",
    "skill_listing",
}
Rows = list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Gated:
    source: Path
    candidate: Path
    report: dict[str, Any]


def gate(sources: Path, out: Path, claude_code: Path, recent: str = "8") -> subprocess.CompletedProcess[str]:
    config = out.parent / f"{out.name}.toml"
    config.write_text(NO_MIN_GAIN)
    return compaction(
        "compress", str(sources), "--out", str(out), "--verify-resume", "--claude", str(claude_code),
        "--min-tokens", "0", "--min-recent-records", recent, "--target-ratio", "0.1", "--config", str(config),
        "--jobs", "2", "--quiet",
    )  # fmt: skip


@pytest.fixture(scope="module")
def stateful(tmp_path_factory: pytest.TempPathFactory, claude_code: Path) -> Gated:
    base = tmp_path_factory.mktemp("stateful")
    (base / "in").mkdir()
    source = stateful_session(base / "in" / "session.jsonl", claude_code)
    done = gate(base / "in", base / "out", claude_code)
    assert done.returncode == 0, done.stderr[-2000:]
    [report] = reports(base / "out")
    return Gated(source, candidate_of(base / "out", source), report)


def rows(path: Path) -> Rows:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def write_rows(path: Path, records: Rows) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


def test_every_kind_of_resume_state_in_the_summarized_part_passes_the_gate(stateful: Gated) -> None:
    report = stateful.report
    assert report["status"] == "compressed", report.get("reasons")
    check = report["resume_check"]
    assert check["verdict"] == "match", check["differences"]
    projected = report["projected"]
    assert set(projected["kinds"]) == KINDS, projected["kinds"]
    [launch] = projected["background_shells"]
    assert rows(stateful.source)[launch - 1]["toolUseResult"]["backgroundTaskId"] == ORPHAN_TASK
    assert any("announces a background shell the candidate declares it carries" in n for n in check["notes"])
    candidate = rows(stateful.candidate)
    boundary = next(r for r in candidate if r.get("subtype") == "compact_boundary")
    assert boundary["compactMetadata"]["preCompactDiscoveredTools"] == [LOADED_TOOL]
    assert CANARY.encode() not in stateful.candidate.read_bytes()


def drop(records: Rows, doomed: Callable[[dict[str, Any]], bool]) -> Rows:
    """The records but those `doomed` picks, each one's children re-attached to its parent."""
    parents = {r["uuid"]: r.get("parentUuid") for r in records if doomed(r) and "uuid" in r}
    kept = [r for r in records if not doomed(r)]
    for record in kept:
        while record.get("parentUuid") in parents:
            record["parentUuid"] = parents[record["parentUuid"]]
    return kept


def attachment_of(kind: str) -> Callable[[dict[str, Any]], bool]:
    return lambda r: r.get("type") == "attachment" and r["attachment"].get("type") == kind


def metadata(records: Rows) -> dict[str, Any]:
    compact: dict[str, Any] = next(r for r in records if r.get("subtype") == "compact_boundary")[
        "compactMetadata"
    ]
    return compact


def lose_the_shell(records: Rows) -> Rows:
    return drop(records, attachment_of("task_status"))


def undeclare_the_shell(records: Rows) -> Rows:
    del metadata(records)["sessionCompaction"]["carriedBackgroundShells"]
    return records


def lose_the_tool_state(records: Rows) -> Rows:
    return drop(records, attachment_of("deferred_tools_delta"))


def forget_the_loaded_tool(records: Rows) -> Rows:
    del metadata(records)["preCompactDiscoveredTools"]
    return records


def change_a_kept_text(records: Rows) -> Rows:
    last = [r for r in records if r.get("type") == "user" and isinstance(r["message"]["content"], list)][-1]
    last["message"]["content"][0]["content"] += " (edited)"
    return records


def drop_a_kept_block(records: Rows) -> Rows:
    replies = [
        r for r in records if r.get("type") == "assistant" and r["message"]["content"][0]["type"] == "text"
    ]
    return drop(records, lambda r: r is replies[-2])


def leak_excluded_text(records: Rows) -> Rows:
    summary = next(r for r in records if r.get("isCompactSummary"))
    summary["message"]["content"] += f"\n- {CANARY}\n"
    return records


@pytest.mark.parametrize(
    ("breakage", "expected"),
    [
        (lose_the_shell, "the original's background-tasks reminder"),
        (undeclare_the_shell, "compacted background-tasks reminder"),
        (lose_the_tool_state, "deferred-tools reminder"),
        (
            forget_the_loaded_tool,
            f"the original sends tool {LOADED_TOOL}'s definition; the compacted resume does not",
        ),
        (change_a_kept_text, "same kind but the text differs"),
        (drop_a_kept_block, "where the original's block"),
        (leak_excluded_text, "(excluded_branch) is sent"),
    ],
    ids=[
        "lost-shell",
        "undeclared-shell",
        "lost-state",
        "lost-tool",
        "changed-text",
        "dropped-block",
        "leak",
    ],
)
def test_a_broken_candidate_is_refused_and_the_difference_named(
    breakage: Callable[[Rows], Rows], expected: str, stateful: Gated, claude_code: Path, tmp_path: Path
) -> None:
    broken = write_rows(tmp_path / stateful.candidate.name, breakage(rows(stateful.candidate)))
    done = compaction("verify-resume", str(stateful.source), str(broken), "--claude", str(claude_code))
    assert done.returncode == 1, done.stdout + done.stderr[-2000:]
    assert expected in done.stdout, done.stdout
    assert CANARY not in done.stdout + done.stderr


def test_claude_codes_own_compact_runs_on_a_candidate_carrying_projected_records(
    stateful: Gated, claude_code: Path, tmp_path: Path
) -> None:
    after = tmp_path / "after.jsonl"
    result = resume(stateful.candidate, executable=claude_code, probe="/compact", timeout=TIMEOUT, keep=after)
    assert result.returncode == 0, result.stderr[-2000:]
    before, written = stateful.candidate.read_bytes(), after.read_bytes()
    assert written.startswith(before)
    appended = [orjson.loads(line) for line in written[len(before) :].splitlines()]
    boundaries = [r for r in appended if r.get("subtype") == "compact_boundary"]
    summaries = [r for r in appended if r.get("isCompactSummary")]
    assert len(boundaries) == len(summaries) == 1
    assert summaries[0]["parentUuid"] == boundaries[0]["uuid"]
    session = resolve(written)
    assert not session.topology.refused, session.topology.refusal
    assert (
        session.record(session.chain[0]).uuid == boundaries[0]["uuid"]
    )  # Claude Code's pair is the root now


# (b) Claude Code compacting on resume ---------------------------------------------------------
WINDOWS = {  # name -> (tokens the last call was billed for, bytes of a trailing build log)
    "near-the-200k-window": (175_000, 0),
    "over-the-200k-window": (100_000, 900_000),
    "billed-past-200k-on-the-1m-window": (300_000, 0),
}


@pytest.fixture(scope="module")
def windows(tmp_path_factory: pytest.TempPathFactory, claude_code: Path) -> dict[str, dict[str, Any]]:
    base = tmp_path_factory.mktemp("windows")
    (base / "in").mkdir()
    for name, (billed, log) in WINDOWS.items():
        billed_session(base / "in" / f"{name}.jsonl", billed, log)
    done = gate(base / "in", base / "out", claude_code, recent="4")
    assert done.returncode == 0, done.stderr[-2000:]
    return {r["session"]["label"].removesuffix(".jsonl"): r for r in reports(base / "out")}


@pytest.mark.parametrize(
    ("name", "compacted"),
    [
        ("near-the-200k-window", ["original"]),
        ("over-the-200k-window", ["original"]),
        ("billed-past-200k-on-the-1m-window", None),
    ],
)
def test_a_session_claude_code_compacts_on_resume_is_judged_on_the_context_it_rebuilt(
    name: str, compacted: list[str] | None, windows: dict[str, dict[str, Any]]
) -> None:
    report = windows[name]
    assert report["status"] == "compressed", report.get("reasons")
    check = report["resume_check"]
    assert check["verdict"] == "match", check["differences"]
    assert check.get("compacted_on_resume") == compacted
    if compacted:  # the original's context is its compaction request's: the whole session
        assert check["sent"]["original"]["messages"] > check["sent"]["compacted"]["messages"]
