"""Gemini CLI through the seam the generic jobs drive: read, count, cut, evidence, compose, the
re-read check, the excluded texts and the real Gemini CLI's verdict, over the real client's files."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.agents.gemini_cli import GEMINI_CLI
from pipeline.agents.gemini_cli.gemini_session import GeminiSession
from pipeline.formats.line_guard import LineLimits
from pipeline.summarize.evidence.items import EvidenceKind
from pipeline.vocabulary import PartitionSet, SessionKind, SourceFormat
from tests.support.gemini_files import FIXTURES, LEGACY_CORPUS, fixture, gemini_cli, rewound_and_reappended

LIMITS = LineLimits(64 << 20, 256)
SUMMARY = "<state_snapshot>\nthe work so far\n</state_snapshot>"


def _read(path: Path) -> GeminiSession:
    return GEMINI_CLI.read(path.read_bytes(), path, LIMITS)


def test_a_session_reads_validates_and_counts_through_the_seam() -> None:
    session = _read(fixture("tools.jsonl"))
    assert GEMINI_CLI.format is SourceFormat.GEMINI_CLI and session.kind is SessionKind.MAIN
    assert session.resumable and session.findings == ()
    assert session.context_section(123).items == len(session.sent())
    billed = session.billed()
    assert billed.events == 8 and billed.input == 80  # the scripted model's 8 replies, 10 input tokens each
    assert _read(fixture("rewound.jsonl")).billed().events == 3  # the rewound reply was billed too
    tallies = session.class_tallies(GEMINI_CLI.estimator, {"words": lambda text: len(text.split())})
    assert ("tool_use", "read_file") in tallies.sent and ("tool_result", "read_file") in tallies.sent
    assert tallies.file[("human", None)].items >= tallies.sent[("human", None)].items


@pytest.mark.parametrize(
    "path", [*sorted(FIXTURES.glob("*.json*")), LEGACY_CORPUS], ids=lambda p: p.name[-30:]
)
def test_the_whole_file_costs_at_least_what_a_resume_sends(path: Path) -> None:
    """Every message version with its tool calls and results: a file never counts fewer tokens
    than the history it resumes to (a legacy chat's tool results live in its calls)."""
    session = _read(path)
    assert session.file_tokens() >= sum(item.tokens for item in session.sent()) > 0


def test_the_compaction_checks_as_the_generic_job_checks_it() -> None:
    session = _read(fixture("tools.jsonl"))
    plan = session.plan_tail(room=60)
    assert plan is not None
    evidence = session.evidence(plan)
    assert {EvidenceKind.HUMAN_PROMPT, EvidenceKind.TOOL_CALL, EvidenceKind.TOOL_RESULT} <= {
        e.kind for e in evidence
    }
    assert any(e.is_error for e in evidence if e.kind is EvidenceKind.TOOL_RESULT)  # the missing file
    candidate = session.compose(plan, SUMMARY)
    reread = GEMINI_CLI.read(candidate, None, LIMITS)
    assert reread.sent()[0] == session.summary_sent(SUMMARY)
    assert list(reread.sent()[1:]) == list(session.sent()[plan.first_item :])
    assert SUMMARY.split("\n")[1].encode() in candidate.splitlines()[session.summary_line() - 1]


def test_texts_only_rewound_lines_held_are_found_in_a_candidate_that_sends_them(tmp_path: Path) -> None:
    original = tmp_path / "rewound.jsonl"
    original.write_bytes(rewound_and_reappended(fixture("tools.jsonl")))
    session = _read(original)
    sets = session.sweep_sets()
    leaking = original.read_bytes()  # the original itself holds the rewound prompt's text
    texts = {e.text for e in GEMINI_CLI.judge.excluded(session, sets, leaking, 8)}
    assert "thanks, that is all" in texts and "the first prompt, edited" not in texts
    plan = session.plan_tail(room=60)
    assert plan is not None
    candidate = session.compose(plan, SUMMARY)
    assert GEMINI_CLI.judge.excluded(session, session.compress_sets(plan), candidate, 8) == ()
    assert sets[PartitionSet.EXCLUDED_BRANCH]


def test_the_real_gemini_cli_judges_a_candidate_through_the_seam(tmp_path: Path) -> None:
    script = gemini_cli()
    assert GEMINI_CLI.judge.client.locate(script) == script
    session = _read(fixture("compressed.jsonl"))  # a session Gemini CLI compressed itself before
    plan = session.plan_tail(room=60)
    assert plan is not None
    candidate = tmp_path / "candidate.jsonl"
    candidate.write_bytes(session.compose(plan, SUMMARY))
    judged = GEMINI_CLI.judge.prove(
        fixture("compressed.jsonl"),
        candidate,
        executable=script,
        timeout=120,
        limits=LIMITS,
        excluded=(),
        summaries=[SUMMARY],
    )
    assert judged.ok, judged.section(0).differences
    section = judged.section(1.0)
    assert section.verdict == "match" and section.elapsed_ms == 1.0


def test_a_subagents_session_is_read_but_never_resumed(tmp_path: Path) -> None:
    session = _read(fixture("subagent-subagent.jsonl"))
    assert session.kind is SessionKind.SUBAGENT and not session.resumable
    assert session.findings == () and len(session.sent()) > 0
    nested = tmp_path / "chats" / "0657b303-3c5a-4c59-a76e-a73d26f2f9bb" / "session-x.jsonl"
    main = fixture("tools.jsonl")
    assert (
        GEMINI_CLI.read(main.read_bytes(), nested, LIMITS).kind is SessionKind.SUBAGENT
    )  # told by its folder
    assert _read(main).kind is SessionKind.MAIN


def test_a_missing_client_is_the_judges_own_error(tmp_path: Path) -> None:
    from pipeline.installed import JudgeError

    with pytest.raises(JudgeError) as raised:
        GEMINI_CLI.judge.client.locate(tmp_path / "nowhere")
    assert raised.value.code == "GeminiCliNotInstalled"
