"""Each kind of reminder Claude Code derives at resume time, held against the real Claude Code 2.1.332.

One builder scenario per kind (`pipeline.testing.reminder_scenarios`) puts the state the reminder
derives from in the part a compaction summarizes: a background agent never reported back (and two,
which Claude Code names in one notice, and one sent a follow-up in the kept part), two background
servers left running, deferred tools (a server dropping and coming back, a tool ToolSearch
loaded), the agent, skill and MCP listings, a tool loaded where no deferred tools were announced
on record, the short notices with no opener of their own (MCP servers told of and gone). With the gate on, each compresses and the verdict holds, and resuming the original
and the candidate sends the same resume-time reminders, paragraph for paragraph (the task-tool
nudge aside, which counts turns sent, not state; and the loaded tool Claude Code lists again after
any compaction, noted). Without the launch result it carries, a candidate loses the background
agent's notice and the gate names it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from pipeline.proof.claude_code.client import ResumeResult, resume
from pipeline.proof.claude_code.reminders import CADENCES, ReminderKind, closing_paragraphs
from pipeline.testing.invoke import candidate_of, compaction, reports
from pipeline.testing.reminder_scenarios import REMINDER_SCENARIOS, build_reminder_scenario
from pipeline.testing.settings import default_settings

pytestmark = pytest.mark.claude_code

TIMEOUT = default_settings().verify.resume_timeout_seconds
# Resumes run concurrently; each is one Claude Code process (~1 core for 10-20 s) plus a fake API.
WORKERS = 3
NO_MIN_GAIN = "[compress]\nmin_gain = 0.0\n"
# The kind of reminder each scenario's summarized part derives, which both resumes must send.
DERIVED = {
    "background-agent": ReminderKind.BACKGROUND_TASKS,
    "background-agents": ReminderKind.BACKGROUND_TASKS,
    "background-shells": ReminderKind.BACKGROUND_TASKS,
    "redispatched-agent": ReminderKind.BACKGROUND_TASKS,
    "deferred-tools": ReminderKind.DEFERRED_TOOLS,
    "listings": ReminderKind.SKILL_LISTING,
    "loaded-tool": ReminderKind.DEFERRED_TOOLS,
    "other-reminders": ReminderKind.OTHER,
}
# Claude Code counts as loaded only the ToolSearch results after the last boundary, so after a
# compaction (its own or ours) it lists a tool loaded before it among the deferred tools again,
# while it still sends the tool's definition: the only difference, which the gate notes.
LISTED_AGAIN = {"loaded-tool": "WebFetch"}
LOST_AGENT = "Research the build system"  # the background-agent scenario's unreported agent


@dataclass(frozen=True, slots=True)
class Gated:
    source: Path
    candidate: Path
    report: dict[str, Any]


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory, claude_code: Path) -> dict[str, Gated]:
    base = tmp_path_factory.mktemp("reminders")
    (base / "in").mkdir()
    for name in REMINDER_SCENARIOS:
        (base / "in" / f"{name}.jsonl").write_bytes(build_reminder_scenario(name))
    config = base / "config.toml"
    config.write_text(NO_MIN_GAIN)
    done = compaction(
        "compress", str(base / "in"), "--out", str(base / "out"), "--verify-resume", "--claude", str(claude_code),
        "--min-tokens", "0", "--min-recent-records", "8", "--target-ratio", "0.1", "--config", str(config),
        "--jobs", "2", "--quiet",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    found = {Path(report["session"]["label"]).stem: report for report in reports(base / "out")}
    return {
        name: Gated(source, candidate_of(base / "out", source), found[name])
        for name in REMINDER_SCENARIOS
        if (source := base / "in" / f"{name}.jsonl")
    }


def resume_time(result: ResumeResult) -> frozenset[tuple[ReminderKind, str]]:
    """What Claude Code derived at resume time, cadences aside."""
    assert result.resumed, result.stderr[-2000:]
    context = result.context
    return frozenset(
        p for p in closing_paragraphs(context.reminders, len(context.blocks)) if p[0] not in CADENCES
    )


@pytest.fixture(scope="module")
def resumes(
    gated: dict[str, Gated], claude_code: Path
) -> Iterator[dict[str, tuple[Future[ResumeResult], Future[ResumeResult]]]]:
    """Each scenario's original and candidate resumed once, all concurrently (a failure stays its
    own test's: each test takes the results of its own scenario)."""
    with ThreadPoolExecutor(WORKERS) as pool:

        def started(path: Path) -> Future[ResumeResult]:
            return pool.submit(resume, path, executable=claude_code, timeout=TIMEOUT)

        yield {name: (started(s.source), started(s.candidate)) for name, s in sorted(gated.items())}


@pytest.mark.parametrize("name", sorted(REMINDER_SCENARIOS))
def test_each_reminder_kind_passes_the_gate_and_both_resumes_send_the_same_reminders(
    name: str,
    gated: dict[str, Gated],
    resumes: dict[str, tuple[Future[ResumeResult], Future[ResumeResult]]],
) -> None:
    session = gated[name]
    report = session.report
    assert report["status"] == "compressed", report.get("reasons")
    assert report["resume_check"]["verdict"] == "match", report["resume_check"]["differences"]
    original = resume_time(resumes[name][0].result())
    compacted = resume_time(resumes[name][1].result())
    assert any(kind is DERIVED[name] for kind, _ in original), sorted(k for k, _ in original)
    if name in LISTED_AGAIN:
        [before] = [text for kind, text in original - compacted if kind is ReminderKind.DEFERRED_TOOLS]
        [after] = [text for kind, text in compacted - original if kind is ReminderKind.DEFERRED_TOOLS]
        assert set(after.splitlines()) - set(before.splitlines()) == {LISTED_AGAIN[name]}
        assert set(before.splitlines()) <= set(after.splitlines())
        assert any(f"also lists {LISTED_AGAIN[name]}, loaded" in n for n in report["resume_check"]["notes"])
        assert report["projected"]["loaded_tools"] == [LISTED_AGAIN[name]]
        original -= {(ReminderKind.DEFERRED_TOOLS, before)}
        compacted -= {(ReminderKind.DEFERRED_TOOLS, after)}
    assert original == compacted, original ^ compacted


def launch_carriers(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [row for row in rows if row.get("type") == "user" and row["message"]["content"] == []]


def test_a_record_after_the_summary_carries_the_unreported_agents_launch_and_is_declared(
    gated: dict[str, Gated],
) -> None:
    session = gated["background-agent"]
    [line] = session.report["projected"]["background_agents"]
    source = orjson.loads(session.source.read_bytes().splitlines()[line - 1])["toolUseResult"]
    assert source["description"] == LOST_AGENT
    rows = [orjson.loads(row) for row in session.candidate.read_bytes().splitlines()]
    [carrier] = launch_carriers(rows)
    summary = next(row for row in rows if row.get("isCompactSummary"))
    assert carrier["parentUuid"] == summary["uuid"]
    assert (
        carrier["toolUseResult"]["agentId"] == source["agentId"] and "prompt" not in carrier["toolUseResult"]
    )
    metadata = next(row for row in rows if row.get("subtype") == "compact_boundary")["compactMetadata"]
    stamps = metadata["sessionCompaction"]["carriedBackgroundAgents"]
    assert stamps == [{"agentId": source["agentId"], "line": line, "uuid": carrier["uuid"]}]
    assert metadata["preservedSegment"]["headUuid"] == carrier["uuid"]


def test_a_candidate_that_loses_an_agents_launch_is_refused_naming_the_notice(
    gated: dict[str, Gated], claude_code: Path, tmp_path: Path
) -> None:
    session = gated["background-agents"]
    rows = [orjson.loads(row) for row in session.candidate.read_bytes().splitlines()]
    first, _ = launch_carriers(rows)
    del first["toolUseResult"]
    broken = tmp_path / session.candidate.name
    broken.write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in rows))
    done: subprocess.CompletedProcess[str] = compaction(
        "verify-resume", str(session.source), str(broken), "--claude", str(claude_code)
    )
    assert done.returncode == 1, done.stdout + done.stderr[-2000:]
    assert "the original's background-tasks reminder" in done.stdout, done.stdout
    assert "Survey the test coverage" not in done.stdout + done.stderr  # named by kind and length only


def test_claude_codes_own_compact_runs_on_a_candidate_carrying_launch_results(
    gated: dict[str, Gated], claude_code: Path, tmp_path: Path
) -> None:
    session = gated["background-agents"]
    after = tmp_path / "after.jsonl"
    result = resume(session.candidate, executable=claude_code, probe="/compact", timeout=TIMEOUT, keep=after)
    assert result.returncode == 0, result.stderr[-2000:]
    before, written = session.candidate.read_bytes(), after.read_bytes()
    assert written.startswith(before)
    appended = [orjson.loads(line) for line in written[len(before) :].splitlines()]
    boundaries = [r for r in appended if r.get("subtype") == "compact_boundary"]
    summaries = [r for r in appended if r.get("isCompactSummary")]
    assert len(boundaries) == len(summaries) == 1
    assert summaries[0]["parentUuid"] == boundaries[0]["uuid"]
