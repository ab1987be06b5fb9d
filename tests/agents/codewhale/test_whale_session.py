"""A CodeWhale session through the seam: the summarized span as the summarizers' evidence, its
tallies by content class, and the kind a sub-agent's session is."""

from __future__ import annotations

import json

from pipeline.agents.codewhale import CODEWHALE
from pipeline.formats.codewhale.whale_markers import checkpoint_message
from pipeline.formats.line_guard import LineLimits
from pipeline.summarize.evidence.items import EvidenceKind
from pipeline.vocabulary import SessionKind
from tests.support.codewhale_sessions import SessionBuilder, call, result, text

LIMITS = LineLimits(max_line_bytes=1 << 24, max_json_depth=200)


def _session() -> SessionBuilder:
    session = SessionBuilder()
    session.add(json.loads(checkpoint_message("an earlier summary", None).json))  # its current form
    for turn in range(3):
        session.extend(
            [
                text("user", f"step {turn} " + "please " * 100),
                call(f"c{turn}", arguments={"command": f"make {turn}"}),
                result(f"c{turn}", "log\n" * 500, error=turn == 0),
                text("assistant", f"done {turn}"),
            ]
        )
    return session


def test_the_summarized_span_is_evidence_citing_its_records() -> None:
    read = CODEWHALE.read(_session().bytes(), None, LIMITS)
    plan = read.plan_tail(room=300)
    assert plan is not None and plan.first_item > 5
    evidence = read.evidence(plan)
    assert [(e.line, e.kind) for e in evidence[:5]] == [
        (1, EvidenceKind.PRIOR_SUMMARY),
        (2, EvidenceKind.HUMAN_PROMPT),
        (3, EvidenceKind.TOOL_CALL),
        (4, EvidenceKind.TOOL_RESULT),
        (5, EvidenceKind.ASSISTANT_TEXT),
    ]
    shell = evidence[2]
    assert (shell.tool_name, shell.tool_id, dict(shell.tool_input)) == ("Bash", "c0", {"command": "make 0"})
    assert evidence[3].is_error and evidence[3].tool_id == "c0"
    assert max(e.line for e in evidence) < plan.cut_line


def test_the_tallies_class_each_block_and_name_the_tool_of_each_result() -> None:
    read = CODEWHALE.read(_session().bytes(), None, LIMITS)
    tallies = read.class_tallies(CODEWHALE.estimator, {"chars": len})
    assert tallies.sent[("summary", None)].items == 2  # the note and its provenance block
    assert tallies.sent[("tool_result", "exec_shell")].items == 3
    assert tallies.sent[("tool_result", None)].tokens["chars"] == 3 * len("log\n" * 500)
    total = sum(t.tokens[CODEWHALE.estimator] for (_, name), t in tallies.sent.items() if name is None)
    assert total == sum(item.tokens for item in read.sent())


def test_a_spawned_agents_session_is_a_subagent() -> None:
    document = _session().document()
    document["metadata"]["spawn_depth"] = 1
    assert CODEWHALE.read(json.dumps(document).encode(), None, LIMITS).kind is SessionKind.SUBAGENT
    assert CODEWHALE.read(_session().bytes(), None, LIMITS).kind is SessionKind.MAIN
