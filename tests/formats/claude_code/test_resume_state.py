"""The resume state a compaction carries: attachment records Claude Code folds, tools it loaded.

Builder sessions only; the real Claude Code deriving the same reminders and tool definitions from
a candidate is in tests/jobs/test_resume_gate_state.py.
"""

from __future__ import annotations

from pipeline.formats.claude_code.resume_state import discovered_tools, resume_state
from pipeline.testing.builder import TranscriptBuilder
from pipeline.vocabulary import StateAttachment
from tests.support.resolved import Resolved, resolve


def rows(session: Resolved) -> list[tuple[int, bytes]]:
    return [(line, session.index.raw_line(session.data, line)) for line in session.chain]


def test_every_delta_record_is_carried_and_only_the_newest_snapshot_of_a_kind() -> None:
    b = TranscriptBuilder(seed=2)
    b.attachment("deferred_tools_delta", addedNames=["WebFetch"], addedLines=["WebFetch"], removedNames=[])
    b.attachment("date", date="2026-11-30")
    b.user("hello")
    b.attachment("deferred_tools_delta", addedNames=[], addedLines=[], removedNames=["WebFetch"])
    b.attachment("date", date="2026-12-01")
    b.attachment("todo_reminder", content=[], itemCount=0)  # a cadence: never carried
    b.assistant(b.text("hi"))
    b.last_prompt()
    session = resolve(b.to_bytes())
    state = resume_state(rows(session))
    assert [record.kind for record in state] == [
        StateAttachment.DEFERRED_TOOLS_DELTA,
        StateAttachment.DEFERRED_TOOLS_DELTA,
        StateAttachment.DATE,
    ]
    newest_date = state[-1].line
    assert b'"2026-12-01"' in session.index.raw_line(session.data, newest_date)


def test_a_sidechain_attachment_is_no_state_of_the_session() -> None:
    b = TranscriptBuilder(seed=2)
    b.user("hello")
    with b.sidechain():
        b.attachment("deferred_tools_delta", addedNames=["X"], addedLines=["X"], removedNames=[])
    b.assistant(b.text("hi"))
    session = resolve(b.to_bytes())
    lines = [(n, session.index.raw_line(session.data, n)) for n in range(1, len(session.index) + 1)]
    assert resume_state(lines) == ()


def test_the_tools_a_span_loaded_are_its_tool_references_and_a_prior_boundarys() -> None:
    b = TranscriptBuilder(seed=2, version="2.1.39")
    b.user("load the tools")
    b.tool_call(
        "ToolSearch",
        {"query": "select:WebFetch,TaskCreate"},
        [
            {"type": "tool_reference", "tool_name": "WebFetch"},
            {"type": "tool_reference", "tool_name": "TaskCreate"},
        ],
    )
    b.assistant(b.text("loaded"))
    b.last_prompt()
    session = resolve(b.to_bytes())
    assert discovered_tools(rows(session)) == ("TaskCreate", "WebFetch")
    boundary = (
        b'{"type":"system","subtype":"compact_boundary","compactMetadata":'
        b'{"trigger":"auto","preTokens":9,"preCompactDiscoveredTools":["Monitor","WebFetch"]}}'
    )
    assert discovered_tools([(1, boundary), *rows(session)]) == ("Monitor", "TaskCreate", "WebFetch")
    assert discovered_tools([(1, b'{"type":"user","message":{"content":"tool_reference"}}')]) == ()
