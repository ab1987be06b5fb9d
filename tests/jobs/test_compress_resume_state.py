"""compress carries the resume state of what it summarizes: background shells, loaded tools.

Through the command line, no Claude Code (`--no-verify-resume`): what the candidate holds and
declares. That Claude Code derives the same notices and tool definitions from it is in
test_resume_gate_state.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from pipeline.testing.builder import TranscriptBuilder
from pipeline.testing.invoke import candidate_of, compaction, reports
from tests.support.stateful import background_shell, stop_task, task_notification

NO_MIN_GAIN = "[compress]\nmin_gain = 0.0\n"


def session(path: Path) -> Path:
    """Shells: one left running early (b1), one reported (b2), one stopped (b3), one started in
    the last turn (b4, kept raw); and a ToolSearch result that loaded WebFetch, early."""
    b = TranscriptBuilder(seed=11, version="2.1.39")
    b.user("Start the servers and load the web fetch tool")
    background_shell(b, "b1", "npm run dev", "Start the dev server")
    background_shell(b, "b2", "npm test", "Run the tests")
    background_shell(b, "b3", "npm run watch", "Watch the sources")
    stop_task(b, "b3")
    b.tool_call(
        "ToolSearch", {"query": "select:WebFetch"}, [{"type": "tool_reference", "tool_name": "WebFetch"}]
    )
    b.assistant(b.text("Started; WebFetch is loaded."))
    task_notification(b, "b2", "Run the tests")
    b.assistant(b.text("The tests passed."))
    for turn in range(10):
        b.user(f"Fix module {turn} (round {turn})")
        for step in range(3):
            b.tool_call("Bash", {"command": f"pytest tests/test_{turn}_{step}.py"}, "." * 800 + "\n8 passed")
        b.assistant(b.text(f"Module {turn} is fixed."))
    b.user("Start the docs server too")
    background_shell(b, "b4", "mkdocs serve", "Serve the docs")
    b.assistant(b.text("The docs server runs."))
    b.last_prompt()
    b.write(path)
    return path


def records(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def test_a_shell_the_summarized_part_left_running_is_carried_as_claude_codes_task_status(
    tmp_path: Path,
) -> None:
    (tmp_path / "in").mkdir()
    source = session(tmp_path / "in" / "session.jsonl")
    config = tmp_path / "config.toml"
    config.write_text(NO_MIN_GAIN)
    done = compaction(
        "compress", str(source.parent), "--out", str(tmp_path / "out"), "--no-verify-resume",
        "--min-tokens", "0", "--min-recent-records", "8", "--target-ratio", "0.1", "--config", str(config),
        "--jobs", "1", "--quiet",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    [report] = reports(tmp_path / "out")
    assert report["status"] == "compressed", report.get("reasons")
    source_rows = records(source)
    [launch] = report["projected"]["background_shells"]
    assert source_rows[launch - 1]["toolUseResult"]["backgroundTaskId"] == "b1"
    out = records(candidate_of(tmp_path / "out", source))
    boundary = next(r for r in out if r.get("subtype") == "compact_boundary")
    statuses = [r for r in out if r.get("type") == "attachment" and r["attachment"]["type"] == "task_status"]
    assert [r["attachment"]["taskId"] for r in statuses] == ["b1"]  # b2 reported, b3 stopped, b4 kept raw
    shell = statuses[0]["attachment"]["shell"]
    assert shell == {"command": "npm run dev", "kind": "bash", "toolUseId": shell["toolUseId"]}
    assert shell["toolUseId"] == source_rows[launch - 1]["message"]["content"][0]["tool_use_id"]
    [stamp] = boundary["compactMetadata"]["sessionCompaction"]["carriedBackgroundShells"]
    assert stamp == {
        "taskId": "b1",
        "toolUseId": shell["toolUseId"],
        "line": launch,
        "uuid": statuses[0]["uuid"],
    }
    assert boundary["compactMetadata"]["preCompactDiscoveredTools"] == ["WebFetch"]
    by_uuid = {r.get("uuid"): r for r in out}
    chain = [statuses[0]]  # the record sits on the chain, between the summary and the kept tail
    while chain[-1].get("parentUuid"):
        chain.append(by_uuid[chain[-1]["parentUuid"]])
    assert chain[-1]["uuid"] == boundary["uuid"]
    assert any(r.get("parentUuid") == statuses[0]["uuid"] for r in out)
    assert any(r.get("toolUseResult", {}).get("backgroundTaskId") == "b4" for r in out)
