"""The summarized span of a pi session as evidence: prompts, the agent's text, tool calls in the
summarizers' vocabulary, results with their failures, every item at its source line."""

from __future__ import annotations

from pipeline.agents.pi import PI
from pipeline.summarize.evidence.items import EvidenceKind
from tests.support.pi_files import FIXTURES, LIMITS


def test_the_whole_tools_session_as_evidence() -> None:
    session = PI.read((FIXTURES / "tools.jsonl").read_bytes(), None, LIMITS)
    plan = session.plan_tail(room=0)
    assert plan is not None and not plan.target_met  # nothing fits in no room: the smallest safe tail
    evidence = session.evidence(plan)
    prompts = [item.text for item in evidence if item.kind is EvidenceKind.HUMAN_PROMPT]
    assert prompts[:2] == ["Look at the project and read notes.txt", "Run the check script"]
    calls = [
        (item.tool_name, dict(item.tool_input)) for item in evidence if item.kind is EvidenceKind.TOOL_CALL
    ]
    assert ("Bash", {"command": "ls"}) in calls and ("Read", {"file_path": "notes.txt"}) in calls
    failed = [item for item in evidence if item.kind is EvidenceKind.TOOL_RESULT and item.is_error]
    assert [item.tool_id for item in failed] == ["call_check"]
    lines = [item.line for item in evidence]
    assert lines == sorted(lines) and all(line > 1 for line in lines)


def test_a_prior_compaction_is_a_prior_summary() -> None:
    session = PI.read((FIXTURES / "compacted.jsonl").read_bytes(), None, LIMITS)
    plan = session.plan_tail(room=0)
    assert plan is not None
    kinds = [item.kind for item in session.evidence(plan)]
    assert kinds[0] is EvidenceKind.PRIOR_SUMMARY
