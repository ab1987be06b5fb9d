"""Background shells and agents Claude Code names unfinished on resume, read the way build 2.1.332
reads them.

Builder sessions only; the real Claude Code deriving the same notice from a candidate is in
tests/jobs/test_resume_gate_state.py and tests/jobs/test_resume_gate_reminders.py.
"""

from __future__ import annotations

import orjson

from pipeline.formats.claude_code.tasks import (
    COMMAND_CHARS,
    DESCRIPTION_CHARS,
    LAUNCH_FIELDS,
    BackgroundAgent,
    BackgroundShell,
    declared_shells,
    may_start_shells,
    task_status,
    unfinished_agents,
    unfinished_shells,
)
from pipeline.testing.builder import TranscriptBuilder
from pipeline.testing.reminder_scenarios import background_agent_result
from tests.support.resolved import resolve
from tests.support.stateful import background_shell, stop_task, task_notification


def shells(b: TranscriptBuilder) -> tuple[BackgroundShell, ...]:
    b.last_prompt()
    session = resolve(b.to_bytes())
    return unfinished_shells((line, session.index.raw_line(session.data, line)) for line in session.chain)


def started(*tasks: str) -> TranscriptBuilder:
    b = TranscriptBuilder(seed=3)
    b.user("Start the servers in the background")
    for task in tasks:
        background_shell(b, task, f"serve {task}", f"Serve {task}")
    b.assistant(b.text("They run in the background."))
    return b


def test_a_shell_nothing_reports_is_unfinished_with_its_ids_command_and_line() -> None:
    b = started("b1", "b2")
    found = shells(b)
    assert [(s.task_id, s.kind, s.description, s.command) for s in found] == [
        ("b1", "bash", "Serve b1", "serve b1"),
        ("b2", "bash", "Serve b2", "serve b2"),
    ]
    session = resolve(b.to_bytes())
    for shell in found:  # the line is the tool result naming the task, answering the call named
        line = orjson.loads(session.index.raw_line(session.data, shell.line))
        assert line["toolUseResult"]["backgroundTaskId"] == shell.task_id
        assert line["message"]["content"][0]["tool_use_id"] == shell.tool_use_id


def test_a_transcript_nothing_could_start_a_shell_in_is_told_apart_unscanned() -> None:
    assert may_start_shells(started("b1").to_bytes())
    quiet = TranscriptBuilder(seed=3)
    quiet.user("hello")
    quiet.tool_call("Bash", {"command": "ls"}, "a.txt")
    assert not may_start_shells(quiet.to_bytes())


def test_a_notice_a_queued_notice_or_a_stop_finishes_a_shell() -> None:
    b = started("b1", "b2", "b3", "b4")
    task_notification(b, "b1")
    b.attachment(
        "queued_command", prompt="<task-notification>\n<task-id>b2</task-id>\n<status>killed</status>"
    )
    stop_task(b, "b3")
    assert [s.task_id for s in shells(b)] == ["b4"]


def test_a_notice_needs_its_status_and_an_old_kill_result_stops_nothing() -> None:
    b = started("b1", "b2")
    b.user("<task-notification>\n<task-id>b1</task-id>\n</task-notification>")  # no <status>
    b.tool_call(
        "KillShell", {"shell_id": "b2"}, "Killed", tool_use_result={"shell_id": "b2", "message": "ok"}
    )
    assert [s.task_id for s in shells(b)] == ["b1", "b2"]  # as Claude Code reads them


def test_the_marker_of_an_earlier_resume_finishes_every_shell_known_then_but_the_live_ones() -> None:
    b = started("b1", "b2")
    b.user(
        "<task-notification>\n<task-id>b1</task-id>\n<task-id>__orphan_summary__:shell</task-id>\n"
        "<task-id>__orphan_summary_live__:b2</task-id>\n<status>stopped</status>\n</task-notification>"
    )
    background_shell(b, "b3", "serve b3", "Serve b3")  # started after the marker
    assert [s.task_id for s in shells(b)] == ["b2", "b3"]


def test_a_task_status_record_and_a_monitor_start_shells_and_an_error_result_does_not() -> None:
    b = TranscriptBuilder(seed=3)
    b.user("watch it")
    b.attachment(
        "task_status",
        taskId="b9",
        taskType="local_bash",
        description="Serve",
        status="running",
        deltaSummary=None,
        shell={"command": "serve", "kind": "bash", "toolUseId": "toolu_x"},
    )
    b.tool_call(
        "Monitor",
        {"command": "tail -f log"},
        "Watching",
        tool_use_result={"taskId": "m1", "timeoutMs": 60000},
    )
    b.tool_call(
        "Bash",
        {"command": "x"},
        "boom",
        is_error=True,
        tool_use_result={"backgroundTaskId": "b8", "stdout": ""},
    )
    found = shells(b)
    assert [(s.task_id, s.kind, s.tool_use_id != "") for s in found] == [
        ("b9", "bash", True),
        ("m1", "monitor", True),
    ]
    assert found[0].tool_use_id == "toolu_x" and found[0].command == "serve"


def test_a_task_status_record_is_the_one_claude_codes_compaction_writes_and_bounds_its_text() -> None:
    long = "x" * (COMMAND_CHARS + 40)
    shell = BackgroundShell("b1", "toolu_1", "bash", "Run\n  it" + "é" * DESCRIPTION_CHARS, long, 5)
    record = task_status(shell)
    assert list(record) == ["type", "taskId", "taskType", "description", "status", "deltaSummary", "shell"]
    assert record["shell"] == {
        "command": "x" * COMMAND_CHARS + "\u2026 [+40 chars]",
        "kind": "bash",
        "toolUseId": "toolu_1",
    }
    assert record["description"].startswith("Run it") and record["description"].endswith("\u2026 [+6 chars]")
    emoji = BackgroundShell("b2", "toolu_2", "bash", "", "y" * (COMMAND_CHARS - 1) + "\U0001f600", 5)
    assert (
        task_status(emoji)["shell"]["command"] == "y" * (COMMAND_CHARS - 1) + "\u2026 [+2 chars]"
    )  # pair kept whole
    assert task_status(emoji)["description"] == "b2"  # no description: the task id, never empty


def test_declared_shells_are_read_off_our_boundary() -> None:
    stamp = {"taskId": "b1", "toolUseId": "toolu_1", "line": 4, "uuid": "u"}
    boundary = {
        "type": "system",
        "subtype": "compact_boundary",
        "compactMetadata": {"sessionCompaction": {"carriedBackgroundShells": [stamp]}},
    }
    data = orjson.dumps({"type": "user"}) + b"\n" + orjson.dumps(boundary) + b"\n"
    assert declared_shells(data) == frozenset({"b1"})
    assert declared_shells(orjson.dumps({"type": "user"})) == frozenset()


def agents(b: TranscriptBuilder) -> tuple[BackgroundAgent, ...]:
    b.last_prompt()
    session = resolve(b.to_bytes())
    return unfinished_agents((line, session.index.raw_line(session.data, line)) for line in session.chain)


def launched(*ids: str) -> TranscriptBuilder:
    b = TranscriptBuilder(seed=5)
    b.user("Research these in the background")
    for agent in ids:
        b.tool_call(
            "Agent",
            {"description": f"Research {agent}", "prompt": "look", "run_in_background": True},
            f"Async agent launched successfully.\nagentId: {agent}",
            tool_use_result=background_agent_result(agent, f"Research {agent}", "look"),
        )
    b.assistant(b.text("They run in the background."))
    return b


def test_an_agent_nothing_reports_is_unfinished_with_the_launch_fields_claude_code_reads() -> None:
    b = launched("a1", "a2")
    found = agents(b)
    assert [agent.agent_id for agent in found] == ["a1", "a2"]
    session = resolve(b.to_bytes())
    for agent in found:
        source = orjson.loads(session.index.raw_line(session.data, agent.line))["toolUseResult"]
        assert agent.launch_result() == {name: source[name] for name in LAUNCH_FIELDS}
        assert "prompt" not in agent.launch_result()  # the scan never reads it: not carried


def test_a_notice_or_the_agent_marker_finishes_an_agent_and_a_re_dispatch_reopens_one() -> None:
    b = launched("a1", "a2", "a3", "a4")
    task_notification(b, "a1")
    b.user(
        "<task-notification>\n<task-id>__orphan_summary__:shell</task-id>\n<status>stopped</status>\n"
        "</task-notification>"
    )  # the shell marker says nothing of agents
    assert [agent.agent_id for agent in agents(b)] == ["a2", "a3", "a4"]
    task_notification(b, "a3")
    b.tool_call(
        "SendMessage",
        {"to": "a3", "message": "go on"},
        "Sent",
        tool_use_result={"success": True, "message": "Research a3", "resumedAgentId": "a3"},
    )
    found = {agent.agent_id: agent.redispatched_at for agent in agents(b)}
    assert list(found) == ["a2", "a3", "a4"] and found["a2"] is None and found["a3"] is not None
    b.user(
        "<task-notification>\n<task-id>__orphan_summary__:agent</task-id>\n"
        "<task-id>__orphan_summary_live__:a4</task-id>\n<status>stopped</status>\n</task-notification>"
    )
    assert [agent.agent_id for agent in agents(b)] == ["a4"]  # every agent known then, but the live one


def test_a_launch_without_a_description_or_in_string_content_starts_no_agent() -> None:
    b = TranscriptBuilder(seed=5)
    b.user("Launch")
    result = background_agent_result("a1", "Research", "look")
    del result["description"]
    b.tool_call("Agent", {"prompt": "look"}, "launched", tool_use_result=result)
    b.user("a text", toolUseResult=background_agent_result("a2", "Research", "look"))
    assert may_start_shells(b.to_bytes())
    assert agents(b) == ()
