"""The deterministic appendix: file operations, latest validation outcomes, active work."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pipeline.agents.claude_code.chain_evidence import extract_evidence
from pipeline.core.index import build_index
from pipeline.summarize import (
    APPENDIX_MARKER,
    ActiveWorkKind,
    CommandOutcome,
    DeterministicState,
    EvidenceItem,
    FileAction,
    collect_state,
    render_appendix,
    strip_appendix,
)
from pipeline.summarize.checkpoint.appendix import parse_appendix
from pipeline.summarize.evidence.references import collect_references
from pipeline.testing import TranscriptBuilder
from pipeline.testing.settings import LIMITS as LINE_LIMITS
from pipeline.vocabulary import SourceFormat

LIMITS = {
    "max_file_operations": 64,
    "max_validation_records": 32,
    "max_active_work_records": 32,
    "max_command_chars": 600,
    "max_references": 64,
}


def items_of(b: TranscriptBuilder) -> tuple[EvidenceItem, ...]:
    data = b.to_bytes()
    index = build_index(data, SourceFormat.CLAUDE_CODE, LINE_LIMITS)
    return extract_evidence(data, index, range(1, len(index) + 1))


def test_file_operations_read_versus_modified() -> None:
    b = TranscriptBuilder(seed=1)
    b.tool_call("Read", {"file_path": "/r/a.py"}, "x")
    b.tool_call("Glob", {"pattern": "**/*.md", "path": "/r/docs"}, "x")
    b.tool_call("Grep", {"pattern": "TODO", "path": "/r/src"}, "x")
    b.tool_call("Edit", {"file_path": "/r/a.py", "old_string": "a", "new_string": "b"}, "ok")
    b.tool_call("Write", {"file_path": "/r/new.py", "content": ""}, "ok")
    b.tool_call("NotebookEdit", {"notebook_path": "/r/n.ipynb", "new_source": ""}, "ok")
    b.tool_call("MultiEdit", {"file_path": "/r/never.py", "edits": []}, "not found", is_error=True)
    b.tool_call("Bash", {"command": "cat notes.txt && echo x >> log.txt"}, "")
    state = collect_state(items_of(b))
    found = {op.path: (op.action, op.tools) for op in state.file_operations}
    assert found == {
        "/r/docs/**/*.md": (FileAction.READ, ("Glob",)),
        "/r/src": (FileAction.READ, ("Grep",)),
        "/r/a.py": (FileAction.MODIFIED, ("Read", "Edit")),
        "/r/new.py": (FileAction.MODIFIED, ("Write",)),
        "/r/n.ipynb": (FileAction.MODIFIED, ("NotebookEdit",)),
        "notes.txt": (FileAction.READ, ("Bash",)),
        "log.txt": (FileAction.MODIFIED, ("Bash",)),
    }
    first = next(op for op in state.file_operations if op.path == "/r/a.py")
    assert first.lines == (1, 7)  # cites the Read call's line and the Edit call's


def test_validation_keeps_the_latest_run_of_each_exact_command() -> None:
    b = TranscriptBuilder(seed=2)
    b.tool_call("Bash", {"command": "pytest -q"}, "Exit code 1\nFAILED", is_error=True)
    b.tool_call("Bash", {"command": "npm test"}, "ok")
    b.tool_call("Bash", {"command": "ls"}, "a b")
    b.tool_call("Bash", {"command": "pytest -q"}, "5 passed")
    last = b.line_count
    b.tool_call("Bash", {"command": "pytest -q tests/a.py"}, "Exit code 1\nE", is_error=True)
    state = collect_state(items_of(b))
    assert [(r.command, r.outcome) for r in state.validations] == [
        ("npm test", CommandOutcome.PASSED),
        ("pytest -q", CommandOutcome.PASSED),
        ("pytest -q tests/a.py", CommandOutcome.FAILED),
    ]
    assert state.validations[1].lines == (last - 1, last)
    text = render_appendix(state, **LIMITS)
    assert f"- passed: pytest -q (L{last - 1}, L{last})" in text
    assert "- passed: ls" not in text  # only validation commands are listed in the appendix


def test_each_section_keeps_its_newest_records_with_an_omission_marker() -> None:
    b = TranscriptBuilder(seed=3)
    for name in ("a", "b", "c"):
        b.tool_call("Bash", {"command": f"make {name}"}, "ok")
    text = render_appendix(collect_state(items_of(b)), **{**LIMITS, "max_validation_records": 2})
    section = text.split("## Validation\n", 1)[1].split("\n\n", 1)[0].split("\n")
    assert section == [
        "- ... 1 older records omitted",
        "- passed: make b (L3, L4)",
        "- passed: make c (L5, L6)",
    ]


def test_active_work_tracks_background_shells_subagents_todos_and_tasks() -> None:
    b = TranscriptBuilder(seed=4)
    b.tool_call(
        "Bash",
        {"command": "npm run dev", "run_in_background": True},
        "Command running in background with ID: aaa111",
    )
    b.tool_call(
        "Bash",
        {"command": "mix test", "run_in_background": True},
        "Command running in background with ID: bbb222. Output is being written to: /tmp/x",
    )
    b.user(
        "<task-notification>\n<task-id>bbb222</task-id>\n<status>completed</status>\n"
        '<summary>Background command "mix test" completed (exit code 1)</summary>\n</task-notification>'
    )
    b.tool_call(
        "Bash",
        {"command": "sleep 100", "run_in_background": True},
        "Command running in background with ID: ccc333",
    )
    b.tool_call("KillShell", {"shell_id": "ccc333"}, '{"message":"Successfully killed shell: ccc333"}')
    b.tool_call("Task", {"description": "Explore repo", "subagent_type": "Explore", "prompt": "p"}, "report")
    b.assistant(b.tool_use("Task", {"description": "Audit deps", "subagent_type": "general", "prompt": "p"}))
    b.tool_call(
        "TodoWrite",
        {
            "todos": [
                {"content": "Wire CLI", "status": "in_progress"},
                {"content": "Docs", "status": "pending"},
            ]
        },
        "ok",
    )
    b.tool_call("TaskCreate", {"subject": "Research plan mode"}, "Task #1 created successfully: Research")
    b.tool_call("TaskCreate", {"subject": "Finished thing"}, "Task #2 created successfully: Finished")
    b.tool_call("TaskUpdate", {"taskId": "2", "status": "completed"}, "Updated task #2 status")
    state = collect_state(items_of(b))
    work = [(w.kind, w.id, w.state, w.label) for w in state.active_work]
    assert work == [
        (ActiveWorkKind.BACKGROUND_SHELL, "aaa111", "running", "npm run dev"),
        (ActiveWorkKind.SUBAGENT, work[1][1], "running", "Audit deps"),
        (ActiveWorkKind.TODO, "#1", "in_progress", "Wire CLI"),
        (ActiveWorkKind.TASK, "1", "pending", "Research plan mode"),
    ]
    mix = next(r for r in state.commands if r.command == "mix test")
    assert mix.outcome is CommandOutcome.FAILED  # resolved by the notification's exit code
    sleep = next(r for r in state.commands if r.command == "sleep 100")
    assert sleep.outcome is CommandOutcome.CANCELED


def test_strip_appendix_removes_it_and_is_idempotent() -> None:
    body = "<!-- session-compaction checkpoint v1 -->\n\n## Goal\n- x (L1)"
    text = body + "\n\n" + render_appendix(DeterministicState(), **LIMITS) + "\n"
    assert text.count(APPENDIX_MARKER) == 1
    assert strip_appendix(text) == body
    assert strip_appendix(strip_appendix(text)) == body
    assert strip_appendix(body) == body
    assert strip_appendix(body + "\n## File operations\n- read a via Read (L1)") == body


@pytest.mark.parametrize("limit", [1, 64])
def test_a_rendered_appendix_reads_back_into_the_same_records(limit: int) -> None:
    b = TranscriptBuilder(seed=5)
    b.tool_call("Edit", {"file_path": "/p/a b.py"}, "ok")
    b.tool_call("Bash", {"command": "pytest -q\n  -x"}, "Exit code 1\nE", is_error=True)
    b.tool_call(
        "Bash",
        {"command": "npm run dev", "run_in_background": True},
        "Command running in background with ID: zz9",
    )
    state = collect_state(items_of(b))
    text = render_appendix(state, **{**LIMITS, "max_file_operations": limit})
    back = parse_appendix(text, 7)
    files = [(op.path, op.action, op.lines) for op in back.file_operations]
    assert files == [("/p/a b.py", FileAction.MODIFIED, (7,))]
    assert [(r.command, r.outcome) for r in back.commands] == [("pytest -q\n  -x", CommandOutcome.FAILED)]
    assert [(w.kind, w.id, w.label) for w in back.active_work] == [
        (ActiveWorkKind.BACKGROUND_SHELL, "zz9", "npm run dev")
    ]
    again = collect_state((), [back])
    assert render_appendix(again, **LIMITS) == render_appendix(
        collect_state((), [parse_appendix(render_appendix(again, **LIMITS), 7)]), **LIMITS
    )


def test_identifiers_are_listed_and_read_back_as_the_oldest_records() -> None:
    b = TranscriptBuilder(seed=31)
    b.user("Release v2.3 to https://example.com/releases and close #77")
    state = replace(collect_state(items_of(b)), references=collect_references(items_of(b)))
    text = render_appendix(state, **LIMITS)
    assert "- url https://example.com/releases (L1)" in text
    again = parse_appendix(text, 9)
    assert [(r.kind, r.value, r.line) for r in again.references] == [
        ("url", "https://example.com/releases", 9),
        ("issue", "#77", 9),
        ("version", "v2.3", 9),
    ]
